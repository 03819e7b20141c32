"""The ``fusion`` plugin: which regions fuse, and that results and errors equal the unfused run."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors
from tensorweave.engine.graph.op_builder import apply, make_op
from tensorweave.plugins.fusion import kernel as fusion_kernel
from tensorweave.plugins.fusion.kernel import STRIDED_MAX_ELEMENTS
from tensorweave.plugins.fusion.regions import MAX_STEPS, SHORT_MAX_ELEMENTS
from tensorweave.plugins.standard_ops.training import SPARSE_UPDATES

pytest.importorskip("numba")

FUSED = "_FusedElementwise"


@pytest.fixture(params=["compiled", "op_by_op"])
def compile_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Fused nodes compiled on their first call, or left to their op-by-op first calls."""
    monkeypatch.setenv("TENSORWEAVE_FUSION_COMPILE_AFTER",
                       "0" if request.param == "compiled" else "100")
    return request.param


def _run(fetches: Any, feeds: dict[Any, Any], fused: bool, monkeypatch: pytest.MonkeyPatch,
         config: Any = None) -> tuple[Any, list[Any]]:
    """The fetched values with the pass on or off, and the step's partition graphs."""
    monkeypatch.setenv("TENSORWEAVE_FUSION", "1" if fused else "0")
    options = tf.RunOptions(output_partition_graphs=True)
    metadata = tf.RunMetadata()
    with tf.Session(config=config) as sess:
        values = sess.run(fetches, feeds, options=options, run_metadata=metadata)
    return values, list(metadata.partition_graphs)


def _ops(partitions: Sequence[Any]) -> Counter[str]:
    return Counter(n.op for p in partitions for n in p.node)


def _fused_nodes(partitions: Sequence[Any]) -> list[Any]:
    return [n for p in partitions for n in p.node if n.op == FUSED]


def _same(fetches: Any, feeds: dict[Any, Any], monkeypatch: pytest.MonkeyPatch,
          config: Any = None, rtol: float = 1e-6) -> list[Any]:
    """Run with and without the pass; assert equal values, dtypes and shapes; the fused run's
    partition graphs."""
    plain, _ = _run(fetches, feeds, False, monkeypatch, config)
    got, partitions = _run(fetches, feeds, True, monkeypatch, config)
    for a, b in zip(np.atleast_1d(np.array(plain, dtype=object)) if not isinstance(plain, list)
                    else plain, got if isinstance(got, list) else [got]):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype.kind in "iu":
            np.testing.assert_array_equal(b, a)
        else:
            np.testing.assert_allclose(b, a, rtol=rtol, atol=1e-6)
    return partitions


