"""JPEG coefficients to pixels with libjpeg(-turbo)'s integer arithmetic, vectorised in numpy.

Contract: ``idct_ifast(coefs, quant)`` is jidctfst.c's fast integer IDCT (AA&N, 8-bit
constants, truncating shifts), ``idct_islow(coefs, quant)`` jidctint.c's accurate integer IDCT
(13-bit constants, 2 extra bits between passes, results range-limited through libjpeg's post-IDCT
table, which wraps values far out of range) of dequantised ``[n, 64]`` natural-order blocks,
giving uint8 ``[n, 8, 8]``. ``upsample(plane, sx, sy, height, width, fancy)`` brings one
component to full size as jdsample.c: with `fancy`, h2v1 and h2v2 triangle filters (for
components wider than 2 samples) and the h1v2 filter, edges replicated; otherwise (and for
narrow components) sample replication. ``ycc_to_rgb`` is jdcolor.c's fixed-point conversion.
"""

from __future__ import annotations

import numpy as np

# the accurate IDCT shares its constants with the encoder's forward DCT
from tensorweave.formats.jpeg_tables import (
    CONST_BITS,
    F0298,
    F0390,
    F0541,
    F0765,
    F0899,
    F1175,
    F1501,
    F1847,
    F1961,
    F2053,
    F2562,
    F3072,
    PASS1_BITS,
)

__all__ = ["idct_ifast", "idct_islow", "upsample", "ycc_to_rgb"]


def _butterfly(x: list[np.ndarray]) -> list[np.ndarray]:
    """The 8 undescaled outputs of one 1-D pass from inputs x[0..7] (int64)."""
    z2, z3 = x[2], x[6]
    z1 = (z2 + z3) * F0541
    tmp2 = z1 - z3 * F1847
    tmp3 = z1 + z2 * F0765
    tmp0 = (x[0] + x[4]) << CONST_BITS
    tmp1 = (x[0] - x[4]) << CONST_BITS
    tmp10, tmp13, tmp11, tmp12 = tmp0 + tmp3, tmp0 - tmp3, tmp1 + tmp2, tmp1 - tmp2
    t0, t1, t2, t3 = x[7], x[5], x[3], x[1]
    z1, z2, z3, z4 = t0 + t3, t1 + t2, t0 + t2, t1 + t3
    z5 = (z3 + z4) * F1175
    t0, t1, t2, t3 = t0 * F0298, t1 * F2053, t2 * F3072, t3 * F1501
    z1, z2 = z1 * -F0899, z2 * -F2562
    z3, z4 = z3 * -F1961 + z5, z4 * -F0390 + z5
    t0, t1, t2, t3 = t0 + z1 + z3, t1 + z2 + z4, t2 + z2 + z3, t3 + z1 + z4
    return [tmp10 + t3, tmp11 + t2, tmp12 + t1, tmp13 + t0,
            tmp13 - t0, tmp12 - t1, tmp11 - t2, tmp10 - t3]


def _descale(x: np.ndarray, n: int) -> np.ndarray:
    return (x + (1 << (n - 1))) >> n


def idct_islow(coefs: np.ndarray, quant: np.ndarray) -> np.ndarray:
    """uint8 ``[n, 8, 8]`` samples of ``[n, 64]`` coefficients and their natural-order
    quantisation table."""
    x = (coefs.astype(np.int64) * quant.astype(np.int64)).reshape(-1, 8, 8)
    # pass 1: columns (inputs are the rows of each block), into the work array
    work = np.stack([_descale(v, CONST_BITS - PASS1_BITS)
                     for v in _butterfly([x[:, k, :] for k in range(8)])], axis=1)
    # pass 2: rows
    out = np.stack([_descale(v, CONST_BITS + PASS1_BITS + 3)
                    for v in _butterfly([work[:, :, k] for k in range(8)])], axis=2)
    return _range_limit(out)


# jidctfst.c: 8-bit constants, products truncated; jddctmgr.c folds the AA&N scale factors
# (cos(k*pi/16)*sqrt(2) products, 14 bits) into the quantisation table, keeping 2 extra bits
_FAST_BITS = 8
_A1414, _A1847, _A1082, _A2613 = 362, 473, 277, 669
_AAN = np.array([
    16384, 22725, 21407, 19266, 16384, 12873, 8867, 4520,
    22725, 31521, 29692, 26722, 22725, 17855, 12299, 6270,
    21407, 29692, 27969, 25172, 21407, 16819, 11585, 5906,
    19266, 26722, 25172, 22654, 19266, 15137, 10426, 5315,
    16384, 22725, 21407, 19266, 16384, 12873, 8867, 4520,
    12873, 17855, 16819, 15137, 12873, 10114, 6967, 3552,
    8867, 12299, 11585, 10426, 8867, 6967, 4799, 2446,
    4520, 6270, 5906, 5315, 4520, 3552, 2446, 1247], np.int64)


