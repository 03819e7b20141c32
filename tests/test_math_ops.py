"""Math ops against numpy references: values, result dtypes, broadcasting and errors."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors

RNG = np.random.default_rng(0)
FLOAT_TYPES = (np.float16, np.float32, np.float64)
INT_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8)
SIGNED_TYPES = (np.int8, np.int16, np.int32, np.int64)


def run(fetches, feed_dict=None):
    with tw.Session() as sess:
        return sess.run(fetches, feed_dict)


def check(actual, expected, dtype=None):
    """`actual` equals `expected` (close for floats) and has exactly `dtype`."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.dtype == np.dtype(dtype if dtype is not None else expected.dtype)
    assert actual.shape == expected.shape
    if actual.dtype.kind == "f":
        tol = 2e-3 if actual.dtype == np.float16 else 1e-6
        np.testing.assert_allclose(actual, expected.astype(actual.dtype), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(actual, expected)


def operands(dtype, positive=False, nonzero=False):
    """A [2, 3] and a [3] operand of `dtype` (broadcasting), within safe ranges."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = RNG.uniform(0.5 if positive else -3, 3, (2, 3))
        y = RNG.uniform(0.5, 3, (3,)) * (1 if positive else np.array([1, -1, 1]))
    else:
        low = 1 if positive or dtype.kind == "u" else -9
        x = RNG.integers(low, 10, (2, 3))
        signs = 1 if positive or dtype.kind == "u" else np.array([1, -1, 1])
        y = RNG.integers(1, 5, (3,)) * signs
    if not nonzero and dtype.kind == "f":
        x[0, 0] = 0
    return x.astype(dtype), y.astype(dtype)


def trunc_div(x, y):
    q = np.trunc(x.astype(np.float64) / y.astype(np.float64))
    return q.astype(x.dtype) if x.dtype.kind in "iu" else (x / y).astype(x.dtype)


BINARY = [
    # (api function, numpy reference, dtypes, operand options)
    (tw.add, np.add, FLOAT_TYPES + INT_TYPES, {}),
    (tw.subtract, np.subtract, FLOAT_TYPES + INT_TYPES, {}),
    (tw.multiply, np.multiply, FLOAT_TYPES + INT_TYPES, {}),
    (tw.realdiv, np.true_divide, FLOAT_TYPES, {}),
    (tw.floor_div, lambda x, y: np.floor_divide(x, y) if x.dtype.kind in "iu"
     else np.floor(x / y), FLOAT_TYPES + INT_TYPES, {}),
    (tw.floormod, np.remainder, FLOAT_TYPES + INT_TYPES, {}),
    (tw.truncatediv, lambda x, y: trunc_div(x, y) if x.dtype.kind in "iu"
     else np.trunc(x / y), FLOAT_TYPES + INT_TYPES, {}),
    (tw.truncatemod, np.fmod, FLOAT_TYPES + (np.int32, np.int64), {}),
    (tw.pow, np.power, FLOAT_TYPES + SIGNED_TYPES, {"positive": True}),
    (tw.squared_difference, lambda x, y: (x - y) * (x - y), FLOAT_TYPES + (np.int32, np.int64),
     {}),
    (tw.maximum, np.maximum, FLOAT_TYPES + INT_TYPES, {}),
    (tw.minimum, np.minimum, FLOAT_TYPES + INT_TYPES, {}),
    (tw.atan2, np.arctan2, FLOAT_TYPES, {}),
    (tw.xlogy, lambda x, y: np.where(x == 0, 0, x * np.log(y)), FLOAT_TYPES, {"positive": True}),
    (tw.xdivy, lambda x, y: np.where(x == 0, 0, x / y), FLOAT_TYPES, {}),
    (tw.div_no_nan, lambda x, y: np.where(y == 0, 0, x / y), FLOAT_TYPES, {}),
    (tw.math.multiply_no_nan, lambda x, y: np.where(y == 0, 0, x * y), FLOAT_TYPES, {}),
]


@pytest.mark.parametrize(("fn", "ref", "types", "opts"), BINARY,
                         ids=[b[0].__name__ for b in BINARY])
def test_binary_ops_match_numpy_with_broadcasting(fn, ref, types, opts):
    pairs = [operands(t, **opts) for t in types]
    results = run([fn(tw.constant(x), tw.constant(y)) for x, y in pairs])
    for (x, y), result in zip(pairs, results):
        check(result, ref(x, y), x.dtype)


@pytest.mark.parametrize(("op", "dtype"), [
    ("TruncateMod", np.int8), ("Pow", np.uint8), ("Atan2", np.int32), ("Xlogy", np.int64),
    ("AddV2", np.bool_), ("SquaredDifference", np.int16), ("FloorMod", np.bool_)])
def test_binary_op_dtype_outside_its_constraints_raises_type_error(op, dtype):
    x = tw.constant(np.ones(2, dtype))
    inputs = {"y": x, "x": x}
    with pytest.raises(TypeError, match="allowed values"):
        getattr(tw.raw_ops, op)(**inputs)


@pytest.mark.parametrize(("fn", "dtype"), [
    (tw.negative, np.uint8), (tw.abs, np.uint8), (tw.floor, np.int32), (tw.exp, np.int64),
    (tw.is_nan, np.int32), (tw.sigmoid, np.int8), (tw.square, np.bool_)])
def test_unary_op_dtype_outside_its_constraints_raises_type_error(fn, dtype):
    with pytest.raises(TypeError, match="allowed values"):
        fn(tw.constant(np.ones(2, dtype)))


def test_mismatched_dtypes_raise_type_error_at_construction():
    with pytest.raises(TypeError):
        tw.add(tw.constant([1.0]), tw.constant([1]))
    with pytest.raises(TypeError):
        tw.raw_ops.AddV2(x=tw.constant([1.0], tw.float64), y=tw.constant([1.0]))
    with pytest.raises(TypeError, match="allowed values"):
        tw.sqrt(tw.constant([4]))
    with pytest.raises(TypeError, match="allowed values"):
        tw.realdiv(tw.constant([4]), tw.constant([2]))


def test_incompatible_static_shapes_raise_value_error_at_construction():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tw.multiply(tw.constant([1.0, 2.0]), tw.constant([1.0, 2.0, 3.0]))


def test_runtime_shape_mismatch_raises_invalid_argument():
    x = tw.placeholder(tw.float32, None)
    y = tw.placeholder(tw.float32, None)
    with pytest.raises(errors.InvalidArgumentError, match=r"Incompatible shapes: \[2\] vs. \[3\]"):
        run(x + y, {x: np.ones(2), y: np.ones(3)})


def test_elementwise_kernels_bind_to_the_ufunc_only_where_its_dtype_is_the_nodes():
    from tensorweave.engine.kernel import KernelContext, bound
    from tensorweave.engine.plugin_manager import get_registries

    def form(op, inputs, output):
        fn = get_registries().kernels.lookup(op, "CPU", inputs[0]).fn
        ctx = KernelContext("n", op, {}, None, np, [output], [None])
        return bound(fn, ctx, inputs)

    assert form("Mul", [tw.float32, tw.float32], tw.float32) is np.multiply
    assert form("Less", [tw.int32, tw.int32], tw.bool) is np.less
    assert form("Mul", [tw.float32, tw.float32], tw.float64) is None  # the kernel casts
    assert form("Neg", [tw.float32, tw.float32], tw.float32) is None  # not the ufunc's arity
    assert form("MatMul", [tw.float32, tw.float32], tw.float32) is None  # no bound form


def test_integer_division_by_zero_raises_invalid_argument():
    for op in (tw.floordiv, tw.floormod, tw.truncatediv, tw.truncatemod):
        tw.reset_default_graph()
        with pytest.raises(errors.InvalidArgumentError, match="Integer division by zero"):
            run(op(tw.constant([1, 2]), tw.constant([1, 0])))


def test_float_division_by_zero_gives_inf_and_nan_silently():
    x = tw.constant([1.0, -1.0, 0.0])
    # A numpy warning inside the kernel would surface here as an error.
    with np.errstate(divide="raise", over="raise", invalid="raise"):
        result = run(x / 0.0)
    np.testing.assert_array_equal(result, [np.inf, -np.inf, np.nan])


def test_floor_and_truncate_semantics_of_negative_integers():
    x, y = tw.constant([-7, 7, -7, 7]), tw.constant([2, -2, -2, 2])
    results = run([x // y, x % y, tw.truncatediv(x, y), tw.truncatemod(x, y),
                   tw.raw_ops.Div(x=x, y=y)])
    np.testing.assert_array_equal(results[0], [-4, -4, 3, 3])
    np.testing.assert_array_equal(results[1], [1, -1, -1, 1])  # sign of the divisor
    np.testing.assert_array_equal(results[2], [-3, -3, 3, 3])
    np.testing.assert_array_equal(results[3], [-1, 1, -1, 1])  # sign of the dividend
    np.testing.assert_array_equal(results[4], [-3, -3, 3, 3])  # raw Div truncates like C


def test_div_uses_python2_semantics():
    ints, floats = run([tw.div(tw.constant([-7, 7]), 2), tw.div(tw.constant([-7.0, 7.0]), 2.0)])
    check(ints, np.array([-4, 3], np.int32))
    check(floats, np.array([-3.5, 3.5], np.float32))


def test_div_of_complex_is_real_division():
    # math_ops_test.testComplexDiv
    foo = tw.constant([1.0 + 3.0j])
    t = tw.div(foo, 2.0)
    assert t.op.type == "RealDiv"
    check(run(t), np.array([0.5 + 1.5j]))
    check(run(tw.divide(foo, 1.0)), np.array([1.0 + 3.0j]))


@pytest.mark.parametrize(("dtype", "expected"), [
    (np.int8, np.float32), (np.int16, np.float32), (np.uint8, np.float32),
    (np.int32, np.float64), (np.int64, np.float64), (np.float16, np.float16),
    (np.float32, np.float32), (np.float64, np.float64)])
def test_truediv_casts_integers_like_tf(dtype, expected):
    x, y = np.array([7, 1], dtype), np.array([2, 3], dtype)
    divide, truediv = run([tw.divide(tw.constant(x), tw.constant(y)),
                           tw.truediv(tw.constant(x), tw.constant(y))])
    ref = (x.astype(np.float64) / y).astype(expected)
    check(divide, ref, expected)
    check(truediv, ref, expected)


def test_truediv_of_different_dtypes_raises_type_error():
    with pytest.raises(TypeError):
        tw.truediv(tw.constant([1]), tw.constant([1.0]))


def test_python_scalars_take_the_tensor_dtype():
    x = tw.constant([1, 2], tw.int8)
    results = run([tw.add(x, 1), tw.subtract(10, x), tw.multiply(x, np.int64(3))])
    check(results[0], np.array([2, 3], np.int8))
    check(results[1], np.array([9, 8], np.int8))
    check(results[2], np.array([3, 6], np.int8))


def test_binary_ops_work_in_a_non_default_graph():
    graph = tw.Graph()
    with graph.as_default():
        x = tw.constant([1.0, 2.0])
    y = tw.add(x, 1.0)  # the constant for 1.0 must land in x's graph
    assert y.graph is graph
    with tw.Session(graph=graph) as sess:
        np.testing.assert_array_equal(sess.run(y), [2.0, 3.0])


UNARY = [
    (tw.negative, np.negative, FLOAT_TYPES + SIGNED_TYPES, None),
    (tw.abs, np.abs, FLOAT_TYPES + SIGNED_TYPES, None),
    (tw.sign, np.sign, FLOAT_TYPES + SIGNED_TYPES, None),
    (tw.square, np.square, FLOAT_TYPES + INT_TYPES, None),
    (tw.rint, np.rint, FLOAT_TYPES, None),
    (tw.floor, np.floor, FLOAT_TYPES, None),
    (tw.ceil, np.ceil, FLOAT_TYPES, None),
    (tw.sqrt, np.sqrt, FLOAT_TYPES, (0.1, 9)),
    (tw.rsqrt, lambda x: 1 / np.sqrt(x), FLOAT_TYPES, (0.1, 9)),
    (tw.exp, np.exp, FLOAT_TYPES, None),
    (tw.expm1, np.expm1, FLOAT_TYPES, None),
    (tw.log, np.log, FLOAT_TYPES, (0.1, 9)),
    (tw.log1p, np.log1p, FLOAT_TYPES, (0.1, 9)),
    (tw.sin, np.sin, FLOAT_TYPES, None),
    (tw.cos, np.cos, FLOAT_TYPES, None),
    (tw.tan, np.tan, FLOAT_TYPES, (-1, 1)),
    (tw.asin, np.arcsin, FLOAT_TYPES, (-0.9, 0.9)),
    (tw.acos, np.arccos, FLOAT_TYPES, (-0.9, 0.9)),
    (tw.atan, np.arctan, FLOAT_TYPES, None),
    (tw.sinh, np.sinh, FLOAT_TYPES, None),
    (tw.cosh, np.cosh, FLOAT_TYPES, None),
    (tw.tanh, np.tanh, FLOAT_TYPES, None),
    (tw.asinh, np.arcsinh, FLOAT_TYPES, None),
    (tw.acosh, np.arccosh, FLOAT_TYPES, (1.1, 9)),
    (tw.atanh, np.arctanh, FLOAT_TYPES, (-0.9, 0.9)),
    (tw.sigmoid, lambda x: 1 / (1 + np.exp(-x.astype(np.float64))), FLOAT_TYPES, None),
    (tw.reciprocal, np.reciprocal, FLOAT_TYPES, (0.1, 9)),
    (tw.erf, np.vectorize(math.erf), FLOAT_TYPES, None),
    (tw.erfc, np.vectorize(math.erfc), FLOAT_TYPES, None),
]


@pytest.mark.parametrize(("fn", "ref", "types", "domain"), UNARY,
                         ids=[u[0].__name__ for u in UNARY])
def test_unary_ops_match_numpy(fn, ref, types, domain):
    low, high = domain or (-3, 3)
    inputs = []
    for t in types:
        x = RNG.uniform(low, high, (2, 3))
        inputs.append(x.astype(t) if np.dtype(t).kind == "f" else np.round(x * 3).astype(t))
    results = run([fn(tw.constant(x)) for x in inputs])
    for x, result in zip(inputs, results):
        check(result, ref(x), x.dtype)


def test_round_is_bankers_rounding_and_keeps_integers():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4], np.float32)
    ints = tw.constant([1, 2])
    assert tw.round(ints) is ints
    check(run(tw.round(tw.constant(x))), np.array([0, 2, 2, -0, -2, 2], np.float32))


def test_sigmoid_is_stable_for_large_magnitudes():
    x = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0])
    with np.errstate(divide="raise", over="raise", invalid="raise"):
        result = run(tw.sigmoid(tw.constant(x)))
    np.testing.assert_allclose(result, [0.0, 9.357622968839299e-14, 0.5, 1.0, 1.0], rtol=1e-12)


def test_erf_and_erfc_are_accurate_to_1e_15_over_the_whole_range():
    x = np.concatenate([np.linspace(-30, 30, 6001), [0.0, 1e-300, 0.84375, 1.25, 1 / 0.35, 6.0]])
    erf, erfc = run([tw.erf(tw.constant(x)), tw.erfc(tw.constant(x))])
    ref_erf = np.array([math.erf(v) for v in x])
    ref_erfc = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(erf, ref_erf, rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(erfc, ref_erfc, rtol=1e-14, atol=1e-300)
    assert np.max(np.abs(erf - ref_erf)) < 1e-6


def test_erf_special_values():
    x = tw.constant([np.inf, -np.inf, np.nan])
    erf, erfc = run([tw.erf(x), tw.erfc(x)])
    np.testing.assert_array_equal(erf, [1.0, -1.0, np.nan])
    np.testing.assert_array_equal(erfc, [0.0, 2.0, np.nan])


def test_predicates():
    x = np.array([1.0, np.nan, np.inf, -np.inf], np.float16)
    results = run([tw.is_nan(tw.constant(x)), tw.is_inf(tw.constant(x)),
                   tw.is_finite(tw.constant(x))])
    check(results[0], np.isnan(x))
    check(results[1], np.isinf(x))
    check(results[2], np.isfinite(x))


COMPARISONS = [(tw.equal, np.equal), (tw.not_equal, np.not_equal), (tw.less, np.less),
               (tw.less_equal, np.less_equal), (tw.greater, np.greater),
               (tw.greater_equal, np.greater_equal)]


@pytest.mark.parametrize(("fn", "ref"), COMPARISONS, ids=[c[0].__name__ for c in COMPARISONS])
def test_comparisons_give_bool(fn, ref):
    pairs = [(np.array([[1, 2, 3], [3, 2, 1]], t), np.array([2, 2, 2], t))
             for t in (np.float16, np.float64, np.int8, np.uint8, np.int64)]
    results = run([fn(tw.constant(x), tw.constant(y)) for x, y in pairs])
    for (x, y), result in zip(pairs, results):
        check(result, ref(x, y), np.bool_)


def test_equality_of_bools_and_incompatible_shape_error_attr():
    x = tw.constant([True, False])
    assert run(tw.equal(x, True)).tolist() == [True, False]
    with pytest.raises(TypeError, match="allowed values"):
        tw.less(x, x)
    a, b = tw.constant([1, 2]), tw.constant([1, 2, 3])
    eq = tw.raw_ops.Equal(x=a, y=b, incompatible_shape_error=False)
    ne = tw.raw_ops.NotEqual(x=a, y=b, incompatible_shape_error=False)
    assert eq.shape.ndims is None
    assert run([eq, ne]) == [False, True]


def test_logical_ops():
    x = np.array([[True, False], [True, True]])
    y = np.array([True, False])
    tx, ty = tw.constant(x), tw.constant(y)
    results = run([tw.logical_and(tx, ty), tw.logical_or(tx, ty), tw.logical_not(tx),
                   tw.logical_xor(tx, ty)])
    for result, ref in zip(results, [x & y, x | y, ~x, x ^ y]):
        check(result, ref)
    with pytest.raises(TypeError):
        tw.logical_and(tw.constant([1]), tw.constant([1]))


@pytest.mark.parametrize("src", [np.float16, np.float64, np.int8, np.uint8, np.int64, np.bool_])
def test_cast_between_all_dtypes(src):
    x = np.array([0, 1, 3, 7], src) if src is not np.bool_ else np.array([True, False, True, True])
    targets = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
               np.uint8, np.bool_]
    results = run([tw.cast(tw.constant(x), t) for t in targets])
    for target, result in zip(targets, results):
        check(result, x.astype(target), target)


def test_cast_truncates_floats_toward_zero_and_returns_same_dtype_tensor():
    x = tw.constant([2049.0, -2049.0, 70000.0, 1.0 / 3], tw.float32)
    assert tw.cast(x, tw.float32) is x
    truncated = tw.raw_ops.Cast(x=x, DstT=tw.float16, Truncate=True)
    rounded = tw.raw_ops.Cast(x=x, DstT=tw.float16)
    t, r = run([truncated, rounded])
    check(t, np.array([2048, -2048, 65504, 0.33325], np.float16))
    check(r, np.array([2048, -2048, np.inf, 0.3333], np.float16))
    floats = run(tw.cast(tw.constant([1.7, -1.7]), tw.int32))
    check(floats, np.array([1, -1], np.int32))


def test_cast_helpers_and_saturate_cast():
    x = tw.constant([1.5, 300.0, -5.0])
    results = run([tw.to_float(tw.constant([1])), tw.to_double(x), tw.to_int32(x),
                   tw.to_int64(x), tw.saturate_cast(x, tw.uint8),
                   tw.saturate_cast(tw.constant([1e6, -1e6]), tw.float16)])
    check(results[0], np.array([1.0], np.float32))
    check(results[1], np.array([1.5, 300, -5], np.float64))
    check(results[2], np.array([1, 300, -5], np.int32))
    check(results[3], np.array([1, 300, -5], np.int64))
    check(results[4], np.array([1, 255, 0], np.uint8))
    check(results[5], np.array([65504, -65504], np.float16))


REDUCTIONS = [
    (tw.reduce_sum, np.sum, FLOAT_TYPES + INT_TYPES),
    (tw.reduce_prod, np.prod, FLOAT_TYPES + INT_TYPES),
    (tw.reduce_max, np.max, FLOAT_TYPES + INT_TYPES),
    (tw.reduce_min, np.min, FLOAT_TYPES + INT_TYPES),
    (tw.reduce_mean, np.mean, FLOAT_TYPES),
    (tw.reduce_euclidean_norm, lambda x, axis, keepdims: np.sqrt(
        np.sum(np.square(x.astype(np.float64)), axis=axis, keepdims=keepdims)), FLOAT_TYPES),
]


@pytest.mark.parametrize(("fn", "ref", "types"), REDUCTIONS,
                         ids=[r[0].__name__ for r in REDUCTIONS])
@pytest.mark.parametrize("axis", [None, 0, -1, [0, 2], [], (1, -2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(fn, ref, types, axis, keepdims):
    inputs = [(RNG.uniform(-2, 2, (2, 3, 2)) if np.dtype(t).kind == "f" else
               RNG.integers(1 if np.dtype(t).kind == "u" else -3, 4, (2, 3, 2))).astype(t)
              for t in types]
    np_axis = tuple(sorted({a % 3 for a in np.atleast_1d(axis)})) if axis is not None else None
    outs = [fn(tw.constant(x), axis=axis, keepdims=keepdims) for x in inputs]
    for x, out, result in zip(inputs, outs, run(outs)):
        expected = np.asarray(ref(x, axis=np_axis, keepdims=keepdims))
        assert out.shape.as_list() == list(expected.shape)
        check(result, expected.astype(x.dtype), x.dtype)


def test_integer_sums_wrap_and_integer_means_truncate_like_tf():
    small = tw.constant(np.array([100, 100, 100], np.int8))
    results = run([tw.reduce_sum(small), tw.reduce_mean(tw.constant([1, 2])),
                   tw.reduce_mean(tw.constant([-1, -2])),
                   tw.reduce_mean(tw.constant(np.array([200, 250], np.uint8))),
                   tw.reduce_mean(tw.constant(np.array([1, 2, 4], np.float16)))])
    check(results[0], np.int8(44))
    check(results[1], np.int32(1))
    check(results[2], np.int32(-1))
    check(results[3], np.uint8(225))
    check(results[4], np.float16(7 / 3))


def test_logical_reductions():
    x = np.array([[True, False, True], [True, True, True]])
    results = run([tw.reduce_all(tw.constant(x), 1), tw.reduce_any(tw.constant(x), 0),
                   tw.reduce_all(tw.constant(x)), tw.reduce_any(tw.constant(x), keepdims=True)])
    check(results[0], x.all(1))
    check(results[1], x.any(0))
    check(results[2], x.all())
    check(results[3], x.any(keepdims=True))
    with pytest.raises(TypeError):
        tw.reduce_all(tw.constant([1, 0]))


def test_reduction_aliases_and_their_conflicts():
    x = tw.constant([[1.0, 2.0], [3.0, 4.0]])
    a = tw.reduce_sum(x, reduction_indices=[1], keep_dims=True)
    assert a.shape.as_list() == [2, 1]
    np.testing.assert_array_equal(run(a), [[3.0], [7.0]])
    with pytest.raises(ValueError, match="Cannot specify both"):
        tw.reduce_sum(x, axis=0, reduction_indices=0)
    with pytest.raises(ValueError, match="Cannot specify both"):
        tw.reduce_mean(x, keepdims=True, keep_dims=True)


def test_reduction_axes_from_int64_tensor_and_placeholder():
    x = tw.constant(np.arange(6.0).reshape(2, 3))
    axis = tw.placeholder(tw.int64, None)
    out = tw.reduce_max(x, axis)
    assert out.shape.ndims is None
    kept = tw.reduce_max(x, axis, keepdims=True)
    assert kept.shape.as_list() == [None, None]
    np.testing.assert_array_equal(run(out, {axis: [1]}), [2.0, 5.0])
    with pytest.raises(errors.InvalidArgumentError, match="Invalid reduction dimension"):
        run(out, {axis: [2]})


def test_invalid_static_reduction_axis_raises_value_error():
    with pytest.raises(ValueError, match="Invalid reduction dimension 2 for input with 2"):
        tw.reduce_sum(tw.constant([[1.0]]), axis=2)
    with pytest.raises(TypeError):
        tw.reduce_sum(tw.constant([True]))


def test_max_and_min_of_empty_ranges_give_the_identity():
    x = tw.constant(np.zeros((0, 2), np.float32))
    ints = tw.constant(np.zeros((0,), np.int8))
    results = run([tw.reduce_max(x, 0), tw.reduce_min(x, 0), tw.reduce_max(ints),
                   tw.reduce_sum(x, 0)])
    check(results[0], np.array([-np.inf, -np.inf], np.float32))
    check(results[1], np.array([np.inf, np.inf], np.float32))
    check(results[2], np.int8(-128))
    check(results[3], np.zeros(2, np.float32))


def test_reduce_over_all_axes_of_unknown_rank():
    x = tw.placeholder(tw.float32, None)
    out = tw.reduce_sum(x)
    assert out.shape.as_list() == []
    check(run(out, {x: np.ones((2, 3, 4))}), np.float32(24))


def test_reduce_logsumexp_is_stable():
    x = np.array([[1000.0, 1000.0], [-np.inf, -np.inf], [0.0, np.log(3.0)]], np.float32)
    tx = tw.constant(x)
    results = run([tw.reduce_logsumexp(tx, 1), tw.reduce_logsumexp(tx, 1, keepdims=True),
                   tw.reduce_logsumexp(tw.constant([0.0, 0.0]))])
    expected = np.array([1000 + np.log(2), -np.inf, np.log(4)], np.float32)
    check(results[0], expected)
    check(results[1], expected[:, None])
    check(results[2], np.float32(np.log(2)))


def test_count_nonzero():
    x = tw.constant([[0, 1, 2], [0, 0, 3]])
    results = run([tw.count_nonzero(x), tw.count_nonzero(x, axis=1, dtype=tw.int32),
                   tw.count_nonzero(input=tw.constant([0.0, 0.5]), keepdims=True)])
    check(results[0], np.int64(3))
    check(results[1], np.array([2, 1], np.int32))
    check(results[2], np.array([1], np.int64))


def test_count_nonzero_of_strings_counts_non_empty_ones():
    words = tw.constant([["", "a"], ["b", "cc"]])
    results = run([tw.count_nonzero(words), tw.count_nonzero(words, axis=1),
                   tw.count_nonzero(words, axis=0, keepdims=True, dtype=tw.int32)])
    check(results[0], np.int64(3))
    check(results[1], np.array([1, 2], np.int64))
    check(results[2], np.array([[1, 2]], np.int32))


@pytest.mark.parametrize("reduce", ["reduce_all", "reduce_any"])
def test_all_and_any_of_empty_python_input(reduce):
    # reduction_ops_test (All/Any).testEmpty: an empty list converts as bool.
    fn, identity = getattr(tw, reduce), reduce == "reduce_all"
    results = run([fn([], [0]), fn([], [0], keepdims=True), fn([]),
                   fn(np.zeros((2, 0), bool), -1), fn(np.zeros((0, 0), bool), [0, 1])])
    check(results[0], np.bool_(identity))
    check(results[1], np.array([identity]))
    check(results[2], np.bool_(identity))
    check(results[3], np.array([identity, identity]))
    check(results[4], np.bool_(identity))
    with pytest.raises(TypeError):
        fn(tw.constant([1.0]))


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int8, np.uint8, np.bool_])
def test_argmax_argmin(dtype):
    x = np.array([[1, 5, 2], [7, 0, 7]]).astype(dtype)
    t = tw.constant(x)
    outs = [tw.argmax(t, 1), tw.argmin(t, axis=0), tw.argmax(t, dimension=-1,
                                                              output_type=tw.int32),
            tw.argmin(t)]
    assert outs[0].shape.as_list() == [2]
    results = run(outs)
    check(results[0], np.argmax(x, 1).astype(np.int64))
    check(results[1], np.argmin(x, 0).astype(np.int64))
    check(results[2], np.argmax(x, -1).astype(np.int32))
    check(results[3], np.argmin(x, 0).astype(np.int64))


def test_argmax_errors():
    x = tw.constant([[1.0, 2.0]])
    with pytest.raises(ValueError, match="Cannot specify both"):
        tw.argmax(x, axis=0, dimension=0)
    with pytest.raises(ValueError, match="Expected dimension in the range"):
        tw.argmax(x, 2)
    with pytest.raises(TypeError):
        tw.argmax(x, 0, output_type=tw.float32)
    empty = tw.placeholder(tw.float32, None)
    with pytest.raises(errors.InvalidArgumentError, match="Reduction axis 0 is empty"):
        run(tw.argmax(empty, 0), {empty: np.zeros((0,))})


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8, np.uint8, np.int64])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_and_cumprod(dtype, exclusive, reverse):
    x = np.array([[1, 2, 3], [4, 1, 2]]).astype(dtype)

    def ref(fn, identity, axis):
        y = np.flip(x, axis) if reverse else x
        r = fn(y, axis=axis)
        if exclusive:
            r = np.concatenate([np.full_like(np.take(r, [0], axis), identity),
                                np.delete(r, -1, axis)], axis)
        return (np.flip(r, axis) if reverse else r).astype(dtype)

    t = tw.constant(x)
    outs = [tw.cumsum(t, 1, exclusive, reverse), tw.cumprod(t, -2, exclusive, reverse),
            tw.cumsum(t, exclusive=exclusive, reverse=reverse)]
    results = run(outs)
    check(results[0], ref(np.cumsum, 0, 1), dtype)
    check(results[1], ref(np.cumprod, 1, 0), dtype)
    check(results[2], ref(np.cumsum, 0, 0), dtype)


def test_cumsum_axis_errors():
    with pytest.raises(ValueError, match="must be rank 0"):
        tw.cumsum(tw.constant([1.0]), [0])
    axis = tw.placeholder(tw.int32, [])
    with pytest.raises(errors.InvalidArgumentError, match="Expected scan axis"):
        run(tw.cumsum(tw.constant([1.0]), axis), {axis: 3})


def test_add_n():
    xs = [np.arange(6, dtype=np.int8).reshape(2, 3) * k for k in (1, 2, 3)]
    results = run([tw.add_n([tw.constant(x) for x in xs]), tw.add_n([tw.constant(xs[0])]),
                   tw.add_n([tw.constant([1.0]), [2.0]])])
    check(results[0], xs[0] * 6)
    check(results[1], xs[0])
    check(results[2], np.array([3.0], np.float32))
    with pytest.raises(ValueError, match="must be a list"):
        tw.add_n([])
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        tw.add_n([tw.constant([1.0, 2.0]), tw.constant([1.0, 2.0, 3.0])])
    with pytest.raises(TypeError):
        tw.add_n([tw.constant([1.0]), tw.constant([1])])
    a, b = tw.placeholder(tw.float32, None), tw.placeholder(tw.float32, None)
    with pytest.raises(errors.InvalidArgumentError, match="same size and shape"):
        run(tw.add_n([a, b]), {a: [1.0], b: [1.0, 2.0]})


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8])
def test_add_n_of_many_small_inputs_adds_them_in_order(dtype):
    # TF's AddN adds left to right; many small inputs are added in one call, which must round
    # (and wrap) exactly as that order does, not as a sum in another order would
    if np.dtype(dtype).kind == "f":
        values = [(RNG.standard_normal((2, 3)) * 10.0 ** RNG.integers(-3, 4)).astype(dtype)
                  for _ in range(40)]
        exact = np.sum(np.stack(values).astype(np.float64), axis=0).astype(dtype)
        assert exact.tobytes() != functools.reduce(np.add, values).tobytes()  # order matters
    else:
        values = [RNG.integers(-128, 128, (2, 3)).astype(dtype) for _ in range(40)]
    xs = [tw.placeholder(dtype, (2, 3)) for _ in values]
    got = run(tw.add_n(xs), dict(zip(xs, values)))
    expected = functools.reduce(np.add, values)
    assert got.dtype == dtype
    assert got.tobytes() == expected.tobytes()


def test_clip_by_value():
    x = np.array([[-2.0, 0.5, 3.0], [1.0, 9.0, -1.0]], np.float32)
    t = tw.constant(x)
    same_shape_bounds = tw.clip_by_value(t, np.zeros((2, 3), np.float32), 2.0)
    broadcast_bounds = tw.clip_by_value(t, [0.0, -1.0, 1.0], 2.0)
    ints = tw.clip_by_value(tw.constant(np.array([0, 100, 255], np.uint8)), 10, 200)
    assert same_shape_bounds.op.type == "ClipByValue"
    results = run([tw.clip_by_value(t, -1.0, 2.0), same_shape_bounds, broadcast_bounds, ints])
    check(results[0], np.clip(x, -1, 2))
    check(results[1], np.clip(x, 0, 2))
    check(results[2], np.clip(x, np.array([0, -1, 1], np.float32), np.float32(2)))
    check(results[3], np.array([10, 100, 200], np.uint8))
    with pytest.raises(ValueError):
        tw.clip_by_value(tw.constant([1.0, 2.0]), tw.constant([[0.0], [1.0]]), 3.0)
    with pytest.raises(ValueError, match="scalars or have the same shape"):
        tw.raw_ops.ClipByValue(t=t, clip_value_min=[0.0, 1.0], clip_value_max=2.0)


def test_clip_by_norm():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [0.3, 0.4]], np.float32)
    t = tw.constant(x)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    results = run([tw.clip_by_norm(t, 1.0), tw.clip_by_norm(t, 1.0, axes=[1]),
                   tw.clip_by_norm(t, 100.0), tw.clip_by_norm(tw.zeros([2]), 1.0)])
    check(results[0], x / np.linalg.norm(x))
    check(results[1], x / np.maximum(norms, 1.0))
    check(results[2], x)
    check(results[3], np.zeros(2, np.float32))
    with pytest.raises(ValueError):  # a clip_norm that would broadcast t to a bigger shape
        tw.clip_by_norm(tw.constant([1.0, 2.0]), tw.constant([[1.0], [2.0]]))


def test_global_norm_and_clip_by_global_norm():
    a = np.array([[3.0, 4.0], [1.0, 2.0]], np.float32)
    b = np.array([2.0, 4.0], np.float32)
    norm = np.sqrt(np.sum(a ** 2) + np.sum(b ** 2))
    clipped, used = tw.clip_by_global_norm([tw.constant(a), None, tw.constant(b)], 2.0)
    assert clipped[1] is None and used.name == "global_norm/global_norm:0"
    unclipped, _ = tw.clip_by_global_norm([tw.constant(a)], 100.0)
    results = run([tw.global_norm([tw.constant(a), tw.constant(b)]), used, clipped[0],
                   clipped[2], unclipped[0]])
    check(results[0], np.float32(norm))
    check(results[1], np.float32(norm))
    check(results[2], a * 2.0 / norm)
    check(results[3], b * 2.0 / norm)
    check(results[4], a)
    with np.errstate(invalid="ignore"):
        nan, _ = tw.clip_by_global_norm([tw.constant(a)], 1.0, use_norm=tw.constant(np.inf))
        assert np.isnan(run(nan[0])).all()  # a non-finite norm poisons the result, as in TF
    with pytest.raises(TypeError, match="sequence"):
        tw.global_norm(tw.constant(a))


def test_log_sigmoid_and_tf1_arg_max():
    x = np.array([-100.0, -1.0, 0.0, 3.0], np.float32)
    results = run([tw.log_sigmoid(x), tw.arg_max([[1, 3], [5, 0]], 1),
                   tw.arg_min([[1, 3], [5, 0]], dimension=0, output_type=tw.int32)])
    check(results[0], -np.logaddexp(0, -x.astype(np.float64)), np.float32)
    check(results[1], np.array([1, 0], np.int64))
    check(results[2], np.array([0, 1], np.int32))
    assert tw.math.log_sigmoid is tw.log_sigmoid


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True),
                                        (True, True)])
def test_matmul_matches_numpy(dtype, ta, tb):
    a = RNG.integers(-3, 4, (2, 3)).astype(dtype)
    b = RNG.integers(-3, 4, (3, 4)).astype(dtype)
    a_in, b_in = (a.T.copy() if ta else a), (b.T.copy() if tb else b)
    out = tw.matmul(tw.constant(a_in), tw.constant(b_in), transpose_a=ta, transpose_b=tb)
    adj = tw.matmul(tw.constant(a_in), tw.constant(b_in), adjoint_a=ta, adjoint_b=tb)
    assert out.op.type == "MatMul"
    assert out.shape.as_list() == [2, 4]
    results = run([out, adj])
    check(results[0], a @ b, dtype)
    check(results[1], a @ b, dtype)


def test_matmul_errors():
    a, b = tw.constant(np.ones((2, 3), np.float32)), tw.constant(np.ones((4, 5), np.float32))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4 for"):
        tw.matmul(a, b)
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tw.raw_ops.MatMul(a=tw.constant([1.0]), b=b)
    with pytest.raises(ValueError, match="Only one of transpose_a and adjoint_a"):
        tw.matmul(a, b, transpose_a=True, adjoint_a=True)
    with pytest.raises(TypeError):
        tw.matmul(a, tw.constant(np.ones((3, 2), np.float64)))
    with pytest.raises(TypeError, match="allowed values"):
        tw.matmul(tw.constant(np.ones((2, 2), np.int8)), tw.constant(np.ones((2, 2), np.int8)))
    p, q = tw.placeholder(tw.float32, [None, None]), tw.placeholder(tw.float32, [None, None])
    with pytest.raises(errors.InvalidArgumentError, match="Matrix size-incompatible"):
        run(tw.matmul(p, q), {p: np.ones((2, 3)), q: np.ones((4, 5))})


@pytest.mark.parametrize(("shape_a", "shape_b"), [
    ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((3, 4), (6, 4, 2)), ((1, 3, 4), (4, 2))])
def test_batch_matmul_broadcasts_batch_dims(shape_a, shape_b):
    a = RNG.uniform(-1, 1, shape_a).astype(np.float32)
    b = RNG.uniform(-1, 1, shape_b).astype(np.float32)
    out = tw.matmul(tw.constant(a), tw.constant(b))
    adj = tw.matmul(tw.constant(np.swapaxes(a, -1, -2).copy()),
                    tw.constant(np.swapaxes(b, -1, -2).copy()), adjoint_a=True, transpose_b=True)
    assert out.op.type == "BatchMatMulV2"
    assert out.shape.as_list() == list(np.matmul(a, b).shape)
    results = run([out, adj])
    np.testing.assert_allclose(results[0], np.matmul(a, b), rtol=1e-5)
    np.testing.assert_allclose(results[1], np.matmul(a, b), rtol=1e-5)
    assert results[0].dtype == np.float32


def test_batch_matmul_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tw.raw_ops.BatchMatMulV2(x=np.ones((2, 2, 2), np.float32), y=np.ones((2, 3, 2),
                                                                              np.float32))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tw.matmul(np.ones((2, 2, 3), np.float32), np.ones((3, 3, 2), np.float32))
    with pytest.raises(ValueError, match="at least rank 2"):
        tw.raw_ops.BatchMatMulV2(x=np.ones(2, np.float32), y=np.ones((2, 2), np.float32))
    p = tw.placeholder(tw.float32, None)
    q = tw.placeholder(tw.float32, None)
    out = tw.matmul(p, q)
    assert out.op.type == "BatchMatMulV2"
    with pytest.raises(errors.InvalidArgumentError, match="compatible batch dimensions"):
        run(out, {p: np.ones((2, 2, 2)), q: np.ones((3, 2, 2))})


def test_scalar_mul():
    x = tw.constant([1.0, 2.0])
    check(run(tw.scalar_mul(3, x)), np.array([3.0, 6.0], np.float32))
    with pytest.raises(ValueError, match="Only scalar multiply"):
        tw.scalar_mul([1.0, 2.0], x)


@pytest.mark.parametrize(("shape_a", "shape_b", "axes"), [
    ((2, 3, 4), (4, 5), 1), ((2, 3), (3, 2), [[1], [0]]), ((2, 3, 4), (3, 4, 5), 2),
    ((3, 2, 4), (4, 3), [[0, 2], [1, 0]]), ((2, 3), (4, 5), 0), ((2, 3), (3, 2), (1, 0))])
def test_tensordot_matches_numpy(shape_a, shape_b, axes):
    a = RNG.uniform(-1, 1, shape_a).astype(np.float32)
    b = RNG.uniform(-1, 1, shape_b).astype(np.float32)
    np_axes = axes if isinstance(axes, int) else tuple(np.atleast_1d(v).tolist() for v in axes)
    out = tw.tensordot(tw.constant(a), tw.constant(b), axes)
    expected = np.tensordot(a, b, np_axes)
    assert out.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(run(out), expected, rtol=1e-5, atol=1e-6)


def test_tensordot_with_unknown_dims_and_bad_axes():
    a = tw.placeholder(tw.float32, [None, 3])
    b = tw.constant(np.ones((3, 2), np.float32))
    out = tw.tensordot(a, b, 1)
    np.testing.assert_allclose(run(out, {a: np.ones((4, 3))}), np.full((4, 2), 3.0))
    with pytest.raises(ValueError, match="Different number of contraction axes"):
        tw.tensordot(b, b, [[0, 1], [0]])
    with pytest.raises(ValueError, match="must be at least 0"):
        tw.tensordot(b, b, -1)
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.tensordot(b, b, [[0], [1]])


def test_raw_ops_access():
    x, y = tw.constant([1, 2]), tw.constant([3, 4])
    results = run([tw.raw_ops.AddV2(x=x, y=y), tw.raw_ops.Add(x=x, y=y),
                   tw.raw_ops.Sum(input=x, axis=[0], keep_dims=True),
                   tw.raw_ops.Cast(x=x, DstT=tw.float16),
                   tw.raw_ops.Inv(x=tw.constant([4.0])),
                   tw.raw_ops.Atan2(y=tw.constant([1.0]), x=tw.constant([0.0]))])
    check(results[0], np.array([4, 6], np.int32))
    check(results[1], np.array([4, 6], np.int32))
    check(results[2], np.array([3], np.int32))
    check(results[3], np.array([1, 2], np.float16))
    check(results[4], np.array([0.25], np.float32))
    check(results[5], np.array([np.pi / 2], np.float32))
    node = tw.raw_ops.Sum(input=x, axis=np.array([0], np.int64), name="s").op
    assert node.get_attr("Tidx") == tw.int64
    assert node.get_attr("keep_dims") is False


def test_default_node_names():
    x = tw.constant([1.0])
    # TF's names: the functions name their node by the op, the operators in lower case
    assert [t.op.name for t in (tw.add(x, x), tw.multiply(x, x), tw.subtract(x, x))] == \
        ["Add", "Mul", "Sub"]
    assert [t.op.name for t in (x + x, x * x, x - x)] == ["add_1", "mul_1", "sub_1"]
    assert tw.truediv(tw.constant([1]), 2).op.name == "truediv"
    assert tw.reduce_sum(x).op.name == "Sum"
    assert tw.sqrt(x, name="root").op.name == "root"
    assert tw.tensordot(x, x, 1).op.name.startswith("Tensordot")


def test_math_namespace_uses_tf_math_names():
    assert tw.math.log is tw.log
    assert tw.math.reduce_sum is tw.reduce_sum
    assert tw.math.floormod is tw.floormod
    assert tw.math.divide_no_nan is tw.div_no_nan
    assert not hasattr(tw.math, "to_float")  # TF1's top-level casts are not in tf.math
    with pytest.raises(AttributeError):
        tw.math.no_such_op  # noqa: B018


def test_variance_std_and_count_nonzero_of_bools():
    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]], np.float32)
    results = run([tw.math.reduce_variance(tw.constant(x), 1), tw.math.reduce_std(tw.constant(x)),
                   tw.count_nonzero(tw.constant([True, False, True]))])
    check(results[0], x.var(1))
    check(results[1], np.float32(x.std()))
    check(results[2], np.int64(2))
    with pytest.raises(TypeError):
        tw.math.reduce_variance(tw.constant([1, 2]))


def test_equal_and_not_equal_compare_strings() -> None:
    a = tw.constant([b"x", b"yy", b""])
    b = tw.placeholder(tw.string, [])
    eq, ne = tw.equal(a, b), tw.not_equal(a, b)
    assert eq.dtype == tw.bool and eq.shape.as_list() == [3]
    with tw.Session() as sess:
        got_eq, got_ne = sess.run([eq, ne], {b: b"yy"})
    np.testing.assert_array_equal(got_eq, [False, True, False])
    np.testing.assert_array_equal(got_ne, [True, False, True])


def test_integer_division_with_an_empty_result_ignores_a_zero_divisor() -> None:
    # TF checks the divisor per computed element: an empty broadcast computes none. The gradient
    # of reduce_sum over a fed scalar of unknown rank takes FloorMod([], rank=0) this way.
    empty = tw.constant(np.zeros([0], np.int32))
    for op in (tw.floordiv, tw.floormod, tw.truncatediv, tw.truncatemod):
        result = run(op(empty, tw.constant(0)))
        assert result.dtype == np.int32 and result.shape == (0,)
    x = tw.placeholder(tw.float32)
    w = tw.Variable(3.0)
    grad = tw.gradients(tw.reduce_sum(tw.square(x * w)), w)[0]
    with tw.Session() as sess:
        sess.run(w.initializer)
        check(sess.run(grad, {x: 2.0}), np.float32(2 * 3.0 * 2.0 ** 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nextafter_steps_to_the_next_representable_value(dtype):
    # math_ops_test.NextAfterTest
    one, zero = np.array([1.0, 0.0], dtype), np.array([2.0, -1.0], dtype)
    t = tw.math.nextafter(one, zero)
    assert t.dtype == tw.as_dtype(dtype)
    check(run(t), np.nextafter(one, zero))
    x = tw.constant(np.array([1.0, 2.0], dtype))
    grads = tw.gradients(tw.math.nextafter(x, tw.constant(dtype(0))), x)
    check(run(grads[0]), np.ones(2, dtype))
    with pytest.raises(TypeError):
        tw.math.nextafter(tw.constant([1], tw.int32), tw.constant([2], tw.int32))


def test_reciprocal_no_nan_is_zero_at_zero():
    t = tw.math.reciprocal_no_nan(tw.constant([0.0, 2.0, -4.0, np.inf]))
    assert t.op.type == "DivNoNan"
    check(run(t), np.array([0.0, 0.5, -0.25, 0.0], np.float32))
    check(run(tw.math.reciprocal_no_nan(np.array([0j, 2j]))), np.array([0j, -0.5j]))