def test_a_chain_becomes_one_node_named_as_its_result(
        compile_mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    x = tf.placeholder(tf.float32, [None, 4])
    w = tf.placeholder(tf.float32, [4])
    y = tf.nn.relu(x * w + 1.0) * 0.5 - tf.sqrt(tf.abs(x)) / 3.0
    feeds = {x: np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4),
             w: np.array([0.5, -1, 2, 3], np.float32)}
    partitions = _same([y], feeds, monkeypatch)
    (node,) = _fused_nodes(partitions)
    assert node.name == y.op.name
    ops = _ops(partitions)
    assert not ops.keys() & {"Mul", "AddV2", "Relu", "Sqrt", "Abs", "RealDiv", "Sub"}


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.int32, tf.int64])
def test_dtypes_stay_and_integers_wrap_as_unfused(
        dtype: Any, compile_mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    x = tf.placeholder(dtype, [None])
    y = tf.placeholder(dtype, [None])
    out = tf.maximum(x * y + x, -x) - tf.minimum(tf.abs(y), tf.square(x))
    big = 2**20 if dtype == tf.int32 else 3  # int32 products past 2**31 wrap
    feeds = {x: np.array([big, -3, 0, 7], dtype.np_type),
             y: np.array([2**12, 5, -1, 2], dtype.np_type)}
    partitions = _same([out], feeds, monkeypatch)
    assert len(_fused_nodes(partitions)) == 1


def test_numpy_broadcasting_scalars_and_empty_tensors(
        compile_mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    a = tf.placeholder(tf.float32, None)
    b = tf.placeholder(tf.float32, None)
    out = (a * b + 2.0) * a - b
    for shape_a, shape_b in [((2, 1, 3), (4, 1)), ((), (3,)), ((), ()), ((0, 3), (3,)),
                             ((2, 0), (1,))]:
        feeds = {a: np.full(shape_a, 1.5, np.float32), b: np.full(shape_b, -0.25, np.float32)}
        partitions = _same([out], feeds, monkeypatch)
        assert len(_fused_nodes(partitions)) == 1
    feeds = {a: np.float32(2), b: np.float32(3)}
    got, plain = _run(out, feeds, True, monkeypatch)[0], _run(out, feeds, False, monkeypatch)[0]
    assert type(got) is type(plain) and got == plain == np.float32(13)


def test_nan_and_inf_propagate_as_unfused(compile_mode: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    x = tf.placeholder(tf.float32, [None])
    y = tf.placeholder(tf.float32, [None])
    out = tf.maximum(x, y) + tf.minimum(y, x) * tf.nn.relu(x) + tf.math.rsqrt(y) / x
    feeds = {x: np.array([np.nan, 1, -np.inf, 0, 2], np.float32),
             y: np.array([1, np.nan, 3, 0, -1], np.float32)}
    plain, _ = _run(out, feeds, False, monkeypatch)
    got, partitions = _run(out, feeds, True, monkeypatch)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(plain))
    np.testing.assert_allclose(got[~np.isnan(got)], plain[~np.isnan(plain)])
    assert len(_fused_nodes(partitions)) == 1


def test_compiled_regions_compute_without_falling_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled ufunc itself gives inf/NaN, wraps integers, casts and broadcasts: the
    op-by-op path that errors take is never needed."""

    def no_fallback(*args: Any) -> Any:
        raise AssertionError("the compiled region fell back to op by op")

    monkeypatch.setattr(fusion_kernel, "_op_by_op", no_fallback)
    monkeypatch.setenv("TENSORWEAVE_FUSION_COMPILE_AFTER", "0")
    x = tf.placeholder(tf.float32, None)
    y = tf.placeholder(tf.float32, None)
    i = tf.placeholder(tf.int32, None)
    floats = tf.maximum(x, y) + tf.math.rsqrt(y) / x - tf.nn.relu(x) * 0.5
    ints = tf.cast(tf.minimum(i * i, 7) - i, tf.float32) * 2.0
    feeds = {x: np.array([[np.nan], [0], [2]], np.float32), y: np.array([1, 0, -1], np.float32),
             i: np.array(2**20, np.int32)}
    partitions = _same([floats, ints], feeds, monkeypatch)
    assert len(_fused_nodes(partitions)) == 2


def test_trivial_casts_fuse_and_float_to_int_stays(compile_mode: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    i = tf.placeholder(tf.int32, [None])
    f = tf.placeholder(tf.float64, [None])
    widened = tf.cast(i * 3, tf.float32) * tf.cast(f + 1.0, tf.float32)
    truncated = tf.cast(f * 2.5, tf.int32) + i * 2
    feeds = {i: np.array([1, -2, 3], np.int32), f: np.array([0.3, -1.7, 2.9])}
    partitions = _same([widened, truncated], feeds, monkeypatch)
    fused = {n.name for n in _fused_nodes(partitions)}
    assert widened.op.name in fused
    # the float-to-int Cast stays, so only `i * 2 + cast` could fuse: the Mul and the AddV2
    assert _ops(partitions)["Cast"] == 1


def test_fetched_and_control_needed_intermediates_are_kept(
        compile_mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    x = tf.placeholder(tf.float32, [None])
    t = x * 2.0
    u = t + 1.0
    v = u * u - 3.0
    with tf.control_dependencies([u.op]):
        marker = tf.identity(x)
    partitions = _same([t, v, marker], {x: np.array([1, 2, 3], np.float32)}, monkeypatch)
    names = {n.name: n.op for p in partitions for n in p.node}
    assert names[t.op.name] == "Mul" and names[u.op.name] == "AddV2"
    assert names[v.op.name] == FUSED  # v*v - 3 only: u is fetched through a control edge


def test_transcendental_ops_fuse_only_on_small_static_shapes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    small = tf.placeholder(tf.float32, [4, 8])
    large = tf.placeholder(tf.float32, [None, 8])
    out_small = tf.tanh(small * 2.0 + 1.0) * tf.sigmoid(small) + tf.exp(small) - tf.log(
        tf.abs(small) + 1.0)
    out_large = tf.tanh(large * 2.0 + 1.0) * 0.5
    feeds = {small: np.linspace(-30, 30, 32, dtype=np.float32).reshape(4, 8),
             large: np.ones((3, 8), np.float32)}
    monkeypatch.setenv("TENSORWEAVE_FUSION_COMPILE_AFTER", "0")
    partitions = _same([out_small, out_large], feeds, monkeypatch, rtol=1e-5)
    ops = _ops(partitions)
    assert ops["Tanh"] == 1 and "Sigmoid" not in ops and "Exp" not in ops


@pytest.mark.parametrize("size, operand, compiled", [
    (STRIDED_MAX_ELEMENTS + 1, "scalar", False),  # numba's strided loop: numpy's ops instead
    (STRIDED_MAX_ELEMENTS, "scalar", True),
    (STRIDED_MAX_ELEMENTS + 1, "strided", False),
    (STRIDED_MAX_ELEMENTS + 1, "full", True),
    (STRIDED_MAX_ELEMENTS + 1, "arithmetic", True),  # no divides: the loop wins strided too
])
def test_large_dividing_regions_with_a_strided_operand_run_op_by_op(
        size: int, operand: str, compiled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    compiles = []

    def recording(*args: Any) -> Any:
        compiles.append(args)
        return ufunc(*args)

    ufunc = fusion_kernel.backend.ufunc
    monkeypatch.setattr(fusion_kernel.backend, "ufunc", recording)
    monkeypatch.setenv("TENSORWEAVE_FUSION_COMPILE_AFTER", "0")
    x = tf.placeholder(tf.float32, [None])
    y = tf.placeholder(tf.float32, [None])
    other = {"scalar": 2.0, "strided": y, "full": y, "arithmetic": 2.0}[operand]
    # (a constant such as 1.0 is a one-element operand too)
    out = x * other + 1.0 if operand == "arithmetic" else x / other + x
    rs = np.random.RandomState(0)
    values = rs.rand(2 * size).astype(np.float32) + 0.5
    # a fed array is used as given: a strided view reaches the kernel strided
    feeds = {x: values[:size], y: values[::2] if operand == "strided" else values[size:]}
    partitions = _same([out], feeds, monkeypatch)
    assert len(_fused_nodes(partitions)) == 1
    assert bool(compiles) == compiled


def _failing_graph() -> tuple[Any, Any, Any, dict[Any, Any]]:
    a = tf.placeholder(tf.float32, [None])
    b = tf.placeholder(tf.float32, [None])
    scaled = a * 2.0
    bad = tf.add(scaled, b, name="user_add")
    out = bad * 3.0 - 1.0
    return out, bad, scaled, {a: np.ones(3, np.float32), b: np.ones(2, np.float32)}


def test_an_error_names_the_users_node_and_op(compile_mode: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    out, bad, _, feeds = _failing_graph()
    raised = {}
    for fused in (False, True):
        with pytest.raises(errors.InvalidArgumentError) as info:
            _run(out, feeds, fused, monkeypatch)
        raised[fused] = info.value
    assert raised[True].node_def == raised[False].node_def == bad.op.node_def
    assert raised[True].op is bad.op
    assert "Incompatible shapes: [3] vs. [2]" in raised[True].message
    assert "(op: AddV2)" in raised[True].message


def test_regions_stay_within_a_device(compile_mode: str,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    x = tf.placeholder(tf.float32, [None])
    with tf.device("/cpu:0"):
        a = x * 2.0 + 1.0
    with tf.device("/cpu:1"):
        b = (a * a - 3.0) * 0.5
    with tf.device("/cpu:0"):
        c = a * 4.0 + b
    config = tf.ConfigProto(device_count={"CPU": 2})
    partitions = _same([c], {x: np.array([1, 2, 3], np.float32)}, monkeypatch, config)
    fused = _fused_nodes(partitions)
    assert {n.name for n in fused} == {a.op.name, b.op.name, c.op.name}
    for node in fused:
        assert node.device.endswith("CPU:1") == (node.name == b.op.name)


def test_gradients_are_built_before_the_pass_and_fuse(compile_mode: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(np.array([0.5, -1.0, 2.0], np.float32))
    b = tf.Variable(np.float32(0.1))
    y = tf.square(tf.nn.relu(x * w + b) - 1.0) * 0.5
    grads = tf.gradients(tf.reduce_sum(y), [w, b, x])
    feeds = {x: np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)}
    init = tf.global_variables_initializer()
    results = {}
    for fused in (False, True):
        monkeypatch.setenv("TENSORWEAVE_FUSION", "1" if fused else "0")
        options = tf.RunOptions(output_partition_graphs=True)
        metadata = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(init)
            results[fused] = sess.run(grads, feeds, options=options, run_metadata=metadata)
        if fused:
            assert len(_fused_nodes(metadata.partition_graphs)) >= 2
    for a, b_ in zip(results[False], results[True]):
        np.testing.assert_allclose(b_, a, rtol=1e-6)


def test_a_long_chain_becomes_regions_of_at_most_max_steps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORWEAVE_FUSION_COMPILE_AFTER", "100")  # op by op: no 64-op compile
    p = tf.placeholder(tf.float32, [None])
    q = tf.placeholder(tf.float32, [None])
    y = p
    for _ in range(75):  # 150 ops: regions of 64, 64 and 22
        y = y * q + p
    feeds = {p: np.full(3, 0.5, np.float32), q: np.full(3, 0.9, np.float32)}
    partitions = _same([y], feeds, monkeypatch)
    fused = _fused_nodes(partitions)
    assert sorted(len(n.attr["program"].list.s) for n in fused) == [22, MAX_STEPS, MAX_STEPS]
    assert not _ops(partitions).keys() & {"Mul", "AddV2"}


def test_activation_gradients_fuse_on_static_shapes(compile_mode: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # (64 x 80: past SHORT_MAX_ELEMENTS, where a region of two ops fuses)
    x = tf.placeholder(tf.float32, [64, 80])
    w = tf.Variable(np.linspace(-1, 1, 80, dtype=np.float32))
    y = tf.tanh(x * w) * tf.sigmoid(x - w) + tf.nn.relu(x * 2.0 - w)
    grads = tf.gradients(tf.reduce_sum(y), [x, w])
    feeds = {x: np.linspace(-3, 3, 64 * 80, dtype=np.float32).reshape(64, 80)}
    results, ops = {}, Counter()
    for fused in (False, True):
        monkeypatch.setenv("TENSORWEAVE_FUSION", "1" if fused else "0")
        options, metadata = tf.RunOptions(output_partition_graphs=True), tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(w.initializer)
            results[fused] = sess.run(grads, feeds, options=options, run_metadata=metadata)
        ops = _ops(metadata.partition_graphs)
    assert not ops.keys() & {"TanhGrad", "SigmoidGrad", "ReluGrad"}
    for a, b in zip(results[False], results[True]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_two_ops_on_a_small_static_shape_stay_unfused(monkeypatch: pytest.MonkeyPatch) -> None:
    small = tf.placeholder(tf.float32, [SHORT_MAX_ELEMENTS])
    large = tf.placeholder(tf.float32, [SHORT_MAX_ELEMENTS + 1])
    unknown = tf.placeholder(tf.float32, [None])
    fetches = [small * 3.0 + 1.0, large * 3.0 + 1.0, unknown * 3.0 + 1.0,
               (small * 2.0 - 1.0) * small]
    feeds = {small: np.ones(SHORT_MAX_ELEMENTS, np.float32),
             large: np.ones(SHORT_MAX_ELEMENTS + 1, np.float32),
             unknown: np.ones(5, np.float32)}
    partitions = _same(fetches, feeds, monkeypatch)
    fused = {n.name for n in _fused_nodes(partitions)}
    assert fused == {t.op.name for t in fetches[1:]}


def test_the_switch_turns_the_pass_off(monkeypatch: pytest.MonkeyPatch) -> None:
    x = tf.placeholder(tf.float32, [None])
    out = x * 2.0 + 1.0
    _, partitions = _run(out, {x: np.ones(2, np.float32)}, False, monkeypatch)
    assert not _fused_nodes(partitions)
    _, partitions = _run(out, {x: np.ones(2, np.float32)}, True, monkeypatch)
    assert len(_fused_nodes(partitions)) == 1



# -- function bodies ------------------------------------------------------------------------------


def _traced(fetches: Any, feeds: dict[Any, Any], fused: bool, monkeypatch: pytest.MonkeyPatch,
            init: Any = None) -> tuple[Any, Counter[str]]:
    """The fetched values with the pass on or off, and the op of every node that ran, function
    bodies' nodes included (a function's plan is not a partition graph; its step stats are)."""
    monkeypatch.setenv("TENSORWEAVE_FUSION", "1" if fused else "0")
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        if init is not None:
            sess.run(init)
        values = sess.run(fetches, feeds, options=options, run_metadata=metadata)
    ops = Counter(ns.timeline_label.split(" = ")[1].split("(")[0]
                  for dev in metadata.step_stats.dev_stats for ns in dev.node_stats)
    return values, ops


def test_a_loop_body_fuses_and_equals_the_unfused_loop(compile_mode: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    p = tf.placeholder(tf.float32, [3])
    q = tf.placeholder(tf.float32, [3])
    _, y = tf.while_loop(lambda i, y: i < 5, lambda i, y: (i + 1, tf.abs(y * q + p) - 0.5),
                         [tf.constant(0), p])
    feeds = {p: np.array([0.25, -1.0, 2.0], np.float32), q: np.array([1.5, 0.5, -2], np.float32)}
    plain, plain_ops = _traced(y, feeds, False, monkeypatch)
    got, ops = _traced(y, feeds, True, monkeypatch)
    np.testing.assert_allclose(got, plain, rtol=1e-6)
    assert got.dtype == plain.dtype == np.float32
    assert plain_ops[FUSED] == 0 and plain_ops["Mul"] == 5
    assert ops[FUSED] == 5 and not ops.keys() & {"Mul", "Abs", "Sub"}  # one per iteration


def test_a_branch_fuses_and_its_error_names_the_users_node(
        compile_mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    a = tf.placeholder(tf.float32, [None])
    b = tf.placeholder(tf.float32, [None])
    pred = tf.placeholder(tf.bool, [])
    out = tf.cond(pred, lambda: tf.add(a * 2.0, b, name="user_add") * 3.0 - 1.0,
                  lambda: a, name="branchy")
    good = {a: np.ones(3, np.float32), b: np.full(3, 0.5, np.float32), pred: True}
    plain, _ = _traced(out, good, False, monkeypatch)
    got, ops = _traced(out, good, True, monkeypatch)
    np.testing.assert_allclose(got, plain)
    assert ops[FUSED] == 1 and not ops.keys() & {"Mul", "AddV2", "Sub"}
    bad = {**good, b: np.ones(2, np.float32)}
    messages = {}
    for fused in (False, True):
        with pytest.raises(errors.InvalidArgumentError) as info:
            _traced(out, bad, fused, monkeypatch)
        messages[fused] = info.value.message
    assert "Incompatible shapes: [3] vs. [2]" in messages[True]
    assert "[[node branchy/user_add (op: AddV2)" in messages[True]
    assert messages[True] == messages[False]


def test_gradients_through_a_fused_loop_equal_the_unfused(
        compile_mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # (past SHORT_MAX_ELEMENTS: the gradient's regions of two ops fuse too)
    n = SHORT_MAX_ELEMENTS + 4
    x = tf.placeholder(tf.float32, [n])
    w = tf.Variable(np.tile(np.array([0.5, -0.25, 1.0, 0.75], np.float32), n // 4))
    _, y = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, (y * w + x) * 0.5 - w),
                         [tf.constant(0), x])
    grads = tf.gradients(tf.reduce_sum(y * y), [x, w])
    feeds = {x: np.tile(np.array([1.0, -2.0, 0.5, 3.0], np.float32), n // 4)}
    init = tf.global_variables_initializer()
    plain, _ = _traced(grads, feeds, False, monkeypatch, init)
    got, ops = _traced(grads, feeds, True, monkeypatch, init)
    for a, b in zip(plain, got):
        np.testing.assert_allclose(b, a, rtol=1e-5)
    assert ops[FUSED] >= 8  # the forward loop's body and the gradient loop's


def test_the_switch_turns_fusion_in_function_bodies_off(monkeypatch: pytest.MonkeyPatch) -> None:
    x = tf.placeholder(tf.float32, [None])
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 2.0 + 1.0),
                         [tf.constant(0), x])
    feeds = {x: np.ones(2, np.float32)}
    _, ops = _traced(y, feeds, False, monkeypatch)
    assert FUSED not in ops and ops["Mul"] == 3
    _, ops = _traced(y, feeds, True, monkeypatch)
    assert ops[FUSED] == 3 and "Mul" not in ops

# -- optimizer updates ----------------------------------------------------------------------------


def _train(make: Callable[[], Any], resource: bool, dtype: Any, steps: int) -> np.ndarray:
    rs = np.random.RandomState(0)
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=rs.randn(5, 3).astype(dtype.np_type),
                            use_resource=resource)
        x = tf.placeholder(dtype, [5, 3])
        train = make().minimize(tf.reduce_sum(w * w * x))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train, {x: rs.randn(5, 3).astype(dtype.np_type)})
            return sess.run(w)


@pytest.mark.parametrize("make", [
    lambda: tf.train.AdamOptimizer(0.01),
    lambda: tf.train.MomentumOptimizer(0.01, 0.9),
    lambda: tf.train.MomentumOptimizer(0.01, 0.9, use_nesterov=True),
    lambda: tf.train.GradientDescentOptimizer(0.1),
    lambda: tf.train.AdagradOptimizer(0.1),
    lambda: tf.train.RMSPropOptimizer(0.01),
    lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.9, use_locking=True),
    lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.9, centered=True),
    lambda: tf.train.AdadeltaOptimizer(1.0),
    lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01,
                                   l2_regularization_strength=0.1),
    lambda: tf.train.FtrlOptimizer(0.1, learning_rate_power=-0.3,
                                   l1_regularization_strength=0.01),
    lambda: tf.train.FtrlOptimizer(0.1, l2_regularization_strength=0.1,
                                   l2_shrinkage_regularization_strength=0.05),
], ids=["adam", "momentum", "nesterov", "sgd", "adagrad", "rmsprop", "rmsprop_momentum_locked",
        "centered_rmsprop", "adadelta", "ftrl", "ftrl_power", "ftrl_v2"])
@pytest.mark.parametrize("resource", [False, True], ids=["ref", "resource"])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_one_pass_updates_equal_the_numpy_kernels(
        make: Callable[[], Any], resource: bool, dtype: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORWEAVE_FUSION_COMPILE_AFTER", "1")  # step 1 unfused, then one pass
    monkeypatch.setenv("TENSORWEAVE_FUSION", "0")
    plain = _train(make, resource, dtype, 4)
    monkeypatch.setenv("TENSORWEAVE_FUSION", "1")
    fused = _train(make, resource, dtype, 4)
    np.testing.assert_array_equal(fused, plain)


def test_a_one_pass_update_still_checks_its_scalars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORWEAVE_FUSION_COMPILE_AFTER", "0")
    w = tf.Variable(np.ones(3, np.float32))
    lr = tf.placeholder(tf.float32)
    update = tf.raw_ops.ApplyGradientDescent(var=w._variable if hasattr(w, "_variable") else w,
                                             alpha=lr, delta=tf.ones(3))
    with tf.Session() as sess:
        sess.run(w.initializer)
        with pytest.raises(errors.InvalidArgumentError, match=r"alpha is not a scalar: \[2\]"):
            sess.run(update, {lr: np.ones(2, np.float32)})
        np.testing.assert_array_equal(sess.run(update, {lr: np.float32(0.5)}),
                                      np.full(3, 0.5, np.float32))


# op -> (its slots' initial values, its hyper-parameters, its attrs)
SPARSE_CASES: dict[str, tuple[dict[str, float], dict[str, float], dict[str, Any]]] = {
    "SparseApplyMomentum": ({"accum": 0.1}, {"lr": 0.01, "momentum": 0.9}, {}),
    "SparseApplyMomentum-nesterov": ({"accum": 0.1}, {"lr": 0.01, "momentum": 0.9},
                                     {"use_nesterov": True}),
    "SparseApplyAdagrad": ({"accum": 0.1}, {"lr": 0.1}, {}),
    "SparseApplyAdagrad-frozen": ({"accum": 0.1}, {"lr": 0.1}, {"update_slots": False}),
    "SparseApplyRMSProp": ({"ms": 1.0, "mom": 0.0},
                           {"lr": 0.01, "rho": 0.9, "momentum": 0.9, "epsilon": 1e-7}, {}),
    "SparseApplyCenteredRMSProp": ({"mg": 0.0, "ms": 1.0, "mom": 0.0},
                                   {"lr": 0.01, "rho": 0.9, "momentum": 0.9, "epsilon": 1e-7},
                                   {"use_locking": True}),
    "SparseApplyAdadelta": ({"accum": 0.1, "accum_update": 0.1},
                            {"lr": 0.5, "rho": 0.95, "epsilon": 1e-6}, {}),
    "SparseApplyFtrl": ({"accum": 0.1, "linear": 0.0},
                        {"lr": 0.1, "l1": 0.01, "l2": 0.1, "lr_power": -0.5}, {}),
    "SparseApplyFtrlV2": ({"accum": 0.1, "linear": 0.0},
                          {"lr": 0.1, "l1": 0.01, "l2": 0.1, "l2_shrinkage": 0.05,
                           "lr_power": -0.3}, {}),
}
# repeated indices (updated once per occurrence, in order), an empty step; every row of the
# 6-row variable at some step
INDEX_STEPS = [[4, 1, 4], [], [0, 5, 0, 0], [2, 3], [1, 1]]


def _sparse_update(case: str, resource: bool, dtype: Any, rows: int = 6) -> tuple[Any, ...]:
    """The update of `case` on new variables: (op, indices, grad placeholders, variables)."""
    slots, hyper, attrs = SPARSE_CASES[case]
    rs = np.random.RandomState(1)
    variables = [tf.get_variable(name, initializer=init.astype(dtype.np_type),
                                 use_resource=resource)
                 for name, init in [("var", rs.randn(rows, 3)),
                                    *((k, np.full((rows, 3), v)) for k, v in slots.items())]]
    indices = tf.placeholder(tf.int32, [None])
    grad = tf.placeholder(dtype, [None, 3])
    op = case.split("-")[0]
    by_name = {**dict(zip(["var", *slots], (v._ref() for v in variables))),
               **{k: tf.constant(h, dtype) for k, h in hyper.items()},
               "grad": grad, "indices": indices}
    inputs = [by_name[name] for name in SPARSE_UPDATES[op][0]]
    # (as the optimizers build them: the resource form's handle inputs are all "resource")
    update = make_op(f"Resource{op}", inputs, attrs) if resource else apply(op, inputs, attrs)
    return update, indices, grad, variables


def _sparse_train(case: str, resource: bool, dtype: Any) -> list[np.ndarray]:
    rs = np.random.RandomState(0)
    with tf.Graph().as_default():
        update, indices, grad, variables = _sparse_update(case, resource, dtype)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for ids in INDEX_STEPS:
                sess.run(update, {indices: ids, grad: rs.randn(len(ids), 3)})
            return sess.run(variables)


@pytest.mark.parametrize("case", SPARSE_CASES)
@pytest.mark.parametrize("resource", [False, True], ids=["ref", "resource"])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_one_pass_sparse_updates_equal_the_numpy_kernels(
        case: str, resource: bool, dtype: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORWEAVE_FUSION_COMPILE_AFTER", "1")  # step 1 unfused, then one pass
    monkeypatch.setenv("TENSORWEAVE_FUSION", "0")
    plain = _sparse_train(case, resource, dtype)
    monkeypatch.setenv("TENSORWEAVE_FUSION", "1")
    fused = _sparse_train(case, resource, dtype)
    for got, want in zip(fused, plain):
        np.testing.assert_array_equal(got, want)


def _adagrad_rows(shape: tuple[int, ...], index_dtype: Any) -> list[np.ndarray]:
    """Three SparseApplyAdagrad steps on rows 2, 0, 2 of a float32 variable of `shape`."""
    rs = np.random.RandomState(0)
    with tf.Graph().as_default():
        var = tf.Variable(rs.randn(*shape).astype(np.float32))
        accum = tf.Variable(np.full(shape, 0.1, np.float32))
        update = apply("SparseApplyAdagrad", [
            var._ref(), accum._ref(), tf.constant(0.1),
            tf.constant(rs.randn(3, *shape[1:]).astype(np.float32)),
            tf.constant(np.array([2, 0, 2], index_dtype))], {})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(update.op)
            return sess.run([var, accum])


@pytest.mark.parametrize("shape", [(4,), (4, 2, 3), (4, 0)], ids=["vector", "rank3", "empty_rows"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_one_pass_sparse_updates_take_any_row_shape_and_index_dtype(
        shape: tuple[int, ...], index_dtype: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORWEAVE_FUSION_COMPILE_AFTER", "0")
    monkeypatch.setenv("TENSORWEAVE_FUSION", "0")
    plain = _adagrad_rows(shape, index_dtype)
    monkeypatch.setenv("TENSORWEAVE_FUSION", "1")
    for got, want in zip(_adagrad_rows(shape, index_dtype), plain):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fused", [False, True], ids=["numpy", "one_pass"])
def test_a_sparse_update_rejects_an_out_of_range_index_naming_its_node(
        fused: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORWEAVE_FUSION_COMPILE_AFTER", "0")
    monkeypatch.setenv("TENSORWEAVE_FUSION", "1" if fused else "0")
    update, indices, grad, variables = _sparse_update("SparseApplyAdagrad", False, tf.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(variables)
        for ids in ([1, 6], [-1]):
            with pytest.raises(errors.InvalidArgumentError,
                               match=f"Index {ids[-1]} at offset {len(ids) - 1} in indices is "
                                     "out of range") as raised:
                sess.run(update, {indices: ids, grad: np.ones((len(ids), 3), np.float32)})
            assert raised.value.node_def.name == update.op.name
        for got, want in zip(sess.run(variables), before):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fused", [False, True], ids=["numpy", "one_pass"])
def test_a_sparse_update_makes_no_array_the_variables_size(
        fused: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORWEAVE_FUSION_COMPILE_AFTER", "0")
    monkeypatch.setenv("TENSORWEAVE_FUSION", "1" if fused else "0")
    rows = 100_000  # float32[100000, 3]: 1.2 MB a variable, three of them
    update, indices, grad, variables = _sparse_update("SparseApplyCenteredRMSProp", False,
                                                      tf.float32, rows)
    feed = {indices: [7, 99_999, 7], grad: np.ones((3, 3), np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(update.op, feed)  # compiles
        tracemalloc.start()
        try:
            sess.run(update.op, feed)  # targeted, as a train op is: no value to hand out
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < rows * 3 * 4 / 4


# -- without the backend ------------------------------------------------------------------------

_BLOCKED = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "numba" or name.startswith("numba."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)")
sys.meta_path.insert(0, Block())
import numpy as np
import tensorweave as tf
from tensorweave.cli import main
main(["plugins"])
x = tf.placeholder(tf.float32, [None])
out = x * 2.0 + 1.0
options, metadata = tf.RunOptions(output_partition_graphs=True), tf.RunMetadata()
with tf.Session() as s:
    print("value", s.run(out, {x: np.ones(2, np.float32)}, options=options,
                         run_metadata=metadata).tolist())
print("ops", sorted({n.op for p in metadata.partition_graphs for n in p.node}))
"""


def test_without_numba_the_plugin_registers_nothing_and_says_why() -> None:
    env = {**os.environ, "TENSORWEAVE_FUSION_COMPILE_AFTER": "0"}
    out = subprocess.run([sys.executable, "-c", _BLOCKED], capture_output=True, text=True,
                         env=env, timeout=300, check=True).stdout
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("fusion "))
    end = next(i for i in range(start + 1, len(lines) + 1)
               if i == len(lines) or not lines[i].startswith("    "))
    block = lines[start:end]
    assert "[loaded]" in block[0]
    assert any("note: off: numba is not installed" in line for line in block)
    assert not any("passes" in line or "kernels" in line or "ops" in line for line in block[1:])
    assert "value [3.0, 3.0]" in out
    assert FUSED not in out and "'Mul'" in out
