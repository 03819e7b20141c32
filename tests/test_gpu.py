"""The gpu plugin: devices, kernels, copies and placement on cupy.

The first tests run everywhere: the plugin imports without cupy, registers nothing and says why.
The rest need cupy and a CUDA device and are skipped, with the reason, where there is none (CI).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.cli import describe_plugins
from tensorweave.engine import errors, plugin_manager
from tensorweave.engine.registry import KernelRegistry
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.plugins import gpu
from tensorweave.plugins.gpu import copies, cuda, devices, kernels
from tensorweave.plugins.kernels import device_kernel_modules
from tests.plugin_dist import install_plugin

STATUS = cuda.probe()
needs_gpu = pytest.mark.skipif(not STATUS.available,
                               reason=f"needs cupy and a CUDA device: {STATUS.reason}")
without_gpu = pytest.mark.skipif(STATUS.available, reason="a CUDA device is present")
CPU_ONLY = tf.ConfigProto(device_count={"GPU": 0})
TRACE = tf.RunOptions(output_partition_graphs=True)

CPU_ONLY_OP = '''
import tensorweave as tw
from tensorweave.engine.op_def import REQUIRED


@tw.hookimpl
def tensorweave_register_ops(registry):
    registry.op("CpuOnlyTwice", ["x:T"], infer=lambda ctx: [ctx.inputs[0]],
                attrs={"T": REQUIRED})


@tw.hookimpl
def tensorweave_register_kernels(registry):
    registry.add("CpuOnlyTwice", "CPU", lambda ctx, x: x * ctx.xp.asarray(2, x.dtype))
'''


def gpu_section(registries) -> list[str]:
    lines = describe_plugins(registries)
    start = next(i for i, line in enumerate(lines) if line.startswith("gpu "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")),
               len(lines))
    return lines[start:end]


def run_traced(fetch, feeds=None, config=None):
    """The fetched values and, per node name, the device it ran on."""
    meta = tf.RunMetadata()
    with tf.Session(config=config) as sess:
        out = sess.run(fetch, feeds, options=TRACE, run_metadata=meta)
    return out, placements(meta)


def placements(meta):
    return {n.name: n.device for g in meta.partition_graphs for n in g.node}


def recv_devices(meta):
    return {n.device.rsplit("/", 1)[-1] for g in meta.partition_graphs for n in g.node
            if n.op == "_Recv"}


# -- everywhere ---------------------------------------------------------------------------------


def test_select_ordinals_follows_visible_device_list_and_device_count():
    def config(visible="", **count):
        return tf.ConfigProto(device_count=count,
                              gpu_options=tf.GPUOptions(visible_device_list=visible))

    assert devices.select_ordinals(3, config()) == [0, 1, 2]
    assert devices.select_ordinals(3, None) == [0, 1, 2]
    assert devices.select_ordinals(3, config("2, 0")) == [2, 0]
    assert devices.select_ordinals(3, config("2,0", GPU=1)) == [2]
    assert devices.select_ordinals(3, config(GPU=0)) == []
    with pytest.raises(errors.InvalidArgumentError, match="invalid GPU id '3'.*count is 3"):
        devices.select_ordinals(3, config("0,3"))
    with pytest.raises(errors.InvalidArgumentError, match="invalid GPU id 'x'"):
        devices.select_ordinals(3, config("x"))
    with pytest.raises(errors.InvalidArgumentError, match="duplicate entry: 1,1"):
        devices.select_ordinals(3, config("1,1"))


def test_plugin_note_matches_what_cuda_offers():
    note = gpu.tensorweave_plugin_status()
    if STATUS.available:
        assert note.startswith("cupy ") and STATUS.device_names[0] in note
    elif importlib.util.find_spec("cupy") is None:
        assert note == "cupy is not installed"
    else:
        assert note.startswith(("no CUDA device visible: ", "cupy failed to import: "))


def test_gpu_kernels_mirror_every_cpu_kernel_within_cupy_dtype_limits():
    registry = KernelRegistry()
    for module in device_kernel_modules():
        module.register(registry.bind("cpu"), "CPU")
    kernels.register_kernels(registry.bind("gpu"))
    registry.freeze()
    by_device = {"CPU": {}, "GPU": {}}
    for k in registry.all():
        by_device[k.device_type][k.op] = k
    assert set(by_device["GPU"]) == set(by_device["CPU"]) and len(by_device["GPU"]) > 100
    for op, on_gpu in by_device["GPU"].items():
        on_cpu = by_device["CPU"][op]
        assert (on_gpu.expensive, on_gpu.is_async, on_gpu.needs_step) == (
            on_cpu.expensive, on_cpu.is_async, on_cpu.needs_step), op
        assert on_gpu.fn.__wrapped__.__qualname__ == on_cpu.fn.__qualname__
        limit = kernels.GPU_DTYPES.get(op, kernels.DEVICE_DTYPES)
        assert on_gpu.dtypes == (limit if on_cpu.dtypes is None else limit & on_cpu.dtypes), op
    assert registry.lookup("Identity", "GPU", tf.string) is None
    assert registry.lookup("Identity", "CPU", tf.string) is not None
    assert registry.lookup("UnsortedSegmentSum", "GPU", tf.int64) is None
    assert registry.lookup("UnsortedSegmentSum", "CPU", tf.int64) is not None
    assert registry.lookup("UnsortedSegmentMax", "GPU", tf.float32) is not None
    assert registry.lookup("UnsortedSegmentMax", "GPU", tf.float16) is None


@without_gpu
def test_without_cuda_no_device_no_kernel_and_the_listing_says_why():
    assert gpu.tensorweave_devices(task=TaskSpec(), config=tf.ConfigProto()) == []
    registries = plugin_manager.get_registries()
    assert not [k for k in registries.kernels.all() if k.device_type == "GPU"]
    section = gpu_section(registries)
    assert section[0].split()[2] == "[loaded]"
    assert "    devices: none" in section
    assert f"    note: {STATUS.reason}" in section
    assert not any("kernels[GPU]" in line for line in section)
    cpu0, cpu1 = (Device.create(TaskSpec(), "CPU", i, np) for i in range(2))
    assert gpu.tensorweave_copy_tensor(src=cpu0, dst=cpu1, value=np.ones(2)) is None


@without_gpu
def test_without_cuda_a_gpu_request_falls_back_softly_or_fails_clearly():
    x = tf.placeholder(tf.float32, [2])
    with tf.device("/gpu:0"):
        y = x * 2.0
    soft = tf.ConfigProto(allow_soft_placement=True)
    out, placed = run_traced(y, {x: [1.0, 2.0]}, soft)
    np.testing.assert_array_equal(out, [2.0, 4.0])
    assert placed[y.op.name].endswith("/device:CPU:0")
    with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match="GPU"):
        sess.run(y, {x: [1.0, 2.0]})


# -- on a GPU -----------------------------------------------------------------------------------

RNG = np.random.default_rng(0)
F = RNG.standard_normal((3, 4)).astype(np.float32)
G = RNG.standard_normal((3, 4)).astype(np.float32)
POS = (np.abs(F) + 0.5).astype(np.float32)
INTS = RNG.integers(-5, 5, (3, 4)).astype(np.int32)
NZ = RNG.integers(1, 5, (3, 4)).astype(np.int32)
B = F > 0
IMG = RNG.standard_normal((2, 5, 5, 3)).astype(np.float32)
FILTER = RNG.standard_normal((3, 3, 3, 2)).astype(np.float32)
LABELS = np.array([3, 0, 1], np.int32)
PROBS = np.full((3, 4), 0.25, np.float32)

# (case id, builder over the input tensors, inputs): every standard kernel module, small graphs.
CASES = [
    ("add", tf.add, [F, G]),
    ("subtract_broadcast", lambda x, y: x - y, [F, G[0]]),
    ("multiply_int", lambda x, y: x * y, [INTS, NZ]),
    ("truediv", lambda x, y: x / y, [F, POS]),
    ("add_half", tf.add, [F.astype(np.float16), G.astype(np.float16)]),
    ("floordiv", lambda x, y: tf.floordiv(x, y), [INTS, NZ]),
    ("floormod", lambda x, y: tf.floormod(x, y), [INTS, NZ]),
    ("pow", lambda x, y: tf.pow(x, y), [POS, G]),
    ("squared_difference", lambda x, y: tf.squared_difference(x, y), [F, G]),
    ("maximum", lambda x, y: tf.maximum(x, y), [F, G]),
    ("minimum_int", lambda x, y: tf.minimum(x, y), [INTS, NZ]),
    *[(name, lambda x, name=name: getattr(tf, name)(x), [POS if name in (
        "log", "log1p", "sqrt", "rsqrt") else F])
      for name in ("abs", "negative", "exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos",
                   "tanh", "sigmoid", "sign", "round", "floor", "ceil", "square", "erf")],
    ("equal", lambda x, y: tf.equal(x, y), [INTS, NZ]),
    ("less", lambda x, y: tf.less(x, y), [F, G]),
    ("greater_equal", lambda x, y: tf.greater_equal(x, y), [INTS, NZ]),
    ("logical_and", lambda x, y: tf.logical_and(x, y), [B, ~B[::-1]]),
    ("logical_not", lambda x: tf.logical_not(x), [B]),
    ("cast", lambda x: tf.cast(x * 10.0, tf.int32), [F]),
    ("reduce_sum_axis", lambda x: tf.reduce_sum(x, axis=1), [F]),
    ("reduce_mean_keepdims", lambda x: tf.reduce_mean(x, axis=0, keepdims=True), [F]),
    ("reduce_max_all", lambda x: tf.reduce_max(x), [F]),
    ("reduce_prod_int", lambda x: tf.reduce_prod(x, axis=1), [NZ]),
    ("argmax", lambda x: tf.argmax(x, axis=1), [F]),
    ("argmin", lambda x: tf.argmin(x, axis=0), [F]),
    ("matmul", lambda a, b: tf.matmul(a, b), [F, G.T.copy()]),
    ("matmul_transposed", lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
     [F, G.T.copy()]),
    ("batch_matmul", lambda a, b: tf.matmul(a, b), [np.stack([F, G]), np.stack([G.T, F.T])]),
    ("reshape", lambda x: tf.reshape(x, [4, 3]), [F]),
    ("transpose", lambda x: tf.transpose(x), [F]),
    ("concat", lambda x, y: tf.concat([x, y], axis=1), [F, G]),
    ("stack", lambda x, y: tf.stack([x, y], axis=1), [F, G]),
    ("unstack", lambda x: tf.unstack(x, axis=1), [F]),
    ("split", lambda x: tf.split(x, 2, axis=1), [F]),
    ("slice", lambda x: tf.slice(x, [1, 0], [2, 3]), [F]),
    ("strided_slice", lambda x: x[::-1, 1:3], [F]),
    ("expand_dims", lambda x: tf.expand_dims(x, 1), [F]),
    ("squeeze", lambda x: tf.squeeze(x, [1]), [F[:, None, :]]),
    ("tile", lambda x: tf.tile(x, [2, 1]), [F]),
    ("pad", lambda x: tf.pad(x, [[1, 0], [0, 2]]), [F]),
    ("gather", lambda x, i: tf.gather(x, i, axis=1), [F, np.array([3, 0, 0], np.int32)]),
    ("one_hot", lambda i: tf.one_hot(i, 5), [LABELS]),
    ("where", lambda c, x, y: tf.where(c, x, y), [B, F, G]),
    ("fill", lambda dims: tf.fill(dims, 2.5), [np.array([2, 3], np.int32)]),
    ("zeros_like", lambda x: tf.zeros_like(x), [F]),
    ("ones_like", lambda x: tf.ones_like(x), [INTS]),
    ("range", lambda n: tf.range(n), [np.array(5, np.int32)]),
    ("add_n", lambda x, y: tf.add_n([x, y, x]), [F, G]),
    ("cumsum", lambda x: tf.cumsum(x, axis=1), [F]),
    ("clip_by_value", lambda x: tf.clip_by_value(x, -0.5, 0.5), [F]),
    *[(f"nn.{name}", lambda x, name=name: getattr(tf.nn, name)(x), [F])
      for name in ("relu", "relu6", "elu", "selu", "softplus", "softsign", "leaky_relu",
                   "softmax", "log_softmax", "sigmoid", "l2_loss")],
    ("nn.softmax_half", lambda x: tf.nn.softmax(x), [F.astype(np.float16)]),
    ("nn.softmax_xent", lambda x, y: tf.nn.softmax_cross_entropy_with_logits(
        labels=y, logits=x), [F, PROBS]),
    ("nn.sparse_softmax_xent", lambda x, y: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=x), [F, LABELS]),
    ("nn.bias_add", lambda x, b: tf.nn.bias_add(x, b), [F, G[0]]),
    ("nn.conv2d_same", lambda x, k: tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"), [IMG, FILTER]),
    ("nn.conv2d_valid_strided", lambda x, k: tf.nn.conv2d(x, k, [1, 2, 2, 1], "VALID"),
     [IMG, FILTER]),
    ("nn.max_pool", lambda x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"), [IMG]),
    ("nn.avg_pool", lambda x: tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"), [IMG]),
    ("nn.top_k", lambda x: tf.nn.top_k(x, 2), [F]),
    ("nn.in_top_k", lambda x, t: tf.nn.in_top_k(x, t, 2), [F, LABELS]),
    ("random_normal", lambda: tf.random_normal([3, 4], seed=1), []),
    ("random_uniform", lambda: tf.random_uniform([3, 4], seed=2), []),
    ("truncated_normal", lambda: tf.truncated_normal([3, 4], seed=3), []),
    ("nn.dropout", lambda x: tf.nn.dropout(x, rate=0.5, seed=4), [F]),
    ("nn.depthwise_conv2d", lambda x, k: tf.nn.depthwise_conv2d(x, k, [1, 1, 1, 1], "SAME"),
     [IMG, FILTER[:, :, :, :1].copy()]),
    ("unsorted_segment_sum", lambda x: tf.unsorted_segment_sum(x, [0, 2, 0], 3), [F]),
    ("segment_max", lambda x: tf.segment_max(x, [0, 0, 1]), [F]),
    ("scatter_nd", lambda u: tf.scatter_nd([[1], [3], [1]], u, [5, 4]), [F]),
    ("tensor_scatter_update", lambda x, u: tf.tensor_scatter_update(x, [[2], [0]], u),
     [F, G[:2].copy()]),
    ("tensor_scatter_add", lambda x, u: tf.tensor_scatter_add(x, [[2], [2]], u),
     [F, G[:2].copy()]),
    ("sparse_dense_matmul", lambda b: tf.sparse_tensor_dense_matmul(
        tf.SparseTensor([[0, 1], [2, 3], [2, 0]], [1.5, -2.0, 0.5], [3, 4]), b), [G.T.copy()]),
    ("sparse_reduce_sum", lambda v: tf.sparse_reduce_sum(
        tf.SparseTensor([[0, 1], [2, 3]], v, [3, 4]), axis=1), [F[0, :2].copy()]),
    ("sparse_to_dense", lambda v: tf.sparse_tensor_to_dense(
        tf.SparseTensor([[0, 1], [2, 3]], v, [3, 4])), [F[0, :2].copy()]),
    ("cond", lambda x: tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0), [F]),
    ("while_loop", lambda x: tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 1.5),
                                           [0, x])[1], [F]),
    ("switch_case", lambda x: tf.switch_case(tf.cast(tf.reduce_sum(x) > 0, tf.int32),
                                             [lambda: x * 2.0, lambda: x - 1.0]), [F]),
]

SQUARE = RNG.standard_normal((2, 3, 3)).astype(np.float32)
SPD = (SQUARE @ SQUARE.transpose(0, 2, 1) + 3 * np.eye(3)).astype(np.float32)
RHS = RNG.standard_normal((2, 3, 2)).astype(np.float32)
C64 = (F + 1j * G).astype(np.complex64)
VOL = RNG.standard_normal((1, 4, 4, 4, 2)).astype(np.float32)
VOL_FILTER = RNG.standard_normal((2, 2, 2, 2, 3)).astype(np.float32)
RGB = RNG.uniform(0, 1, (1, 4, 4, 3)).astype(np.float32)
U8 = RNG.integers(0, 256, (3, 4)).astype(np.uint8)
SORTED = np.sort(F, axis=1)
SEQS = RNG.integers(0, 5, (3, 2, 2)).astype(np.int32)


def sparse(values, dense_shape=(3, 4)):
    """A SparseTensor with entries at fixed positions of a [3, 4] matrix."""
    return tf.SparseTensor([[0, 1], [0, 3], [2, 0], [2, 2]], values, dense_shape)


# The kernel modules added after the first GPU sweep: one or two ops of each.
NEW_CASES = [
    ("linalg.inv", tf.linalg.inv, [SPD]),
    ("linalg.cholesky", tf.cholesky, [SPD]),
    ("linalg.det", tf.matrix_determinant, [SPD]),
    ("linalg.slogdet", lambda x: list(tf.linalg.slogdet(x)), [SPD]),
    ("linalg.qr", lambda x: list(tf.qr(x)), [SQUARE]),
    ("linalg.svd_values", lambda x: tf.svd(x, compute_uv=False), [SQUARE]),
    ("linalg.eigvalsh", lambda x: tf.self_adjoint_eig(x)[0], [SPD]),
    ("linalg.solve", tf.matrix_solve, [SPD, RHS]),
    ("linalg.triangular_solve", tf.matrix_triangular_solve, [SPD, RHS]),
    ("linalg.lu", lambda x: list(tf.linalg.lu(x)), [SPD]),
    ("linalg.expm", tf.linalg.expm, [SQUARE.astype(np.float64) / 4]),
    ("linalg.einsum", lambda a, b: tf.einsum("bij,bjk->bik", a, b), [SPD, RHS]),
    ("linalg.band_part", lambda x: tf.matrix_band_part(x, 1, 0), [SQUARE]),
    ("linalg.diag_v2", lambda d: tf.linalg.diag(d, k=(-1, 0)), [F[:2]]),
    ("linalg.cross", tf.cross, [F[:, :3].copy(), G[:, :3].copy()]),
    ("spectral.fft", tf.signal.fft, [C64]),
    ("spectral.fft2d", tf.signal.fft2d, [C64]),
    ("spectral.rfft", tf.signal.rfft, [F]),
    ("spectral.irfft", tf.signal.irfft, [C64]),
    ("complex.complex_abs", lambda x, y: tf.abs(tf.complex(x, y)), [F, G]),
    ("complex.conj_imag", lambda z: tf.imag(tf.conj(z)), [C64]),
    ("bitwise.and", tf.bitwise.bitwise_and, [INTS, NZ]),
    ("bitwise.left_shift", tf.bitwise.left_shift, [U8, (U8 % 9).astype(np.uint8)]),
    ("bitwise.invert", tf.bitwise.invert, [U8]),
    ("bitwise.population_count", lambda x: tf.raw_ops.PopulationCount(x=x), [INTS]),
    ("nn3d.conv3d", lambda x, k: tf.nn.conv3d(x, k, [1, 1, 1, 1, 1], "SAME"),
     [VOL, VOL_FILTER]),
    ("nn3d.max_pool3d", lambda x: tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1],
                                                    "VALID"), [VOL]),
    ("nn3d.avg_pool3d", lambda x: tf.nn.avg_pool3d(x, [1, 3, 3, 3, 1], [1, 1, 1, 1, 1],
                                                    "SAME"), [VOL]),
    ("nn_extra.max_pool_with_argmax", lambda x: list(tf.nn.max_pool_with_argmax(
        x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")), [IMG]),
    ("nn_extra.dilation2d", lambda x, k: tf.nn.dilation2d(x, k, [1, 1, 1, 1], [1, 1, 1, 1],
                                                          "SAME"), [IMG, FILTER[:, :, :, 0]]),
    ("array_extra.space_to_depth", lambda x: tf.space_to_depth(x, 2), [IMG[:, :4, :4]]),
    ("array_extra.space_to_batch_nd", lambda x: tf.space_to_batch_nd(
        x, [2, 2], [[0, 1], [0, 1]]), [IMG]),
    ("array_extra.dynamic_partition", lambda x: tf.dynamic_partition(x, [1, 0, 1], 2), [F]),
    ("array_extra.dynamic_stitch", lambda x, y: tf.dynamic_stitch(
        [[0, 2, 4], [1, 3, 5]], [x, y]), [F, G]),
    ("array_extra.reverse_sequence", lambda x: tf.reverse_sequence(x, [1, 3, 2], 1, 0), [F]),
    ("array_extra.roll", lambda x: tf.roll(x, [1, -2], [0, 1]), [F]),
    ("array_extra.searchsorted", lambda s, v: tf.searchsorted(s, v), [SORTED, G]),
    ("array_extra.unique_with_counts", lambda x: list(tf.unique_with_counts(x)),
     [INTS.reshape(-1).copy()]),
    ("array_extra.unique", lambda x: list(tf.unique(x)), [F.reshape(-1).round(0)]),
    ("array_extra.setdiff1d", lambda x, y: list(tf.setdiff1d(x, y)),
     [INTS.reshape(-1).copy(), NZ[0].copy()]),
    ("array_extra.unravel_index", lambda i: tf.unravel_index(i, [3, 4]), [LABELS * 3]),
    ("array_extra.histogram_fixed_width", lambda x: tf.histogram_fixed_width(x, [-1.0, 1.0], 5),
     [F]),
    ("array_extra.bitcast", lambda x: tf.bitcast(x, tf.int32), [F]),
    ("image_color.rgb_to_hsv", tf.image.rgb_to_hsv, [RGB]),
    ("image_color.hsv_to_rgb", tf.image.hsv_to_rgb, [RGB]),
    ("image_color.adjust_hue", lambda x: tf.image.adjust_hue(x, 0.2), [RGB]),
    ("image_color.adjust_saturation", lambda x: tf.image.adjust_saturation(x, 1.5), [RGB]),
    ("image_resize.bicubic", lambda x: tf.image.resize_bicubic(x, [7, 3]), [IMG]),
    ("image_resize.area", lambda x: tf.image.resize_area(x, [3, 2]), [IMG]),
    ("image_resize.crop_and_resize", lambda x: tf.image.crop_and_resize(
        x, [[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 0.5]], [1, 0], [3, 3]), [IMG]),
    ("image_patches.extract", lambda x: tf.image.extract_image_patches(
        x, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME"), [IMG]),
    ("misc_ops.check_numerics", lambda x: tf.check_numerics(x, "bad"), [F]),
    ("seq2seq.gather_tree", lambda s, p: tf.raw_ops.GatherTree(
        step_ids=s, parent_ids=p, max_sequence_lengths=[3, 2], end_token=9),
     [SEQS, SEQS % 2]),
    ("special_math.lgamma", tf.lgamma, [POS]),
    ("special_math.digamma", tf.digamma, [POS]),
    ("special_math.igamma", tf.igamma, [POS, POS[::-1].copy()]),
    ("special_math.betainc", lambda a, b, x: tf.betainc(a, b, x),
     [POS, POS[::-1].copy(), PROBS * 2]),
    ("special_math.zeta", tf.zeta, [POS + 1, POS]),
    ("special_math.bessel_i0e", tf.math.bessel_i0e, [F]),
    ("sparse_segment.sum", lambda x: tf.sparse_segment_sum(x, [0, 2, 1], [0, 0, 1]), [F]),
    ("sparse_segment.sqrt_n", lambda x: tf.sparse_segment_sqrt_n(x, [0, 2, 2], [0, 1, 1]),
     [F]),
    ("sparse_extra.softmax", lambda v: tf.sparse_softmax(sparse(v)).values, [F[0].copy()]),
    ("sparse_extra.maximum", lambda v, w: tf.sparse_maximum(sparse(v), sparse(w)).values,
     [F[0].copy(), G[0].copy()]),
    ("sparse_extra.reduce_max", lambda v: tf.sparse_reduce_max(sparse(v), axis=1),
     [F[0].copy()]),
    ("random_distributions.gamma", lambda a: tf.random_gamma([2], a, seed=5), [POS[0].copy()]),
]
CASES += NEW_CASES

# kernels added with issues 13-18
CASES += [
    ("math.nextafter", lambda x, y: tf.math.nextafter(x, y), [F, G]),
    ("nn.max_pool_v2", lambda x: tf.raw_ops.MaxPoolV2(
        input=x, ksize=tf.constant([1, 2, 2, 1]), strides=tf.constant([1, 1, 1, 1]),
        padding="VALID"), [IMG]),
    ("nn.max_pool_depthwise", lambda x: tf.nn.max_pool(x[..., :2], [1, 1, 1, 2], [1, 1, 1, 2],
                                                       "VALID"), [IMG]),
    ("sparse_ops.sparse_dense_cwise_mul", lambda v, d: (sparse(v) * d).values,
     [F[0].copy(), G]),
    ("image.resize_bilinear", lambda x: tf.image.resize_bilinear(x, [7, 3]), [IMG]),
]


def assert_same(gpu_value, cpu_value):
    gpu_value, cpu_value = np.asarray(gpu_value), np.asarray(cpu_value)
    assert gpu_value.dtype == cpu_value.dtype and gpu_value.shape == cpu_value.shape
    if cpu_value.dtype.kind == "f":
        tol = 1e-2 if cpu_value.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(gpu_value, cpu_value, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(gpu_value, cpu_value)


@pytest.mark.parametrize("build, inputs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_every_gpu_case_runs_on_the_cpu(build, inputs):
    """The cases below compare GPU to CPU; here, without a GPU, each must build and give values
    of its tensors' dtypes and shapes, so a broken case shows before a GPU is at hand."""
    placeholders = [tf.placeholder(tf.as_dtype(a.dtype), a.shape) for a in inputs]
    out = build(*placeholders)
    outputs = list(out) if isinstance(out, (list, tuple)) else [out]
    values, placed = run_traced(outputs, dict(zip(placeholders, inputs)), CPU_ONLY)
    assert placed[outputs[0].op.name].endswith("/device:CPU:0")
    for tensor, value in zip(outputs, values, strict=True):
        value = np.asarray(value)
        assert value.dtype == tensor.dtype.as_numpy_dtype, tensor
        assert tensor.shape.is_compatible_with(value.shape), tensor
        if value.dtype.kind in "fc":
            assert np.isfinite(value).all(), tensor