def _fast_pass(x: list[np.ndarray]) -> list[np.ndarray]:
    """jidctfst.c's 1-D pass: outputs 0..7 from inputs x[0..7] (int64)."""
    def mul(v: np.ndarray, c: int) -> np.ndarray:
        return (v * c) >> _FAST_BITS

    tmp10, tmp11 = x[0] + x[4], x[0] - x[4]
    tmp13 = x[2] + x[6]
    tmp12 = mul(x[2] - x[6], _A1414) - tmp13
    tmp0, tmp3, tmp1, tmp2 = tmp10 + tmp13, tmp10 - tmp13, tmp11 + tmp12, tmp11 - tmp12
    z13, z10, z11, z12 = x[5] + x[3], x[5] - x[3], x[1] + x[7], x[1] - x[7]
    tmp7 = z11 + z13
    tmp11 = mul(z11 - z13, _A1414)
    z5 = mul(z10 + z12, _A1847)
    tmp10 = mul(z12, _A1082) - z5
    tmp12 = mul(z10, -_A2613) + z5
    tmp6 = tmp12 - tmp7
    tmp5 = tmp11 - tmp6
    tmp4 = tmp10 + tmp5
    return [tmp0 + tmp7, tmp1 + tmp6, tmp2 + tmp5, tmp3 - tmp4,
            tmp3 + tmp4, tmp2 - tmp5, tmp1 - tmp6, tmp0 - tmp7]


def idct_ifast(coefs: np.ndarray, quant: np.ndarray) -> np.ndarray:
    """uint8 ``[n, 8, 8]`` samples from jidctfst.c's fast integer IDCT (TF's default)."""
    scaled = (quant.astype(np.int64) * _AAN + (1 << 11)) >> 12
    x = (coefs.astype(np.int64) * scaled).reshape(-1, 8, 8)
    work = np.stack(_fast_pass([x[:, k, :] for k in range(8)]), axis=1)
    out = np.stack(_fast_pass([work[:, :, k] for k in range(8)]), axis=2) >> (PASS1_BITS + 3)
    return _range_limit(out)


def _range_limit(out: np.ndarray) -> np.ndarray:
    # the post-IDCT range-limit table is indexed with 10 bits: values wrap past +-512
    wrapped = ((out + 512) & 1023) - 512
    return np.clip(wrapped + 128, 0, 255).astype(np.uint8)


def _edges(plane: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """`plane`'s neighbours before and after each sample along `axis`, edges replicated."""
    n = plane.shape[axis]
    before = np.take(plane, np.r_[0, np.arange(n - 1)], axis=axis)
    after = np.take(plane, np.r_[np.arange(1, n), n - 1], axis=axis)
    return before, after


def _interleave(even: np.ndarray, odd: np.ndarray, axis: int) -> np.ndarray:
    return np.stack([even, odd], axis=axis + 1).reshape(
        *even.shape[:axis], 2 * even.shape[axis], *even.shape[axis + 1:])


def upsample(plane: np.ndarray, sx: int, sy: int, height: int, width: int,
             fancy: bool) -> np.ndarray:
    """Component `plane` (its downsampled size), scaled by `sx`, `sy` (1 or 2) and cut to
    ``[height, width]``."""
    p = plane.astype(np.int32)
    narrow = p.shape[1] <= 2
    if fancy and sy == 2 and (sx == 1 or not narrow):
        up, down = _edges(p, 0)
        if sx == 1:  # h1v2: rows weighted 3:1 towards their nearer input row
            p = _interleave((3 * p + up + 1) >> 2, (3 * p + down + 2) >> 2, 0)
        else:  # h2v2: vertical 3:1 sums, then horizontal 3:1 of those
            sums = _interleave(3 * p + up, 3 * p + down, 0)
            left, right = _edges(sums, 1)
            p = _interleave((3 * sums + left + 8) >> 4, (3 * sums + right + 7) >> 4, 1)
    elif fancy and sx == 2 and sy == 1 and not narrow:
        left, right = _edges(p, 1)
        p = _interleave((3 * p + left + 1) >> 2, (3 * p + right + 2) >> 2, 1)
    else:
        p = np.repeat(np.repeat(p, sy, axis=0), sx, axis=1)
    return p[:height, :width].astype(np.uint8)


def _ycc_tables() -> tuple[np.ndarray, ...]:
    x = np.arange(256, dtype=np.int64) - 128
    half = 1 << 15

    def fix(v: float) -> int:
        return int(v * 65536 + 0.5)

    cr_r = (fix(1.40200) * x + half) >> 16
    cb_b = (fix(1.77200) * x + half) >> 16
    cr_g = -fix(0.71414) * x
    cb_g = -fix(0.34414) * x + half
    return cr_r, cb_b, cr_g, cb_g


_CR_R, _CB_B, _CR_G, _CB_G = _ycc_tables()


def ycc_to_rgb(y: np.ndarray, cb: np.ndarray, cr: np.ndarray) -> np.ndarray:
    """uint8 ``[h, w, 3]`` RGB of full-size uint8 Y, Cb, Cr planes."""
    y = y.astype(np.int64)
    red = y + _CR_R[cr]
    green = y + ((_CB_G[cb] + _CR_G[cr]) >> 16)
    blue = y + _CB_B[cb]
    return np.clip(np.stack([red, green, blue], axis=-1), 0, 255).astype(np.uint8)
