"""complex64/complex128 end to end: the dtypes, feeds and fetches, TF's TensorProto encoding,
checkpoints, the gRPC wire format and a remote fetch, the math ops and kernels that TF allows
on complex tensors, and TF's gradient convention for complex math."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.graph.graph_def_proto import GraphDef, parse_text
from tensorweave.engine.graph.tensor_proto import TensorProto, parse_tensor, tensor_to_proto
from tensorweave.plugins.grpc import wire
from tensorweave.train.local_cluster import LocalCluster
from tests.numeric import fetched_numeric_grad, run

Z = np.array([[1 + 2j, -3.5j], [0.25, -1 - 1j]], np.complex64)


# -- dtypes -------------------------------------------------------------------------------


def test_dtypes_have_tf_names_parts_and_conversions() -> None:
    assert tf.as_dtype(np.complex64) is tf.complex64 and tf.as_dtype("complex128") is tf.complex128
    assert tf.as_dtype(complex) is tf.complex128
    assert tf.complex64.is_complex and not tf.complex64.is_floating and tf.complex64.is_numeric
    assert not tf.float32.is_complex
    assert tf.complex64.real_dtype is tf.float32 and tf.complex128.real_dtype is tf.float64
    assert tf.float64.real_dtype is tf.float64
    assert tf.complex64.size == 8 and repr(tf.complex128) == "tf.complex128"
    assert tf.constant(1 + 2j).dtype == tf.complex128
    assert tf.constant(Z).dtype == tf.complex64


def test_feeds_and_fetches_round_trip_exactly() -> None:
    p = tf.placeholder(tf.complex64, [None, 2])
    q = tf.placeholder(tf.complex128, [])
    out, scalar = run([tf.identity(p), q * 2], {p: Z, q: 1.5 - 2j})
    assert out.dtype == np.complex64 and out.tobytes() == Z.tobytes()
    assert scalar.dtype == np.complex128 and scalar == 3 - 4j


# -- TensorProto / GraphDef ---------------------------------------------------------------


def test_a_scalar_is_scomplex_val_with_tf_bytes() -> None:
    # TensorProto { dtype: DT_COMPLEX64 tensor_shape {} scomplex_val: [1, 2] (packed, field 9) }
    expected = b"\x08\x08" + b"\x12\x00" + b"\x4a\x08" + struct.pack("<ff", 1, 2)
    assert tensor_to_proto(np.array(1 + 2j, np.complex64)).SerializeToString() == expected
    expected = b"\x08\x12" + b"\x12\x00" + b"\x62\x10" + struct.pack("<dd", -1, 0.5)
    assert tensor_to_proto(np.array(-1 + 0.5j, np.complex128)).SerializeToString() == expected


def test_parse_tensor_reads_pairs_splats_and_rejects_odd_counts() -> None:
    def proto(values: list[float]) -> bytes:
        message = TensorProto(dtype=18, dcomplex_val=values)
        message.tensor_shape.dim.add(size=3)
        return message.SerializeToString()

    pairs = proto([1, 2, 3, 4])
    np.testing.assert_array_equal(parse_tensor(pairs), np.array([1 + 2j, 3 + 4j, 3 + 4j]))
    odd = proto([1, 2, 3])
    with pytest.raises(ValueError, match="odd number of dcomplex_val"):
        parse_tensor(odd)


def test_graph_def_bytes_and_text_round_trip_complex_constants() -> None:
    graph = tf.Graph()
    with graph.as_default():
        tf.constant(Z, name="a")
        tf.constant(np.complex128(5 - 6j), name="b")
        tf.placeholder(tf.complex128, [3], name="p")
    proto = GraphDef.FromString(graph.as_graph_def().SerializeToString())
    assert "DT_COMPLEX128" in str(proto) and "dcomplex_val: -6\n" in str(proto)
    again = parse_text(str(proto))
    with tf.Graph().as_default():
        tf.import_graph_def(again, name="")
        a, b = run(["a:0", "b:0"])
        p = tf.get_default_graph().get_tensor_by_name("p:0")
        assert p.dtype == tf.complex128
    assert a.dtype == np.complex64 and a.tobytes() == Z.tobytes()
    assert b.dtype == np.complex128 and b == 5 - 6j


# -- checkpoints --------------------------------------------------------------------------


def test_checkpoint_saves_and_restores_complex_variables(tmp_path) -> None:
    v = tf.Variable(Z, name="v")
    w = tf.Variable(np.array([1j, 2], np.complex128), name="w")
    bump = tf.assign_add(v, tf.constant(np.full((2, 2), 1j, np.complex64)))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(bump)
        path = saver.save(sess, str(tmp_path / "model"))
    with tf.Session() as sess:
        saver.restore(sess, path)
        got_v, got_w = sess.run([v, w])
    np.testing.assert_array_equal(got_v, Z + 1j)
    assert got_v.dtype == np.complex64 and got_w.dtype == np.complex128
    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_variable_to_dtype_map()["w"] == tf.complex128


# -- the gRPC wire format and a remote fetch ----------------------------------------------


@pytest.mark.parametrize("np_type", [np.complex64, np.complex128])
def test_the_wire_carries_complex_tensors_and_scalars_bit_exactly(np_type: type) -> None:
    value = np.array([[np.inf - 0j, complex(0, np.nan)], [1 / 3 + 2j, -0.0]], np_type)
    envelope = wire.encode({"t": value, "s": value[1, 0]})
    for decoded in (wire.decode(envelope.frame()).body,
                    wire.decode_stream(envelope.chunks(7)).body):
        assert decoded["t"].dtype == np_type and decoded["t"].tobytes() == value.tobytes()
        assert decoded["s"].dtype == np_type and decoded["s"] == value[1, 0]
    assert wire.decode(wire.encode(tf.complex64).frame()).body is tf.complex64


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster({"ps": 1, "worker": 1}) as local:
        yield local


def test_a_worker_computes_and_returns_complex_tensors(cluster: LocalCluster) -> None:
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(Z, name="v")
        p = tf.placeholder(tf.complex128, [None], name="p")
    with tf.device("/job:worker/task:0"):
        spectrum = tf.fft(v * 2)
        turned = tf.conj(p) * 1j
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(v.initializer)
        got, got_turned = sess.run([spectrum, turned], {p: np.array([1 + 1j, 2])})
    np.testing.assert_allclose(got, np.fft.fft(Z * 2), rtol=1e-6)
    assert got.dtype == np.complex64
    np.testing.assert_array_equal(got_turned, np.array([1 + 1j, 2j]))


# -- math ops and kernels -----------------------------------------------------------------

W = np.array([[0.5 - 1j, 2 + 0.5j], [1j, -1.5 + 0.25j]], np.complex64)
UNARY: dict[str, Callable] = {
    "negative": np.negative, "square": np.square, "exp": np.exp, "log": np.log,
    "sqrt": np.sqrt, "rsqrt": lambda z: 1 / np.sqrt(z), "reciprocal": np.reciprocal,
    "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "sign": np.sign, "expm1": np.expm1,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_math_matches_numpy(name: str) -> None:
    got = run(getattr(tf, name)(tf.constant(W)))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, UNARY[name](W), rtol=1e-5, atol=1e-6)


def test_binary_math_reductions_and_matmul_match_numpy() -> None:
    a, b = tf.constant(Z), tf.constant(W)
    fetches = [a + b, a - b, a * b, a / b, tf.pow(b, a), tf.squared_difference(a, b),
               tf.reduce_sum(a, 0), tf.reduce_mean(a), tf.reduce_prod(a, 1), tf.cumsum(a, 1),
               tf.add_n([a, b, a]), tf.equal(a, Z), tf.matmul(a, b),
               tf.matmul(a, b, adjoint_a=True), tf.matmul(a, b, transpose_b=True),
               tf.matmul(tf.stack([a, b]), b, adjoint_b=True),
               tf.matmul(tf.stack([a, b]), b, transpose_a=True),
               tf.reduce_euclidean_norm(a)]
    # TF's complex squared difference is (x - y) * conj(x - y)
    expected = [Z + W, Z - W, Z * W, Z / W, W ** Z, (Z - W) * np.conj(Z - W), Z.sum(0), Z.mean(),
                Z.prod(1), Z.cumsum(1), Z + W + Z, np.ones((2, 2), bool), Z @ W,
                Z.conj().T @ W, Z @ W.T, np.stack([Z, W]) @ W.conj().T,
                np.swapaxes(np.stack([Z, W]), 1, 2) @ W,
                np.complex64(np.sqrt(np.sum(np.abs(Z) ** 2)))]
    for got, want in zip(run(fetches), expected):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_casts_follow_tf() -> None:
    z = tf.constant(np.array([1.5 + 2j, 0j, 3j], np.complex64))
    to_float, to_int, to_bool, from_float, widened = run([
        tf.cast(z, tf.float32), tf.cast(z, tf.int32), tf.cast(z, tf.bool),
        tf.cast(tf.constant([1.5, -2.0]), tf.complex64), tf.cast(z, tf.complex128)])
    np.testing.assert_array_equal(to_float, np.array([1.5, 0, 0], np.float32))
    np.testing.assert_array_equal(to_int, np.array([1, 0, 0], np.int32))
    np.testing.assert_array_equal(to_bool, [True, False, True])
    assert from_float.dtype == np.complex64 and list(from_float) == [1.5, -2]
    assert widened.dtype == np.complex128


def test_array_ops_move_complex_tensors() -> None:
    a = tf.constant(Z)
    got = run([tf.reshape(a, [4]), tf.transpose(a), tf.concat([a, a], 1), tf.gather(a, [1, 0]),
               tf.transpose(a, conjugate=True), tf.linalg.adjoint(a), tf.zeros_like(a)])
    want = [Z.reshape(4), Z.T, np.concatenate([Z, Z], 1), Z[[1, 0]], Z.conj().T, Z.conj().T,
            np.zeros_like(Z)]
    for g, w in zip(got, want):
        assert g.dtype == np.complex64
        np.testing.assert_array_equal(g, w)


def test_ops_tf_keeps_real_reject_complex() -> None:
    a = tf.constant(Z)
    for fn in (tf.maximum, tf.less, tf.floormod):
        with pytest.raises(TypeError, match="complex64"):
            fn(a, a)
    with pytest.raises(TypeError, match="complex64"):
        tf.floor(a)


# -- gradients ------------------------------------------------------------------------------


LOSSES: dict[str, Callable] = {
    "mul_conj": lambda z, w: tf.real(z * tf.conj(z) * w),
    "div": lambda z, w: tf.imag(w / (z + 3.0)),
    "exp_log": lambda z, w: tf.real(tf.exp(z) * tf.log(z + w)),
    "sqrt_recip": lambda z, w: tf.abs(tf.sqrt(z + 4.0) + tf.reciprocal(z - w)),
    "tanh_square": lambda z, w: tf.angle(tf.tanh(z) + tf.square(z) + 5.0),
    "matmul": lambda z, w: tf.abs(tf.matmul(z, w, adjoint_b=True) + tf.matmul(w, z)),
    "reductions": lambda z, w: tf.abs(tf.reduce_prod(z + 2.0, 0) * tf.reduce_mean(z * w)),
    "pow_cast": lambda z, w: tf.real(tf.pow(z + 3.0, w)) + tf.cast(z, tf.float64),
    "sub_neg": lambda z, w: tf.imag(-(z - w) * w),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_of_real_losses_through_complex_math_match_finite_differences(
        name: str) -> None:
    rng = np.random.default_rng(7)
    x0 = rng.uniform(0.3, 1.2, (2, 2, 2))
    w = tf.constant(np.array([[1 - 2j, 0.5j], [2, -1 + 1j]]))
    x = tf.placeholder(tf.float64, [2, 2, 2])
    z = tf.complex(x[0], x[1])
    loss = tf.reduce_sum(LOSSES[name](z, w))
    (grad,) = tf.gradients(loss, [x])
    got = run(grad, {x: x0})
    np.testing.assert_allclose(got, fetched_numeric_grad(loss, x, x0), rtol=1e-5, atol=1e-6)
