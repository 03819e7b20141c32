"""Special functions against Python's `math`, closed forms and high-precision series: values in
float32 and float64, edge cases (poles, domain errors, NaN), broadcasting, shape and dtype
errors, and gradients against numerical Jacobians."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors

EULER = 0.57721566490153286061
ZETA3 = 1.2020569031595942854
INF, NAN = math.inf, math.nan
# float64 results must match to ~1e-12 relative, float32 ones to ~1e-6
TOL = {tf.float64: {"rtol": 1e-12, "atol": 1e-13}, tf.float32: {"rtol": 2e-6, "atol": 1e-6}}
DTYPES = [tf.float32, tf.float64]


def run(*fetches):
    with tf.Session() as session:
        values = session.run(list(fetches))
    return values[0] if len(values) == 1 else values


def const(values, dtype):
    return tf.constant(np.asarray(values, dtype=dtype.np_type))


def check(result, expected, dtype):
    assert result.dtype == dtype.np_type
    np.testing.assert_allclose(result, np.asarray(expected, dtype=np.float64), **TOL[dtype])


def assert_edges(result, expected):
    """Exact special values: infinities (with sign), NaN and exact numbers."""
    np.testing.assert_array_equal(result, np.asarray(expected, dtype=result.dtype))


# -- lgamma ------------------------------------------------------------------------------------

GAMMA_POINTS = [0.01, 0.3, 0.5, 0.9, 1.3, 1.5, 2.7, 3.5, 7.25, 10.0, 17.5, 33.3, 100.0, 1e4,
                -0.3, -0.5, -1.5, -2.25, -7.75, -30.5]


@pytest.mark.parametrize("dtype", DTYPES)
def test_lgamma_matches_math(dtype):
    x = np.asarray(GAMMA_POINTS)
    result = run(tf.lgamma(const(x, dtype)))
    check(result, [math.lgamma(float(v)) for v in x.astype(dtype.np_type)], dtype)


def test_lgamma_is_log_abs_gamma():
    x = np.linspace(-4.75, 30.0, 140)
    x = x[np.abs(x - np.round(x)) > 0.05]
    result = run(tf.lgamma(const(x, tf.float64)))
    np.testing.assert_allclose(result, [math.log(abs(math.gamma(v))) for v in x], rtol=1e-12,
                               atol=1e-13)


def test_lgamma_near_its_zeros_keeps_relative_accuracy():
    # lgamma(1 + e) = -gamma e + zeta(2) e^2 / 2 - zeta(3) e^3 / 3 + O(e^4)
    e = np.array([1e-3, -1e-5, 1e-9])
    result = run(tf.lgamma(const(1.0 + e, tf.float64)))
    e = (1.0 + e) - 1.0
    expected = -EULER * e + math.pi ** 2 / 12 * e ** 2 - ZETA3 / 3 * e ** 3
    np.testing.assert_allclose(result, expected, rtol=1e-9)


def test_lgamma_edges():
    result = run(tf.lgamma(const([1.0, 2.0, 0.0, -1.0, -3.0, -1e20, INF, -INF, NAN], tf.float64)))
    assert_edges(result, [0.0, 0.0, INF, INF, INF, INF, INF, INF, NAN])


def test_lgamma_float16_and_integer_input():
    result = run(tf.lgamma(const([0.5, 3.0], tf.float16)))
    assert result.dtype == np.float16
    np.testing.assert_allclose(result, [math.lgamma(0.5), math.log(2.0)], rtol=1e-3)
    with pytest.raises(TypeError):
        tf.lgamma(tf.constant([1, 2]))


# -- digamma -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_digamma_closed_forms(dtype):
    n = np.arange(1, 30)
    harmonic = [sum(1.0 / k for k in range(1, m)) for m in n]
    x = np.concatenate([n, [0.5, 1.5, -0.5]])
    expected = [h - EULER for h in harmonic] + [
        -EULER - 2 * math.log(2), 2 - EULER - 2 * math.log(2), 2 - EULER - 2 * math.log(2)]
    check(run(tf.digamma(const(x, dtype))), expected, dtype)


def test_digamma_is_the_derivative_of_lgamma():
    x = np.concatenate([np.linspace(0.3, 40.0, 60), [-0.3, -1.7, -4.4]])
    h = 1e-5
    numeric = [(math.lgamma(v + h) - math.lgamma(v - h)) / (2 * h) for v in x]
    np.testing.assert_allclose(run(tf.math.digamma(const(x, tf.float64))), numeric, rtol=1e-7,
                               atol=1e-7)


def test_digamma_reflection():
    x = np.array([-0.25, -1.6, -3.3, -10.9])
    result = run(tf.digamma(const(x, tf.float64)))
    expected = run(tf.digamma(const(1.0 - x, tf.float64))) - math.pi / np.tan(math.pi * x)
    np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_digamma_edges():
    result = run(tf.digamma(const([0.0, -1.0, -5.0, INF, NAN], tf.float64)))
    assert_edges(result, [INF, INF, INF, INF, NAN])


# -- zeta and polygamma ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_zeta_closed_forms(dtype):
    x = const([2.0, 4.0, 2.0, 3.0, 6.0], dtype)
    q = const([1.0, 1.0, 0.5, 1.0, 1.0], dtype)
    expected = [math.pi ** 2 / 6, math.pi ** 4 / 90, math.pi ** 2 / 2, ZETA3,
                math.pi ** 6 / 945]
    check(run(tf.zeta(x, q)), expected, dtype)


def test_zeta_recurrence_in_q():
    x = np.array([[1.5], [2.0], [3.7], [12.0]])
    q = np.array([0.2, 1.0, 3.3, 25.0])
    lower, upper = run(tf.zeta(const(x, tf.float64), const(q, tf.float64)),
                       tf.zeta(const(x, tf.float64), const(q + 1.0, tf.float64)))
    assert lower.shape == (4, 4)
    np.testing.assert_allclose(lower, upper + q ** -x, rtol=1e-12)


def test_zeta_edges():
    x = const([1.0, 0.5, 2.0, 2.0, 2.5, 3.0, NAN], tf.float64)
    q = const([1.0, 1.0, 0.0, -3.0, -2.5, -2.5, 1.0], tf.float64)
    result = run(tf.zeta(x, q))
    # zeta(3, -2.5) sums the three negative terms, then continues as zeta(3, 0.5) = 7 zeta(3)
    tail = (-2.5) ** -3 + (-1.5) ** -3 + (-0.5) ** -3 + 7 * ZETA3
    assert_edges(result[:6], [INF, NAN, INF, INF, NAN, result[5]])
    assert math.isnan(result[6])
    np.testing.assert_allclose(result[5], tail, rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_polygamma_closed_forms(dtype):
    n = const([1.0, 1.0, 2.0, 3.0, 0.0], dtype)
    x = const([1.0, 0.5, 1.0, 1.0, 1.0], dtype)
    expected = [math.pi ** 2 / 6, math.pi ** 2 / 2, -2 * ZETA3, math.pi ** 4 / 15, -EULER]
    check(run(tf.polygamma(n, x)), expected, dtype)


def test_polygamma_broadcasts_and_rejects_fractional_orders():
    n = const([[0.0], [1.0], [1.5], [-1.0]], tf.float64)
    x = const([1.0, 2.0, 3.0], tf.float64)
    result = run(tf.math.polygamma(n, x))
    assert result.shape == (4, 3)
    np.testing.assert_allclose(result[0], [-EULER, 1 - EULER, 1.5 - EULER], rtol=1e-12)
    np.testing.assert_allclose(result[1], [math.pi ** 2 / 6, math.pi ** 2 / 6 - 1,
                                           math.pi ** 2 / 6 - 1.25], rtol=1e-12)
    assert np.isnan(result[2:]).all()


# -- incomplete gamma --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_igamma_of_one_is_the_exponential_cdf(dtype):
    x = np.array([0.01, 0.5, 1.0, 2.0, 7.5, 30.0])
    lower, upper = run(tf.igamma(const(1.0, dtype), const(x, dtype)),
                       tf.igammac(const(1.0, dtype), const(x, dtype)))
    check(lower, -np.expm1(-x), dtype)
    check(upper, np.exp(-x), dtype)


def test_igamma_of_one_half_is_erf_of_the_root():
    x = np.array([0.001, 0.2, 0.9, 1.0, 3.0, 12.0, 40.0])
    lower, upper = run(tf.igamma(0.5, const(x, tf.float64)), tf.igammac(0.5, const(x, tf.float64)))
    np.testing.assert_allclose(lower, [math.erf(math.sqrt(v)) for v in x], rtol=1e-12)
    np.testing.assert_allclose(upper, [math.erfc(math.sqrt(v)) for v in x], rtol=1e-11)


def test_igammac_of_integers_is_a_poisson_tail():
    a = np.array([[2.0], [5.0], [20.0], [60.0]])
    x = np.array([0.5, 3.0, 20.0, 70.0])
    result = run(tf.igammac(const(a, tf.float64), const(x, tf.float64)))
    expected = [[math.exp(-v) * sum(v ** k / math.factorial(k) for k in range(int(n)))
                 for v in x] for n in a[:, 0]]
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-300)
    lower = run(tf.igamma(const(a, tf.float64), const(x, tf.float64)))
    np.testing.assert_allclose(lower + result, np.ones((4, 4)), rtol=1e-14)


def test_igamma_edges():
    a = const([1.0, 0.0, -1.0, 1.0, 1.0, 0.0, NAN, 2.0], tf.float64)
    x = const([0.0, 0.0, 1.0, -1.0, INF, 1.0, 1.0, NAN], tf.float64)
    lower, upper = run(tf.igamma(a, x), tf.igammac(a, x))
    assert_edges(lower, [0.0, 0.0, NAN, NAN, 1.0, NAN, NAN, NAN])
    assert_edges(upper, [1.0, NAN, NAN, NAN, 0.0, NAN, NAN, NAN])


def test_igamma_grad_a_matches_differences():
    a = np.array([0.3, 1.0, 2.5, 7.0, 30.0])
    x = np.array([[0.2], [1.5], [6.0], [40.0]])
    h = 1e-6
    grad, up, down = run(tf.raw_ops.IgammaGradA(a=const(a, tf.float64), x=const(x, tf.float64)),
                         tf.igamma(const(a + h, tf.float64), const(x, tf.float64)),
                         tf.igamma(const(a - h, tf.float64), const(x, tf.float64)))
    np.testing.assert_allclose(grad, (up - down) / (2 * h), atol=1e-8)


# -- incomplete beta ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_betainc_closed_forms(dtype):
    x = np.linspace(0.0, 1.0, 21)
    ones = const(np.ones(21), dtype)
    xt = const(x, dtype)
    uniform, power, complement, cubic = run(
        tf.betainc(ones, ones, xt), tf.betainc(2.5 * ones, ones, xt),
        tf.betainc(ones, 3.5 * ones, xt), tf.betainc(2.0 * ones, 2.0 * ones, xt))
    check(uniform, x, dtype)
    check(power, x ** 2.5, dtype)
    check(complement, 1 - (1 - x) ** 3.5, dtype)
    check(cubic, 3 * x ** 2 - 2 * x ** 3, dtype)


def test_betainc_symmetry_and_scalar_operands():
    a, b = const([0.7, 3.0, 40.0, 12.0], tf.float64), const([2.0, 0.4, 25.0, 300.0], tf.float64)
    direct, mirrored = run(tf.betainc(a, b, 0.3), tf.betainc(b, a, 0.7))
    np.testing.assert_allclose(direct + mirrored, np.ones(4), rtol=1e-12)
    # binomial tail: I_p(k, n-k+1) = P(X >= k) for X ~ Binomial(n, p)
    tail = sum(math.comb(10, j) * 0.3 ** j * 0.7 ** (10 - j) for j in range(4, 11))
    np.testing.assert_allclose(run(tf.betainc(4.0, 7.0, const(0.3, tf.float64))), tail,
                               rtol=1e-12)


def test_betainc_edges():
    a = const([0.0, 1.0, 1.0, 1.0, 1.0, 2.0, NAN], tf.float64)
    b = const([1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 1.0], tf.float64)
    x = const([0.5, 0.0, 1.0, -0.1, 1.1, 0.5, 0.5], tf.float64)
    assert_edges(run(tf.betainc(a, b, x)), [NAN, 0.0, 1.0, NAN, NAN, NAN, NAN])


def test_betainc_shapes():
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        tf.betainc(tf.ones([2]), tf.ones([3]), 0.5)
    with pytest.raises(ValueError, match="equal rank"):
        tf.betainc(tf.ones([2]), tf.ones([2, 2]), 0.5)
    assert tf.betainc(1.0, tf.ones([2, 3]), 0.5).shape.as_list() == [2, 3]
    assert tf.betainc(1.0, 1.0, 0.5).shape.as_list() == []
    a = tf.placeholder(tf.float32)
    b = tf.placeholder(tf.float32)
    y = tf.betainc(a, b, 0.5)
    with tf.Session() as session:
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"Shapes of a and b are inconsistent: \[2\] vs. \[3\]"):
            session.run(y, {a: np.ones(2), b: np.ones(3)})


def test_mixed_dtypes_raise_type_error():
    with pytest.raises(TypeError):
        tf.igamma(tf.ones([2], tf.float32), tf.ones([2], tf.float64))
    with pytest.raises(TypeError):
        tf.betainc(tf.ones([2], tf.float32), tf.ones([2], tf.float64), 0.5)
    with pytest.raises(TypeError):
        tf.zeta(tf.constant([2, 3]), tf.constant([1, 1]))


def test_binary_ops_incompatible_shapes():
    with pytest.raises(ValueError):
        tf.igamma(tf.ones([2]), tf.ones([3]))
    a = tf.placeholder(tf.float64)
    x = tf.placeholder(tf.float64)
    with tf.Session() as session:
        with pytest.raises(errors.InvalidArgumentError, match="Incompatible shapes"):
            session.run(tf.zeta(a, x), {a: np.ones(2) * 2, x: np.ones(3)})


# -- Bessel ------------------------------------------------------------------------------------


def bessel_scaled(v: float, order: int) -> float:
    """e^-|v| I_order(v) from the power series summed at 50 digits."""
    with localcontext() as ctx:
        ctx.prec = 50
        d = Decimal(v)
        quarter = d * d / 4
        term = Decimal(1) if order == 0 else d / 2
        total, k = term, 1
        while abs(term) > abs(total) * Decimal(10) ** -35 or k < 3:
            term = term * quarter / (k * (k + order))
            total += term
            k += 1
        return float(total * (-abs(d)).exp())


BESSEL_POINTS = [0.0, 1e-4, 0.5, -1.0, 3.3, -7.9, 8.1, 15.0, -19.9, 20.0, 20.1, 33.0, -80.0,
                 250.0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_bessel_scaled_match_the_series(dtype):
    x = np.asarray(BESSEL_POINTS, dtype=dtype.np_type)
    i0e, i1e = run(tf.math.bessel_i0e(const(x, dtype)), tf.math.bessel_i1e(const(x, dtype)))
    check(i0e, [bessel_scaled(float(v), 0) for v in x], dtype)
    check(i1e, [bessel_scaled(float(v), 1) for v in x], dtype)


def test_bessel_unscaled_compositions():
    x = np.array([-3.0, 0.0, 0.5, 6.0])
    i0, i1 = run(tf.math.bessel_i0(const(x, tf.float64), name="b0"),
                 tf.math.bessel_i1(const(x, tf.float64)))
    np.testing.assert_allclose(i0, [math.exp(abs(v)) * bessel_scaled(v, 0) for v in x],
                               rtol=1e-13)
    np.testing.assert_allclose(i1, [math.exp(abs(v)) * bessel_scaled(v, 1) for v in x],
                               rtol=1e-13)
    assert tf.math.bessel_i0(1.0, name="b0").op.name.startswith("b0")


def test_bessel_edges():
    x = const([INF, -INF, NAN], tf.float64)
    i0e, i1e = run(tf.math.bessel_i0e(x), tf.math.bessel_i1e(x))
    assert_edges(i0e, [0.0, 0.0, NAN])
    assert_edges(i1e, [0.0, -0.0, NAN])


# -- lbeta and the API surface -----------------------------------------------------------------


def test_lbeta_reduces_the_last_dimension():
    x = np.array([[[1.0, 2.0], [3.0, 4.5]], [[0.5, 0.5], [10.0, 20.0]]])
    result = run(tf.lbeta(const(x, tf.float64)))
    expected = [[sum(math.lgamma(v) for v in row) - math.lgamma(sum(row)) for row in block]
                for block in x]
    assert result.shape == (2, 2)
    np.testing.assert_allclose(result, expected, rtol=1e-12)
    assert run(tf.math.lbeta(tf.zeros([3, 0], tf.float64))).tolist() == [-INF] * 3
    assert tf.lbeta([1.0, 2.0], name="lb").op.name == "lb"


def test_api_names():
    for name in ("lgamma", "digamma", "polygamma", "zeta", "igamma", "igammac", "betainc",
                 "lbeta"):
        assert getattr(tf.math, name) is getattr(tf, name)
    for name in ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"):
        assert callable(getattr(tf.math, name))
        assert not hasattr(tf, name)
    y = tf.raw_ops.Lgamma(x=tf.constant([3.0]))
    assert y.op.type == "Lgamma"
    np.testing.assert_allclose(run(y), [math.log(2.0)], rtol=1e-6)


# -- gradients ---------------------------------------------------------------------------------


def gradient_error(fn, inits, out_shape=None, delta=1e-6):
    xs = [tf.placeholder(tf.float64, np.shape(v)) for v in inits]
    y = fn(*xs)
    shape = list(np.shape(inits[0])) if out_shape is None else out_shape
    return tf.test.compute_gradient_error(xs, [list(np.shape(v)) for v in inits], y, shape,
                                          x_init_value=[np.asarray(v) for v in inits],
                                          delta=delta)


@pytest.mark.parametrize("name, fn, init", [
    ("lgamma", tf.lgamma, [0.3, 1.7, 4.2, -0.4]),
    ("digamma", tf.digamma, [0.3, 1.7, 4.2, -0.4]),
    ("bessel_i0e", tf.math.bessel_i0e, [-3.0, -0.2, 0.7, 25.0]),
    ("bessel_i1e", tf.math.bessel_i1e, [-3.0, -0.2, 0.7, 25.0]),
    ("bessel_i0", tf.math.bessel_i0, [-3.0, -0.2, 0.7, 5.0]),
    ("bessel_i1", tf.math.bessel_i1, [-3.0, -0.2, 0.7, 5.0]),
])
def test_unary_gradients(name, fn, init):
    assert gradient_error(fn, [np.array(init)]) < 1e-6


def test_polygamma_and_zeta_gradients():
    x = np.array([0.6, 1.3, 2.9])
    assert gradient_error(lambda v: tf.polygamma(tf.constant(2.0, tf.float64), v), [x]) < 1e-5
    assert gradient_error(lambda q: tf.zeta(tf.constant([[2.5], [4.0]], tf.float64), q), [x],
                          [2, 3]) < 1e-5
    n = tf.constant(1.0, tf.float64)
    q = tf.constant([1.0, 2.0], tf.float64)
    assert tf.gradients(tf.polygamma(n, q), [n])[0] is None
    assert tf.gradients(tf.zeta(n + 1.0, q), [n])[0] is None


def test_igamma_gradients_in_both_arguments():
    a = np.array([[0.5], [2.0], [8.0]])
    x = np.array([0.3, 1.5, 9.0])
    assert gradient_error(lambda p, v: tf.igamma(p, v), [a, x], [3, 3]) < 1e-6
    assert gradient_error(lambda p, v: tf.igammac(p, v), [a, x], [3, 3]) < 1e-6


def test_igamma_grad_a_has_no_gradient():
    a = tf.constant([2.0], tf.float64)
    grad_a = tf.gradients(tf.igamma(a, tf.constant([1.0], tf.float64)), [a])[0]
    with pytest.raises(LookupError):
        tf.gradients(grad_a, [a])


def test_betainc_gradient_in_x_only():
    a = tf.constant([0.5, 2.0, 1.0], tf.float64)
    b = tf.constant([3.0, 1.5, 1.0], tf.float64)
    assert gradient_error(lambda v: tf.betainc(a, b, v), [np.array([0.1, 0.5, 0.8])]) < 1e-6
    # a scalar x gets the gradient summed over the output
    assert gradient_error(lambda v: tf.betainc(a, b, v), [np.array(0.3)], [3]) < 1e-6
    grads = tf.gradients(tf.betainc(a, b, tf.constant([0.5, 0.5, 0.5], tf.float64)), [a, b])
    assert grads == [None, None]
    # finite at the tails where TF 1.15 gave NaN: d/dx betainc(1, 2, x) = 2 (1 - x)
    at = tf.constant([0.0, 1.0], tf.float64)
    grad = tf.gradients(tf.betainc(tf.ones([2], tf.float64), 2.0 * tf.ones([2], tf.float64), at),
                        [at])[0]
    np.testing.assert_allclose(run(grad), [2.0, 0.0])


def test_bessel_i1e_gradient_at_zero():
    x = tf.constant([0.0], tf.float64)
    grad = run(tf.gradients(tf.math.bessel_i1e(x), [x])[0])
    np.testing.assert_array_equal(grad, [0.5])
