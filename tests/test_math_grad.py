"""Gradients of the math ops, checked against numerical Jacobians (``tw.test``) and numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(7)


def error(fn, shapes, out_shape, inits=None, dtype=tf.float64, dynamic=False, delta=1e-5):
    """Max gradient error of ``fn(*placeholders)``; `dynamic` hides the static shapes."""
    xs = [tf.placeholder(dtype, [None] * len(s) if dynamic else s) for s in shapes]
    y = fn(*xs)
    if inits is None:
        inits = [RNG.uniform(0.2, 0.9, s) for s in shapes]
    return tf.test.compute_gradient_error(xs, shapes, y, out_shape, x_init_value=inits,
                                          delta=delta)


UNARY = {
    "negative": (tf.negative, (0.2, 0.9)), "abs": (tf.abs, (-0.9, -0.2)),
    "square": (tf.square, (-1, 1)), "sqrt": (tf.sqrt, (0.2, 0.9)),
    "rsqrt": (tf.rsqrt, (0.2, 0.9)), "exp": (tf.exp, (-1, 1)), "expm1": (tf.expm1, (-1, 1)),
    "log": (tf.log, (0.2, 0.9)), "log1p": (tf.log1p, (0.2, 0.9)), "sin": (tf.sin, (-1, 1)),
    "cos": (tf.cos, (-1, 1)), "tan": (tf.tan, (-1, 1)), "asin": (tf.asin, (-0.8, 0.8)),
    "acos": (tf.acos, (-0.8, 0.8)), "atan": (tf.atan, (-2, 2)), "sinh": (tf.sinh, (-1, 1)),
    "cosh": (tf.cosh, (-1, 1)), "tanh": (tf.tanh, (-2, 2)), "asinh": (tf.asinh, (-2, 2)),
    "acosh": (tf.acosh, (1.2, 3)), "atanh": (tf.atanh, (-0.8, 0.8)),
    "sigmoid": (tf.sigmoid, (-3, 3)), "reciprocal": (tf.reciprocal, (0.5, 2)),
    "erf": (tf.erf, (-1, 1)), "erfc": (tf.erfc, (-1, 1)),
    "inv": (lambda x: tf.raw_ops.Inv(x=x), (0.5, 2)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradients(name: str) -> None:
    fn, (low, high) = UNARY[name]
    assert error(fn, [[2, 3]], [2, 3], [RNG.uniform(low, high, [2, 3])]) < 1e-6


@pytest.mark.parametrize("fn", [tf.floor, tf.ceil, tf.round, tf.rint, tf.sign])
def test_piecewise_constant_ops_have_zero_or_no_gradient(fn) -> None:
    x = tf.placeholder(tf.float32, [3])
    grad = tf.gradients(fn(x), x)[0]
    if grad is not None:  # Sign: zeros, as TF
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(grad, {x: [1.5, -2.0, 0.3]}), [0, 0, 0])


BINARY = {
    "add": (tf.add, (0.2, 0.9)), "subtract": (tf.subtract, (0.2, 0.9)),
    "multiply": (tf.multiply, (0.2, 0.9)), "truediv": (tf.truediv, (0.5, 2)),
    "div": (tf.div, (0.5, 2)), "div_no_nan": (tf.div_no_nan, (0.5, 2)),
    "multiply_no_nan": (tf.math.multiply_no_nan, (0.5, 2)), "pow": (tf.pow, (0.5, 2)),
    "squared_difference": (tf.squared_difference, (-1, 1)), "maximum": (tf.maximum, (-1, 1)),
    "minimum": (tf.minimum, (-1, 1)), "xlogy": (tf.xlogy, (0.5, 2)),
    "xdivy": (tf.xdivy, (0.5, 2)), "floormod": (tf.floormod, (0.5, 2)),
    "atan2": (tf.atan2, (0.5, 2)), "raw_add": (lambda x, y: tf.raw_ops.Add(x=x, y=y), (0, 1)),
}
BROADCASTS = [([2, 3], [2, 3]), ([2, 3], [3]), ([4, 1], [1, 3]), ([2, 1, 3], [4, 1]),
              ([], [2, 2])]


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
def test_binary_gradients_reduce_broadcast_dimensions(name: str, shapes) -> None:
    fn, (low, high) = BINARY[name]
    inits = [RNG.uniform(low, high, s) for s in shapes]
    if name == "floormod":  # stay away from the jumps of x mod y
        inits = [np.full(shapes[0], 2.5) + RNG.uniform(0, 0.3, shapes[0]),
                 np.full(shapes[1], 1.1) + RNG.uniform(0, 0.1, shapes[1])]
    out = np.broadcast_shapes(*[tuple(s) for s in shapes])
    assert error(fn, list(shapes), list(out), inits) < 1e-6


@pytest.mark.parametrize("shapes", BROADCASTS[1:], ids=str)
def test_broadcast_reduction_with_shapes_known_only_at_run_time(shapes) -> None:
    out = list(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    assert error(lambda x, y: x * y + y, list(shapes), out, dynamic=True) < 1e-8


def test_gradient_shapes_match_operands() -> None:
    x = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [3])
    gx, gb = tf.gradients(tf.reduce_sum(x * b), [x, b])
    assert gx.shape.as_list() == [None, 3] and gb.shape.as_list() == [3]
    with tf.Session() as sess:
        vx, vb = sess.run([gx, gb], {x: np.ones((5, 3)), b: [1.0, 2.0, 3.0]})
    np.testing.assert_allclose(vx, np.tile([1.0, 2.0, 3.0], (5, 1)))
    np.testing.assert_allclose(vb, [5.0, 5.0, 5.0])
    assert vx.dtype == np.float32 and vb.dtype == np.float32


REDUCTIONS = {
    "sum": tf.reduce_sum, "mean": tf.reduce_mean, "max": tf.reduce_max, "min": tf.reduce_min,
    "prod": tf.reduce_prod, "euclidean_norm": tf.reduce_euclidean_norm,
}
AXES = [(None, False), (0, False), (1, True), (-1, False), ([0, 2], False), ([0, 2], True)]


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis,keepdims", AXES, ids=str)
@pytest.mark.parametrize("dynamic", [False, True])
def test_reduction_gradients(name: str, axis, keepdims: bool, dynamic: bool) -> None:
    x_np = RNG.permutation(24).reshape(2, 3, 4) / 10.0 + 0.5  # distinct: max/min are unique
    out = np.sum(x_np, axis=None if axis is None else tuple(np.atleast_1d(axis)),
                 keepdims=keepdims).shape
    fn = REDUCTIONS[name]
    assert error(lambda x: fn(x, axis=axis, keepdims=keepdims), [[2, 3, 4]], list(out),
                 [x_np], dynamic=dynamic) < 1e-6


def test_max_gradient_is_shared_between_ties() -> None:
    x = tf.constant([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]])
    grad = tf.gradients(tf.reduce_max(x, axis=1), x)[0]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(grad), [[0, 0.5, 0.5], [1, 0, 0]])


def test_prod_gradient_with_a_zero_is_exact() -> None:
    x = tf.constant([2.0, 0.0, 3.0])
    grad = tf.gradients(tf.reduce_prod(x), x)[0]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(grad), [0.0, 6.0, 0.0])


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("fn", [tf.cumsum, tf.cumprod])
def test_scan_gradients(fn, exclusive: bool, reverse: bool) -> None:
    assert error(lambda x: fn(x, axis=1, exclusive=exclusive, reverse=reverse),
                 [[2, 4]], [2, 4]) < 1e-6


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_gradient_with_transpose_flags(ta: bool, tb: bool) -> None:
    a_shape = [4, 3] if ta else [3, 4]
    b_shape = [2, 4] if tb else [4, 2]
    assert error(lambda a, b: tf.matmul(a, b, transpose_a=ta, transpose_b=tb),
                 [a_shape, b_shape], [3, 2]) < 1e-8


def test_matmul_gradient_values_match_numpy() -> None:
    a_np, b_np = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
    a, b = tf.constant(a_np), tf.constant(b_np)
    ga, gb = tf.gradients(tf.reduce_sum(tf.matmul(a, b)), [a, b])
    with tf.Session() as sess:
        va, vb = sess.run([ga, gb])
    np.testing.assert_allclose(va, np.ones((3, 2)) @ b_np.T)
    np.testing.assert_allclose(vb, a_np.T @ np.ones((3, 2)))


@pytest.mark.parametrize("adj_x", [False, True])
@pytest.mark.parametrize("adj_y", [False, True])
def test_batch_matmul_gradient_with_broadcast_batch(adj_x: bool, adj_y: bool) -> None:
    x_shape = [2, 1, 4, 3] if adj_x else [2, 1, 3, 4]
    y_shape = [3, 2, 4] if adj_y else [3, 4, 2]

    def fn(x, y):
        return tf.raw_ops.BatchMatMulV2(x=x, y=y, adj_x=adj_x, adj_y=adj_y)

    assert error(fn, [x_shape, y_shape], [2, 3, 3, 2]) < 1e-8


def test_add_n_gradient() -> None:
    assert error(lambda a, b, c: tf.add_n([a, b, a * c]), [[3], [3], [3]], [3]) < 1e-8


def test_cast_gradient_between_floats_and_none_to_int() -> None:
    x = tf.placeholder(tf.float64, [3])
    assert error(lambda v: tf.cast(v, tf.float32) * 2.0, [[3]], [3], delta=1e-2) < 1e-3
    assert tf.gradients(tf.cast(tf.cast(x, tf.int32), tf.float64), x) == [None]


def test_clip_by_value_gradient_goes_to_the_active_input() -> None:
    x = tf.constant([-2.0, 0.5, 3.0])
    low, high = tf.constant(0.0), tf.constant([1.0, 1.0, 1.0])
    gx, glow, ghigh = tf.gradients(tf.clip_by_value(x, low, high) * [1.0, 2.0, 3.0],
                                   [x, low, high])
    with tf.Session() as sess:
        vx, vlow, vhigh = sess.run([gx, glow, ghigh])
    np.testing.assert_allclose(vx, [0.0, 2.0, 0.0])
    assert vlow == 1.0
    np.testing.assert_allclose(vhigh, [0.0, 0.0, 3.0])


@pytest.mark.parametrize("fn", [tf.less, tf.greater_equal, tf.equal, tf.not_equal])
def test_comparisons_are_not_differentiable(fn) -> None:
    x = tf.placeholder(tf.float32, [3])
    y = tf.cast(fn(x, 1.0), tf.float32) * x
    grad = tf.gradients(y, x)[0]
    with tf.Session() as sess:  # only the direct path through `* x` counts
        np.testing.assert_allclose(sess.run(grad, {x: [0.0, 1.0, 2.0]}),
                                   sess.run(tf.cast(fn(x, 1.0), tf.float32), {x: [0, 1, 2]}))


def test_argmax_is_not_differentiable() -> None:
    x = tf.placeholder(tf.float32, [3])
    assert tf.gradients(tf.cast(tf.argmax(x), tf.float32), x) == [None]


def test_the_gradient_ops_of_a_product_are_named_as_tf_names_them():
    # TF's _MulGrad: gen_math_ops.mul(grad, y), gen_math_ops.mul(x, grad) -> Mul, Mul_1
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.placeholder(tf.float32, [3], name="y")
    dx, dy = tf.gradients(x * y, [x, y])
    names = {op.name: op.type for op in tf.get_default_graph().get_operations()}
    assert names["gradients/mul_grad/Mul"] == names["gradients/mul_grad/Mul_1"] == "Mul"
    with tf.Session() as sess:
        got = sess.run([dx, dy], {x: [1.0, 2.0, 3.0], y: [4.0, 5.0, 6.0]})
    np.testing.assert_array_equal(got, [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0]])
