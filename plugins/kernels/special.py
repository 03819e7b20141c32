"""The error function and its complement, written against an array module ``xp``.

Contract: `erf(xp, x)` and `erfc(xp, x)` take any real array and return float64 values accurate to
about one ulp, with NaN propagated and erf(+-inf) = +-1, erfc(+inf) = 0, erfc(-inf) = 2. Neither
numpy nor cupy ships erf without scipy, so this is fdlibm's ``s_erf.c`` (Sun Microsystems, 1993:
"Permission to use, copy, modify, and distribute this software is freely granted, provided that
this notice is preserved.") evaluated branch-free: every piecewise rational approximation is
computed over the whole array and the right one is selected per element. Callers must silence
floating-point warnings (the unused branches divide by zero).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ERX = 8.45062911510467529297e-01  # erf(1) rounded to single precision
# erf on [0, 0.84375): x + x * P(x^2) / Q(x^2)
PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
      -5.77027029648944159157e-03, -2.37630166566501626084e-05)
QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
      1.32494738004321644526e-04, -3.96022827877536812320e-06)
# erf on [0.84375, 1.25): erx + P(s) / Q(s), s = |x| - 1
PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
      3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
      -2.16637559486879084300e-03)
QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
      1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
# erfc on [1.25, 1/0.35): exp(-x^2 - 0.5625 + R(1/x^2) / S(1/x^2)) / x
RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
      -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
      -8.12874355063065934246e+01, -9.81432934416914548592e+00)
SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
      6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
      6.57024977031928170135e+00, -6.04244152148580987438e-02)
# erfc on [1/0.35, 28): same form, other coefficients
RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
      -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
      -4.83519191608651397019e+02)
SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
      3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
      -2.24409524465858183362e+01)

_HIGH_WORD = 0xFFFFFFFF00000000


def _poly(z: Any, coeffs: Sequence[float]) -> Any:
    """Horner evaluation of sum(coeffs[i] * z**i)."""
    result = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        result = result * z + c
    return result


def _small(x: Any) -> Any:
    """x * P(x^2) / Q(x^2), the correction term on |x| < 0.84375."""
    z = x * x
    return x * (_poly(z, PP) / _poly(z, QQ))


def _mid(ax: Any) -> Any:
    """P(s) / Q(s) on 0.84375 <= |x| < 1.25."""
    s = ax - 1.0
    return _poly(s, PA) / _poly(s, QA)


def _tail(xp: Any, ax: Any) -> Any:
    """erfc(|x|) for 1.25 <= |x| < 28."""
    s = 1.0 / (ax * ax)
    ratio = xp.where(ax < 1 / 0.35, _poly(s, RA) / _poly(s, SA), _poly(s, RB) / _poly(s, SB))
    # exp(-x^2) split as exp(-z^2) * exp((z - x)(z + x)) with z = x cut to 32 significant bits,
    # so that -z^2 is exact and the large exponent loses no precision.
    z = (xp.asarray(ax).view(xp.uint64) & xp.uint64(_HIGH_WORD)).view(xp.float64)
    return xp.exp(-z * z - 0.5625) * xp.exp((z - ax) * (z + ax) + ratio) / ax


def erf(xp: Any, x: Any) -> Any:
    x = xp.asarray(x, dtype=xp.float64)
    ax = xp.abs(x)
    sign = xp.sign(x)
    big = sign * (1.0 - _tail(xp, ax))
    result = xp.where(ax < 6.0, big, sign)
    result = xp.where(ax < 1.25, sign * (ERX + _mid(ax)), result)
    return xp.where(ax < 0.84375, x + _small(x), result)


def erfc(xp: Any, x: Any) -> Any:
    x = xp.asarray(x, dtype=xp.float64)
    ax = xp.abs(x)
    positive = x > 0
    tail = xp.where(ax < 28.0, _tail(xp, ax), 0.0)
    result = xp.where(positive, tail, 2.0 - tail)
    mid = _mid(ax)
    result = xp.where(ax < 1.25, xp.where(x >= 0, 1.0 - ERX - mid, 1.0 + ERX + mid), result)
    y = _small(x)
    near_zero = xp.where(ax < 0.25, 1.0 - (x + y), 0.5 - (y + (x - 0.5)))
    result = xp.where(ax < 0.84375, near_zero, result)
    return xp.where(xp.isnan(x), x, result)