@needs_gpu
@pytest.mark.parametrize("build, inputs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_every_standard_op_on_gpu_equals_cpu(build, inputs):
    placeholders = [tf.placeholder(tf.as_dtype(a.dtype), a.shape) for a in inputs]
    out = build(*placeholders)
    feeds = dict(zip(placeholders, inputs))
    on_cpu, _ = run_traced(out, feeds, CPU_ONLY)
    on_gpu, placed = run_traced(out, feeds)
    several = isinstance(out, (list, tuple))
    assert placed[(out[0] if several else out).op.name].endswith("/device:GPU:0")
    for got, want in zip(on_gpu, on_cpu) if several else [(on_gpu, on_cpu)]:
        assert_same(got, want)


@needs_gpu
def test_one_device_per_cuda_device_with_cupy_and_the_listing_shows_them():
    found = gpu.tensorweave_devices(task=TaskSpec(), config=tf.ConfigProto())
    assert [d.name for d in found] == [
        f"/job:localhost/replica:0/task:0/device:GPU:{i}" for i in range(len(STATUS.device_names))]
    assert all(d.xp is STATUS.cupy and d.device_type == "GPU" for d in found)
    section = gpu_section(plugin_manager.get_registries())
    assert any(line.startswith("    kernels[GPU]: ") for line in section)
    assert "    devices: " + ", ".join(f"GPU:{i}" for i in range(len(found))) in section
    assert gpu.tensorweave_devices(task=TaskSpec(), config=CPU_ONLY) == []


@needs_gpu
def test_unpinned_nodes_prefer_the_gpu():
    x = tf.placeholder(tf.float32, [3, 4])
    y = tf.matmul(x, tf.transpose(x)) + 1.0
    out, placed = run_traced(y, {x: F})
    np.testing.assert_allclose(out, F @ F.T + 1.0, rtol=1e-5)
    assert placed[y.op.name].endswith("/device:GPU:0")


@needs_gpu
def test_cpu_gpu_send_recv_with_explicit_devices():
    x = tf.placeholder(tf.float32, [3, 4])
    with tf.device("/cpu:0"):
        a = x * 2.0
    with tf.device("/gpu:0"):
        b = a + 1.0
    with tf.device("/cpu:0"):
        c = b * 3.0
    meta = tf.RunMetadata()
    with tf.Session() as sess:
        out = sess.run([b, c], {x: F}, options=TRACE, run_metadata=meta)
    np.testing.assert_allclose(out[0], F * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(out[1], (F * 2 + 1) * 3, rtol=1e-6)
    placed = placements(meta)
    assert placed[a.op.name].endswith("CPU:0") and placed[c.op.name].endswith("CPU:0")
    assert placed[b.op.name].endswith("GPU:0")
    assert recv_devices(meta) == {"device:CPU:0", "device:GPU:0"}


@needs_gpu
def test_variables_live_and_update_on_the_gpu():
    x = tf.placeholder(tf.float32, [2, 2])
    v = tf.Variable(np.ones((2, 2), np.float32))
    update = tf.assign_add(v, x)
    meta = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(update, {x: np.full((2, 2), 2.0, np.float32)})
        out = sess.run(update, {x: np.eye(2, dtype=np.float32)}, options=TRACE,
                       run_metadata=meta)
    np.testing.assert_array_equal(out, 3.0 + np.eye(2))
    assert placements(meta)[update.op.name].endswith("GPU:0")


@needs_gpu
@pytest.mark.parametrize("use_resource", [False, True])
def test_optimizer_updates_of_gpu_variables_equal_the_cpu_ones(use_resource):
    def train(device: str) -> list[np.ndarray]:
        with tf.Graph().as_default(), tf.device(device):
            x = tf.constant(F)
            w = tf.get_variable("w", initializer=G.T.copy(), use_resource=use_resource)
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
            step = tf.train.AdamOptimizer(0.1).minimize(loss)
            with tf.Session(config=tf.ConfigProto(allow_soft_placement=False)) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(step)
                return sess.run([w, loss])

    for gpu_value, cpu_value in zip(train("/gpu:0"), train("/cpu:0"), strict=True):
        np.testing.assert_allclose(gpu_value, cpu_value, rtol=1e-5, atol=1e-6)


@needs_gpu
def test_large_arrays_take_the_pinned_path_both_ways():
    cupy = STATUS.cupy
    device = cuda.cuda_device(0)
    # more than two staging chunks, and a size that leaves a partial last chunk
    host = RNG.standard_normal(2 * copies.CHUNK_BYTES // 4 + 1001).astype(np.float32)
    on_device = copies.host_to_device(device, host)
    assert isinstance(on_device, cupy.ndarray) and on_device.device.id == 0
    np.testing.assert_array_equal(cupy.asnumpy(on_device), host)
    back = copies.device_to_host(device, on_device * 2)
    assert isinstance(back.base, cupy.cuda.PinnedMemoryPointer)
    np.testing.assert_array_equal(back, host * 2)
    strided = host[: 2 * 1024 * 1024].reshape(1024, 2048)[:, ::2]  # not contiguous, 4 MiB
    np.testing.assert_array_equal(
        copies.device_to_host(device, copies.host_to_device(device, strided)), strided)
    transposed = copies.host_to_device(device, strided).T
    np.testing.assert_array_equal(copies.device_to_host(device, transposed), strided.T)
    small = np.arange(6, dtype=np.int64).reshape(2, 3)
    np.testing.assert_array_equal(
        copies.device_to_host(device, copies.host_to_device(device, small)), small)
    scalar = copies.host_to_device(device, np.float32(2.5))
    assert scalar.shape == () and copies.device_to_host(device, scalar) == np.float32(2.5)


@needs_gpu
def test_large_feeds_and_fetches_through_a_session():
    big = RNG.standard_normal((1024, 3000)).astype(np.float32)  # ~12 MiB each way
    x = tf.placeholder(tf.float32, big.shape)
    y = x * 2.0 - 1.0
    out, placed = run_traced(y, {x: big})
    assert placed[y.op.name].endswith("GPU:0")
    np.testing.assert_allclose(out, big * 2 - 1, rtol=1e-6)


@needs_gpu
@pytest.mark.skipif(len(STATUS.device_names) < 2, reason="needs two CUDA devices")
def test_gpu_to_gpu_send_recv_and_peer_copies():
    cupy = STATUS.cupy
    src, dst = cuda.cuda_device(0), cuda.cuda_device(1)
    with cupy.cuda.Device(0):
        value = cupy.arange(3 * copies.CHUNK_BYTES // 4, dtype=cupy.float32)
    moved = copies.device_to_device(src, dst, value)
    assert moved.device.id == 1
    np.testing.assert_array_equal(cupy.asnumpy(moved), cupy.asnumpy(value))
    x = tf.placeholder(tf.float32, [3, 4])
    with tf.device("/gpu:0"):
        a = x * 2.0
    with tf.device("/gpu:1"):
        b = a + 1.0
    meta = tf.RunMetadata()
    with tf.Session() as sess:
        out = sess.run(b, {x: F}, options=TRACE, run_metadata=meta)
    np.testing.assert_allclose(out, F * 2 + 1, rtol=1e-6)
    placed = placements(meta)
    assert placed[a.op.name].endswith("GPU:0") and placed[b.op.name].endswith("GPU:1")
    assert "device:GPU:1" in recv_devices(meta)


@needs_gpu
def test_dtypes_cupy_cannot_scatter_run_on_the_cpu():
    data = tf.placeholder(tf.int64, [4, 2])
    ids = tf.placeholder(tf.int32, [4])
    summed = tf.raw_ops.UnsortedSegmentSum(data=data, segment_ids=ids, num_segments=3)
    as_float = tf.raw_ops.UnsortedSegmentSum(data=tf.cast(data, tf.float32), segment_ids=ids,
                                             num_segments=3)
    values = np.arange(8, dtype=np.int64).reshape(4, 2)
    out, placed = run_traced([summed, as_float], {data: values, ids: [0, 2, 0, 1]})
    want = np.array([[4, 6], [6, 7], [2, 3]])
    np.testing.assert_array_equal(out[0], want)
    np.testing.assert_array_equal(out[1], want.astype(np.float32))
    assert placed[summed.op.name].endswith("CPU:0")
    assert placed[as_float.op.name].endswith("GPU:0")


@pytest.fixture
def cpu_only_op(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_cpu_only_twice", CPU_ONLY_OP)
    yield
    monkeypatch.undo()
    plugin_manager.reset()


@needs_gpu
def test_an_op_without_gpu_kernel_falls_back_to_the_cpu(cpu_only_op):
    x = tf.placeholder(tf.float32, [3, 4])
    a = x * 3.0
    b = tf.raw_ops.CpuOnlyTwice(x=a)
    c = b + 1.0
    out, placed = run_traced(c, {x: F})
    np.testing.assert_allclose(out, F * 6 + 1, rtol=1e-6)
    assert placed[a.op.name].endswith("GPU:0") and placed[c.op.name].endswith("GPU:0")
    assert placed[b.op.name].endswith("CPU:0")
    with tf.device("/gpu:0"):
        pinned = tf.raw_ops.CpuOnlyTwice(x=x)
    soft = tf.ConfigProto(allow_soft_placement=True)
    out, placed = run_traced(pinned, {x: F}, soft)
    np.testing.assert_allclose(out, F * 2, rtol=1e-6)
    assert placed[pinned.op.name].endswith("CPU:0")
    with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match="CpuOnlyTwice"):
        sess.run(pinned, {x: F})
