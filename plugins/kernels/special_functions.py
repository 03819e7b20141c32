"""Special functions (log-gamma, digamma, Hurwitz zeta, polygamma, regularized incomplete gamma
and beta, scaled modified Bessel functions), written against an array module ``xp``.

Contract: every function takes real arrays (broadcast together), computes in float64 and returns
float64, elementwise and vectorized: the iterative algorithms run whole-array steps until every
element has converged, never a Python loop per element. Edge cases follow the Eigen/Cephes
kernels behind TensorFlow 1.15: poles give +inf (lgamma and digamma at non-positive integers,
zeta at x = 1 or at non-positive integer q), arguments outside the domain give NaN (igamma with
a <= 0 or x < 0, betainc with a, b <= 0 or x outside [0, 1], zeta with x < 1, polygamma of a
non-integer order), and NaN propagates. Callers must silence floating-point warnings: unused
branches are computed on placeholder values and may overflow.

Algorithms (none needs a table of magic constants: the only coefficients are Bernoulli numbers,
computed exactly below):
- lgamma: Stirling's series with 8 Bernoulli terms once the argument is raised to >= 10 by the
  recurrence Gamma(z + 1) = z Gamma(z); the reflection formula for x < 1/2.
- digamma: the asymptotic series psi(z) ~ log z - 1/(2z) - sum B_2k / (2k z^2k) after the
  recurrence psi(z + 1) = psi(z) + 1/z; the reflection formula psi(x) = psi(1 - x) - pi cot(pi x)
  for x <= 0.
- zeta (Hurwitz): direct summation of (q + k)^-x until q + k >= 9, then the Euler-Maclaurin tail
  with 12 Bernoulli terms (Cephes' zeta.c scheme); polygamma(n, x) = (-1)^(n+1) n! zeta(n+1, x).
- igamma / igammac: the power series of P(a, x) where x <= 1 or x <= a, else the continued
  fraction of Q(a, x) (Numerical Recipes 3rd ed. 6.2.5 and 6.2.7) evaluated by its convergents;
  d/da P(a, x) by forward-mode differentiation of both (R. Moore, "Algorithm AS 187", 1982).
- betainc: the continued fraction of I_x(a, b) by the modified Lentz method, on the side of the
  symmetry I_x(a, b) = 1 - I_(1-x)(b, a) where it converges fast (Numerical Recipes 6.4).
- i0e / i1e: the power series of I_nu(x) (all terms positive) for |x| <= 20, Hankel's asymptotic
  expansion e^x / sqrt(2 pi x) sum_k (-1)^k prod_j (4 nu^2 - (2j - 1)^2) / (k! (8x)^k) above
  (Abramowitz & Stegun 9.6.10 and 9.7.1); at |x| = 20 the series needs 45 terms and the
  expansion's 30th term is below 1e-17.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

EPS = 2.0 ** -53
# relative change below which an iteration has converged: a few ulps, since the rounding of each
# step keeps a converged value jittering by an ulp or two
CONVERGED = 2.0 ** -50
TINY = 1e-300  # keeps the Lentz recurrences away from division by zero
BIG = 2.0 ** 500  # rescaling threshold of the continued-fraction convergents
MAX_ITERATIONS = 2000
CHECK_EVERY = 8  # iterations between convergence checks (each check reduces the whole array)


def _even_bernoulli(count: int) -> list[Fraction]:
    """B_2, B_4, ..., B_2count, exactly, from sum_{j <= m} C(m + 1, j) B_j = 0."""
    numbers = [Fraction(1)]
    for m in range(1, 2 * count + 1):
        numbers.append(-sum(math.comb(m + 1, j) * numbers[j] for j in range(m)) / (m + 1))
    return [numbers[2 * k] for k in range(1, count + 1)]


_B = _even_bernoulli(12)
# Stirling: lgamma(z) ~ (z - 1/2) log z - z + log(2 pi)/2 + sum B_2k / (2k (2k - 1) z^(2k-1))
STIRLING = [float(b / (2 * k * (2 * k - 1))) for k, b in enumerate(_B[:8], start=1)]
# digamma: psi(z) ~ log z - 1/(2z) - sum B_2k / (2k z^2k)
DIGAMMA = [float(b / (2 * k)) for k, b in enumerate(_B[:8], start=1)]
# Euler-Maclaurin tail of the Hurwitz zeta: B_2j / (2j)!
EULER_MACLAURIN = [float(b / math.factorial(2 * j)) for j, b in enumerate(_B, start=1)]
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
EULER_GAMMA = 0.57721566490153286061
RECURRENCE_FLOOR = 10.0  # lgamma/digamma arguments are raised to this before the series
ZETA_FLOOR = 9.0  # q + k where zeta switches from summation to Euler-Maclaurin
BESSEL_SWITCH = 20.0
BESSEL_SERIES_TERMS = 45
BESSEL_ASYMPTOTIC_TERMS = 30


def _f64(xp: Any, *arrays: Any) -> list[Any]:
    return list(xp.broadcast_arrays(*(xp.asarray(a, dtype=xp.float64) for a in arrays)))


def _poly(z: Any, coeffs: list[float]) -> Any:
    """Horner evaluation of sum(coeffs[i] * z**i)."""
    result = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        result = result * z + c
    return result


def _unconverged(xp: Any, pending: Any) -> bool:
    return bool(xp.any(pending))


# -- gamma family ------------------------------------------------------------------------------


def _raise_to_floor(xp: Any, z: Any) -> tuple[Any, Any, Any]:
    """(w, product, reciprocal sum): w = z + n >= RECURRENCE_FLOOR with n the fewest steps,
    product = z (z+1) ... (z+n-1) and reciprocal sum = 1/z + ... + 1/(z+n-1). Needs z > 0."""
    w, product, reciprocals = z, xp.ones_like(z), xp.zeros_like(z)
    for _ in range(int(RECURRENCE_FLOOR)):
        low = w < RECURRENCE_FLOOR
        product = xp.where(low, product * w, product)
        reciprocals = xp.where(low, reciprocals + 1.0 / w, reciprocals)
        w = xp.where(low, w + 1.0, w)
    return w, product, reciprocals


def _lgamma_near_one(e: Any) -> Any:
    """lgamma(1 + e) for |e| <= 1/2 by its Taylor series, exact at the zero e = 0."""
    return e * _poly(e, LGAMMA_TAYLOR) + 0.0  # + 0.0 turns the -0 at e = 0 into TF's +0


def _lgamma_positive(xp: Any, z: Any) -> Any:
    w, product, _ = _raise_to_floor(xp, z)
    inv = 1.0 / w
    series = inv * _poly(inv * inv, STIRLING)
    stirling = (w - 0.5) * xp.log(w) - w + HALF_LOG_2PI + series - xp.log(product)
    # Around the zeros at 1 and 2 the Stirling value is a difference of two numbers near 12.8:
    # the Taylor series keeps the relative accuracy there (lgamma(2 + e) = log1p(e) + lgamma(1+e))
    near_one = xp.abs(z - 1.0) <= 0.5
    near_two = ~near_one & (xp.abs(z - 2.0) <= 0.5)
    e1 = xp.where(near_one, z - 1.0, 0.0)
    e2 = xp.where(near_two, z - 2.0, 0.0)
    taylor = xp.where(near_one, _lgamma_near_one(e1), xp.log1p(e2) + _lgamma_near_one(e2))
    return xp.where(near_one | near_two, taylor, stirling)


def lgamma(xp: Any, x: Any) -> Any:
    """log |Gamma(x)|; +inf at the poles and at +-inf."""
    (x,) = _f64(xp, x)
    reflect = x < 0.5
    z = xp.where(reflect, 1.0 - x, x)
    z = xp.where(xp.isfinite(z), z, 1.0)
    value = _lgamma_positive(xp, z)
    # |sin(pi x)| from the exact distance to the nearest integer, so it stays accurate far out
    frac = x - xp.round(x)
    reflected = xp.log(math.pi / xp.abs(xp.sin(math.pi * frac))) - value
    result = xp.where(reflect, reflected, value)
    result = xp.where(reflect & (frac == 0.0), xp.inf, result)
    return xp.where(xp.isinf(x), xp.inf, xp.where(xp.isnan(x), x, result))


def _digamma_positive(xp: Any, z: Any) -> Any:
    w, _, reciprocals = _raise_to_floor(xp, z)
    inv2 = 1.0 / (w * w)
    return xp.log(w) - 0.5 / w - inv2 * _poly(inv2, DIGAMMA) - reciprocals


def digamma(xp: Any, x: Any) -> Any:
    """psi(x) = d/dx log Gamma(x); +inf at non-positive integers (Eigen's choice) and -inf."""
    (x,) = _f64(xp, x)
    negative = x <= 0.0
    finite = xp.isfinite(x)
    frac = xp.where(finite, x - xp.round(x), 0.0)
    # pi cot(pi x) from the distance to the nearest integer; exactly 0 at half-integers
    cot = xp.where(xp.abs(frac) == 0.5, 0.0, math.pi / xp.tan(math.pi * frac))
    z = xp.where(negative, 1.0 - x, x)
    z = xp.where(finite, z, 1.0)
    value = _digamma_positive(xp, z)
    result = xp.where(negative, value - cot, value)
    result = xp.where(negative & (frac == 0.0), xp.inf, result)
    return xp.where(finite, result, xp.where(xp.isnan(x), x, xp.inf))


# -- zeta and polygamma ------------------------------------------------------------------------


def zeta(xp: Any, x: Any, q: Any) -> Any:
    """Hurwitz zeta sum_k (q + k)^-x. The summation runs until q + k >= 9, so its cost grows
    with -q for negative q (allowed only for integer x, as in Cephes)."""
    x, q = _f64(xp, x, q)
    integer_q = q == xp.floor(q)
    integer_x = x == xp.floor(x)
    pole = (x == 1.0) | ((x > 1.0) & (q <= 0.0) & integer_q)
    domain = (x < 1.0) | ((q < 0.0) & ~integer_q & ~integer_x)
    valid = (x > 1.0) & ~((q <= 0.0) & (integer_q | ~integer_x)) & xp.isfinite(q)
    xs = xp.where(valid & xp.isfinite(x), x, 2.0)
    qs = xp.where(valid, q, 1.0)
    steps = xp.maximum(ZETA_FLOOR, xp.ceil(ZETA_FLOOR - qs))
    total = qs ** -xs
    most = int(xp.max(steps)) if steps.size else 0
    for k in range(1, most + 1):
        total = total + xp.where(k <= steps, (qs + k) ** -xs, 0.0)
    w = qs + steps
    b = w ** -xs
    total = total + b * w / (xs - 1.0) - 0.5 * b
    rising, power, done = xs, b / w, xp.zeros(xs.shape, dtype=bool)
    for j, coeff in enumerate(EULER_MACLAURIN, start=1):
        term = coeff * rising * power
        total = xp.where(done, total, total + term)
        done = done | (xp.abs(term) <= EPS * xp.abs(total))
        rising = rising * (xs + 2 * j - 1) * (xs + 2 * j)
        power = power / (w * w)
    # x = +inf: only the first term can survive
    total = xp.where(xp.isinf(x), qs ** -x, total)
    result = xp.where(valid, total, xp.nan)
    result = xp.where(pole, xp.inf, result)
    result = xp.where(domain, xp.nan, result)
    return xp.where(xp.isnan(x) | xp.isnan(q), xp.nan, result)


def polygamma(xp: Any, n: Any, x: Any) -> Any:
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for integer n >= 1, digamma for n = 0, NaN for
    non-integer n."""
    n, x = _f64(xp, n, x)
    order = xp.where(n >= 1.0, n, 1.0)
    sign = xp.where(xp.fmod(order, 2.0) == 0.0, -1.0, 1.0)
    higher = sign * xp.exp(lgamma(xp, order + 1.0)) * zeta(xp, order + 1.0, x)
    higher = xp.where(n >= 1.0, higher, zeta(xp, n + 1.0, x))  # n < 0: zeta's domain error
    result = xp.where(n == 0.0, digamma(xp, x), higher)
    return xp.where(xp.floor(n) == n, result, xp.nan)


# lgamma(1 + e) = -gamma e + sum_{k >= 2} (-1)^k zeta(k) e^k / k, divided by e; 52 terms reach
# 1e-17 at |e| = 1/2. zeta(k) comes from `zeta` itself, once, on the host.
LGAMMA_TAYLOR = [-EULER_GAMMA] + [
    (-1) ** k * float(z) / k
    for k, z in zip(range(2, 54), zeta(np, np.arange(2.0, 54.0), 1.0), strict=True)]


# -- regularized incomplete gamma --------------------------------------------------------------


def _gamma_series(xp: Any, a: Any, x: Any, active: Any, derivative: bool) -> tuple[Any, Any]:
    """P(a, x) and dP/da by the series x^a e^-x / Gamma(a+1) sum_n x^n / ((a+1)...(a+n))."""
    r, c, total = a, xp.ones_like(a), xp.ones_like(a)
    dc, dtotal = xp.zeros_like(a), xp.zeros_like(a)
    for i in range(MAX_ITERATIONS):
        r = r + 1.0
        ratio = x / r
        dc = ratio * dc - (ratio / r) * c
        dtotal = dtotal + dc
        c = c * ratio
        total = total + c
        if i % CHECK_EVERY == 0:
            pending = c > CONVERGED * total
            if derivative:
                pending = pending | (xp.abs(dc) > CONVERGED * xp.abs(dtotal))
            if not _unconverged(xp, pending & active):
                break
    log_x = xp.log(x)
    scale = xp.exp(a * log_x - x - lgamma(xp, a + 1.0))
    value = total * scale
    return value, scale * (total * (log_x - digamma(xp, a + 1.0)) + dtotal)


def _gamma_fraction(xp: Any, a: Any, x: Any, active: Any, derivative: bool) -> tuple[Any, Any]:
    """Q(a, x) and dQ/da by the continued fraction
    x^a e^-x / Gamma(a) * 1/(x+1-a - 1(1-a)/(x+3-a - 2(2-a)/(x+5-a - ...))),
    evaluated by its convergents A_n / B_n (rescaled when they grow) and their a-derivatives."""
    one, zero = xp.ones_like(a), xp.zeros_like(a)
    a_prev, a_cur, b_prev, b_cur = zero, one, one, x + 1.0 - a
    da_prev, da_cur, db_prev, db_cur = zero, zero, zero, -one
    h = a_cur / b_cur
    dh = (da_cur - h * db_cur) / b_cur
    done = ~active
    for n in range(2, MAX_ITERATIONS + 2):
        num, dnum = (n - 1) * (a - (n - 1)), float(n - 1)
        den = x + (2 * n - 1) - a
        a_new = den * a_cur + num * a_prev
        b_new = den * b_cur + num * b_prev
        da_new = -a_cur + den * da_cur + dnum * a_prev + num * da_prev
        db_new = -b_cur + den * db_cur + dnum * b_prev + num * db_prev
        a_prev, a_cur, b_prev, b_cur = a_cur, a_new, b_cur, b_new
        da_prev, da_cur, db_prev, db_cur = da_cur, da_new, db_cur, db_new
        nonzero = b_cur != 0.0
        safe_b = xp.where(nonzero, b_cur, 1.0)
        h_new = xp.where(nonzero, a_cur / safe_b, h)
        dh_new = xp.where(nonzero, (da_cur - h_new * db_cur) / safe_b, dh)
        settled = xp.abs(h_new - h) <= CONVERGED * xp.abs(h_new)
        if derivative:
            # dh carries the cancellation of dA - h dB, a noise that grows with n: judge it
            # against the value it is added to, and freeze each element once it has settled
            tolerance = CONVERGED * (xp.abs(dh_new) + xp.abs(h_new))
            settled = settled & (xp.abs(dh_new - dh) <= tolerance)
        h, dh = xp.where(done, h, h_new), xp.where(done, dh, dh_new)
        done = done | settled
        scale = xp.where(xp.abs(b_cur) > BIG, 1.0 / BIG, 1.0)
        a_prev, a_cur, b_prev, b_cur = a_prev * scale, a_cur * scale, b_prev * scale, b_cur * scale
        da_prev, da_cur = da_prev * scale, da_cur * scale
        db_prev, db_cur = db_prev * scale, db_cur * scale
        if n % CHECK_EVERY == 0 and not _unconverged(xp, ~done):
            break
    log_x = xp.log(x)
    scale = xp.exp(a * log_x - x - lgamma(xp, a))
    return h * scale, scale * (h * (log_x - digamma(xp, a)) + dh)


def _incomplete_gamma(xp: Any, a: Any, x: Any, derivative: bool) -> tuple[Any, Any, Any]:
    """(P, Q, dP/da) on the domain a > 0, 0 < x < inf; other elements hold placeholders."""
    inside = (a > 0.0) & (x > 0.0) & xp.isfinite(x) & xp.isfinite(a)
    fraction = inside & (x > 1.0) & (x > a)
    series = inside & ~fraction
    p, dp_series = _gamma_series(xp, xp.where(series, a, 1.0), xp.where(series, x, 0.5),
                                 series, derivative)
    q, dq_fraction = _gamma_fraction(xp, xp.where(fraction, a, 1.0),
                                     xp.where(fraction, x, 2.0), fraction, derivative)
    lower = xp.where(fraction, 1.0 - q, p)
    upper = xp.where(fraction, q, 1.0 - p)
    return lower, upper, xp.where(fraction, -dq_fraction, dp_series)


def _gamma_edges(xp: Any, a: Any, x: Any, value: Any, at_zero: float, at_inf: float) -> Any:
    value = xp.where(xp.isposinf(x) & (a > 0.0), at_inf, value)
    value = xp.where((a <= 0.0) | (x < 0.0) | xp.isnan(a) | xp.isnan(x), xp.nan, value)
    return xp.where(x == 0.0, at_zero, value)


def igamma(xp: Any, a: Any, x: Any) -> Any:
    """Regularized lower incomplete gamma P(a, x); 0 at x = 0 whatever a (as Eigen)."""
    a, x = _f64(xp, a, x)
    lower, _, _ = _incomplete_gamma(xp, a, x, derivative=False)
    return _gamma_edges(xp, a, x, lower, 0.0, 1.0)


def igammac(xp: Any, a: Any, x: Any) -> Any:
    """Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x)."""
    a, x = _f64(xp, a, x)
    _, upper, _ = _incomplete_gamma(xp, a, x, derivative=False)
    value = _gamma_edges(xp, a, x, upper, 1.0, 0.0)
    # Eigen checks the domain before x = 0 here: igammac(a <= 0, 0) is NaN
    return xp.where((x == 0.0) & ~(a > 0.0), xp.nan, value)


def igamma_grad_a(xp: Any, a: Any, x: Any) -> Any:
    """d/da P(a, x)."""
    a, x = _f64(xp, a, x)
    _, _, derivative = _incomplete_gamma(xp, a, x, derivative=True)
    return _gamma_edges(xp, a, x, derivative, 0.0, 0.0)


# -- regularized incomplete beta ---------------------------------------------------------------


def _nonzero(xp: Any, v: Any) -> Any:
    return xp.where(xp.abs(v) < TINY, TINY, v)


def _beta_fraction(xp: Any, a: Any, b: Any, x: Any, active: Any) -> Any:
    """The continued fraction 1/(1+ d1/(1+ d2/(1+ ...))) of I_x(a, b), modified Lentz."""
    c = xp.ones_like(x)
    d = 1.0 / _nonzero(xp, 1.0 - (a + b) * x / (a + 1.0))
    h = d
    for m in range(1, MAX_ITERATIONS + 1):
        even = m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m))
        d = 1.0 / _nonzero(xp, 1.0 + even * d)
        c = _nonzero(xp, 1.0 + even / c)
        h = h * d * c
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0))
        d = 1.0 / _nonzero(xp, 1.0 + odd * d)
        c = _nonzero(xp, 1.0 + odd / c)
        delta = d * c
        h = h * delta
        pending = (xp.abs(delta - 1.0) > CONVERGED) & active
        if m % CHECK_EVERY == 0 and not _unconverged(xp, pending):
            break
    return h


def betainc(xp: Any, a: Any, b: Any, x: Any) -> Any:
    """Regularized incomplete beta I_x(a, b)."""
    a, b, x = _f64(xp, a, b, x)
    inside = (a > 0.0) & (b > 0.0) & (x > 0.0) & (x < 1.0) & xp.isfinite(a) & xp.isfinite(b)
    swap = x > (a + 1.0) / (a + b + 2.0)
    aa = xp.where(inside, xp.where(swap, b, a), 1.0)
    bb = xp.where(inside, xp.where(swap, a, b), 1.0)
    xs = xp.where(inside, x, 0.5)
    xx = xp.where(swap, 1.0 - xs, xs)
    # x^a (1-x)^b / (a B(a, b)) is symmetric in (a, x) <-> (b, 1 - x) but for the 1/a
    log_front = (lgamma(xp, aa + bb) - lgamma(xp, aa) - lgamma(xp, bb)
                 + xp.where(inside, a, 1.0) * xp.log(xs)
                 + xp.where(inside, b, 1.0) * xp.log1p(-xs))
    part = xp.exp(log_front) * _beta_fraction(xp, aa, bb, xx, inside) / aa
    value = xp.where(swap, 1.0 - part, part)
    value = xp.where(x == 0.0, 0.0, xp.where(x == 1.0, 1.0, xp.where(inside, value, xp.nan)))
    return xp.where((a <= 0.0) | (b <= 0.0) | xp.isnan(a) | xp.isnan(b), xp.nan, value)


# -- exponentially scaled modified Bessel functions --------------------------------------------


def _bessel_scaled(xp: Any, x: Any, order: int) -> Any:
    """e^-|x| I_order(|x|) for order 0 or 1."""
    ax = xp.abs(x)
    small = ax <= BESSEL_SWITCH
    xs = xp.where(small, ax, 0.0)
    quarter = 0.25 * xs * xs
    term = xp.ones_like(xs) if order == 0 else 0.5 * xs
    total = term
    for k in range(1, BESSEL_SERIES_TERMS + 1):
        term = term * quarter / (k * (k + order))
        total = total + term
    series = total * xp.exp(-xs)
    xl = xp.where(small, 2.0 * BESSEL_SWITCH, ax)
    mu = 4.0 * order * order
    term = xp.ones_like(xl)
    total = term
    for k in range(1, BESSEL_ASYMPTOTIC_TERMS + 1):
        term = term * -(mu - (2 * k - 1) ** 2) / (8.0 * k * xl)
        total = total + term
    asymptotic = total / xp.sqrt(2.0 * math.pi * xl)
    return xp.where(small, series, asymptotic)


def bessel_i0e(xp: Any, x: Any) -> Any:
    (x,) = _f64(xp, x)
    return xp.where(xp.isnan(x), x, _bessel_scaled(xp, x, 0))


def bessel_i1e(xp: Any, x: Any) -> Any:
    (x,) = _f64(xp, x)
    return xp.where(xp.isnan(x), x, xp.sign(x) * _bessel_scaled(xp, x, 1))
