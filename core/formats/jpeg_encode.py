"""JPEG encoding in numpy that writes libjpeg-turbo's bytes for TensorFlow's ``EncodeJpeg``.

Contract: ``encode_jpeg(image, quality, progressive, optimize_size, chroma_downsampling,
density_unit, x_density, y_density, xmp_metadata)`` encodes uint8 ``[height, width, 1 or 3]``
pixels as TF's ``jpeg::Compress`` drives libjpeg: ``jpeg_set_defaults`` (JFIF 1.01 APP0 with the
given density, grey as one component, RGB as YCbCr with Y sampled 2x2 and Cb/Cr 1x1, or all 1x1
without `chroma_downsampling`), ``jpeg_set_quality(quality, force_baseline=TRUE)`` (Annex K
tables scaled as jcparam.c, clamped to 1..255), the XMP packet (if any) in an APP1 marker after
APP0. A baseline file has one interleaved sequential scan with the standard Huffman tables, or
optimal ones (``jpeg_huffman``) with `optimize_size`; a progressive one (SOF2) follows
``jpeg_simple_progression`` with optimal tables per scan (``jpeg_progressive``). Samples follow
libjpeg's default path exactly: jccolor.c's fixed-point RGB->YCbCr, jcsample.c's h2v2 box filter
with its alternating 1/2 rounding bias, edges replicated as jcprepct.c/jcsample.c, jfdctint.c's
accurate integer forward DCT, rounded division by the quantisation step, and jccoefct.c's dummy
blocks (zero AC, the neighbour's DC) completing MCUs at the right and bottom edges. Images
libjpeg refuses (a side of 0 or over 65500, 2**29 pixels or more, an XMP packet over a marker's
65533 bytes) raise `JpegError`.
"""

from __future__ import annotations

import struct

import attrs
import numpy as np

from tensorweave.formats.jpeg_entropy import NATURAL, JpegError
from tensorweave.formats.jpeg_huffman import (
    STANDARD_AC,
    STANDARD_DC,
    HuffmanCode,
    bit_length,
    optimal_table,
    pack_bits,
)
from tensorweave.formats.jpeg_progressive import encode_scan, scan_header, simple_progression
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

__all__ = ["encode_jpeg"]

_ZIGZAG = np.array(NATURAL[:64])  # natural index of each zigzag position
_MAX_DIMENSION = 65500  # libjpeg's JPEG_MAX_DIMENSION
_XMP_NAMESPACE = b"http://ns.adobe.com/xap/1.0/\0"

# JPEG Annex K.1 quantisation tables at quality 50, natural order
_LUMA_QUANT = np.array([
    16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
    14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
    18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
    49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99], np.int64)
_CHROMA_QUANT = np.full(64, 99, np.int64)
_CHROMA_QUANT[[0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 24, 25]] = [
    17, 18, 24, 47, 18, 21, 26, 66, 24, 26, 56, 47, 66]

def _quant_table(base: np.ndarray, quality: int) -> np.ndarray:
    """jcparam.c's jpeg_set_quality with force_baseline: the percentage scale of `quality`
    applied to an Annex K table (natural order)."""
    quality = min(max(quality, 1), 100)
    scale = 5000 // quality if quality < 50 else 200 - 2 * quality
    return np.clip((base * scale + 50) // 100, 1, 255)


# -- samples ------------------------------------------------------------------------------------


def _fix(x: float) -> int:
    return int(x * 65536 + 0.5)


def _rgb_to_ycc(rgb: np.ndarray) -> list[np.ndarray]:
    """jccolor.c's rgb_ycc_convert: 16-bit fixed point; Cb and Cr round with 0.5 - 2**-16 so
    that they never reach 256."""
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    half, offset = 1 << 15, (128 << 16) + (1 << 15) - 1
    y = (_fix(0.299) * r + _fix(0.587) * g + _fix(0.114) * b + half) >> 16
    cb = (-_fix(0.16874) * r - _fix(0.33126) * g + _fix(0.5) * b + offset) >> 16
    cr = (_fix(0.5) * r - _fix(0.41869) * g - _fix(0.08131) * b + offset) >> 16
    return [y, cb, cr]


def _pad(plane: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """`plane` extended to at least ``[rows, cols]`` by repeating its last row and column."""
    return np.pad(plane, ((0, max(rows - plane.shape[0], 0)), (0, max(cols - plane.shape[1], 0))),
                  mode="edge")


def _downsample_h2v2(plane: np.ndarray) -> np.ndarray:
    """jcsample.c's h2v2_downsample of an even-sized plane: 2x2 sums rounded with a bias of 1
    and 2 on alternate output columns, so that rounding does not drift one way."""
    sums = plane[0::2, 0::2] + plane[0::2, 1::2] + plane[1::2, 0::2] + plane[1::2, 1::2]
    bias = np.tile(np.array([1, 2], np.int64), sums.shape[1] // 2 + 1)[:sums.shape[1]]
    return (sums + bias) >> 2


def _descale(x: np.ndarray, n: int) -> np.ndarray:
    return (x + (1 << (n - 1))) >> n


def _fdct_pass(d: list[np.ndarray], final: bool) -> list[np.ndarray]:
    """One 1-D pass of jfdctint.c: the 8 outputs of inputs d[0..7]; the first pass keeps
    PASS1_BITS extra bits, the second removes them."""
    tmp0, tmp7 = d[0] + d[7], d[0] - d[7]
    tmp1, tmp6 = d[1] + d[6], d[1] - d[6]
    tmp2, tmp5 = d[2] + d[5], d[2] - d[5]
    tmp3, tmp4 = d[3] + d[4], d[3] - d[4]
    tmp10, tmp13, tmp11, tmp12 = tmp0 + tmp3, tmp0 - tmp3, tmp1 + tmp2, tmp1 - tmp2
    shift = CONST_BITS + PASS1_BITS if final else CONST_BITS - PASS1_BITS
    out: list[np.ndarray] = [tmp10] * 8
    if final:
        out[0], out[4] = _descale(tmp10 + tmp11, PASS1_BITS), _descale(tmp10 - tmp11, PASS1_BITS)
    else:
        out[0], out[4] = (tmp10 + tmp11) << PASS1_BITS, (tmp10 - tmp11) << PASS1_BITS
    z1 = (tmp12 + tmp13) * F0541
    out[2] = _descale(z1 + tmp13 * F0765, shift)
    out[6] = _descale(z1 - tmp12 * F1847, shift)
    z1, z2, z3, z4 = tmp4 + tmp7, tmp5 + tmp6, tmp4 + tmp6, tmp5 + tmp7
    z5 = (z3 + z4) * F1175
    tmp4, tmp5, tmp6, tmp7 = tmp4 * F0298, tmp5 * F2053, tmp6 * F3072, tmp7 * F1501
    z1, z2 = z1 * -F0899, z2 * -F2562
    z3, z4 = z3 * -F1961 + z5, z4 * -F0390 + z5
    out[7] = _descale(tmp4 + z1 + z3, shift)
    out[5] = _descale(tmp5 + z2 + z4, shift)
    out[3] = _descale(tmp6 + z2 + z3, shift)
    out[1] = _descale(tmp7 + z1 + z4, shift)
    return out


def _quantized_blocks(plane: np.ndarray, quant: np.ndarray) -> np.ndarray:
    """int64 ``[rows, cols, 64]`` zigzag-order coefficients of a plane whose sides are multiples
    of 8: the DCT (scaled by 8) divided by 8 * step, rounded half away from zero."""
    rows, cols = plane.shape[0] // 8, plane.shape[1] // 8
    x = (plane - 128).reshape(rows, 8, cols, 8).transpose(0, 2, 1, 3).reshape(-1, 8, 8)
    rowwise = np.stack(_fdct_pass([x[:, :, k] for k in range(8)], False), axis=2)
    coefs = np.stack(_fdct_pass([rowwise[:, k, :] for k in range(8)], True), axis=1)
    divisor = quant * 8
    flat = coefs.reshape(-1, 64)
    magnitude = (np.abs(flat) + (divisor >> 1)) // divisor
    return np.where(flat < 0, -magnitude, magnitude)[:, _ZIGZAG].reshape(rows, cols, 64)


def _with_dummy_blocks(blocks: np.ndarray, rows: int, cols: int, h: int) -> np.ndarray:
    """jccoefct.c's MCU completion to ``[rows, cols]`` blocks: each extra block has zero AC;
    one right of the image takes the DC of the block to its left, one below takes the DC of
    the last block of the MCU's row above it (MCUs `h` blocks wide)."""
    have_rows, have_cols = blocks.shape[:2]
    out = np.zeros((rows, cols, 64), np.int64)
    out[:have_rows, :have_cols] = blocks
    out[:have_rows, have_cols:, 0] = blocks[:, -1:, 0]
    for r in range(have_rows, rows):
        out[r, :, 0] = np.repeat(out[r - 1, h - 1::h, 0], h)
    return out


# -- entropy coding -----------------------------------------------------------------------------


def _symbols(zigzag: np.ndarray, owner: np.ndarray, slots: np.ndarray) -> tuple[np.ndarray, ...]:
    """The scan's Huffman events in stream order, from ``[blocks, 64]`` coefficients in scan
    order, each block's component index and each component's table slot: (is AC, slot, symbol,
    extra bits, their count)."""
    n = len(zigzag)
    dc = zigzag[:, 0]
    diff = np.empty(n, np.int64)
    for comp in range(len(slots)):  # each component predicts DC from its previous block
        mine = np.flatnonzero(owner == comp)
        diff[mine] = np.diff(dc[mine], prepend=0)
    block, k = np.nonzero(zigzag[:, 1:])
    k = k + 1
    first = np.r_[True, block[1:] != block[:-1]] if len(block) else np.zeros(0, bool)
    run = k - np.where(first, 0, np.r_[0, k[:-1]]) - 1
    value = zigzag[block, k]
    size = bit_length(value)
    zrl = run // 16
    last = np.zeros(n, np.int64)
    np.maximum.at(last, block, k)
    eob = np.flatnonzero(last < 63)
    zrl_block = np.repeat(block, zrl)
    # order within a block: DC (0), then per coefficient k its ZRLs (2k - 1) and itself (2k),
    # then EOB (128)
    order_block = np.concatenate([np.arange(n), zrl_block, block, eob])
    order_key = np.concatenate([np.zeros(n, np.int64), np.repeat(2 * k - 1, zrl), 2 * k,
                                np.full(len(eob), 128)])
    dc_size = bit_length(diff)
    is_ac = np.concatenate([np.zeros(n, bool), np.ones(len(zrl_block) + len(block) + len(eob),
                                                       bool)])
    symbol = np.concatenate([dc_size, np.full(len(zrl_block), 0xF0), (run % 16) << 4 | size,
                             np.zeros(len(eob), np.int64)])
    extra_of = np.concatenate([diff, np.zeros(len(zrl_block), np.int64), value,
                               np.zeros(len(eob), np.int64)])
    extra_len = np.concatenate([dc_size, np.zeros(len(zrl_block), np.int64), size,
                                np.zeros(len(eob), np.int64)])
    # a negative value is sent as its ones' complement in `size` bits
    extra = np.where(extra_of < 0, extra_of - 1, extra_of) & ((1 << extra_len) - 1)
    order = np.lexsort((order_key, order_block))
    slot = slots[owner[order_block]]
    return is_ac[order], slot[order], symbol[order], extra[order], extra_len[order]


# -- file ---------------------------------------------------------------------------------------


def _marker(code: int, body: bytes) -> bytes:
    return struct.pack(">BBH", 0xFF, code, len(body) + 2) + body


@attrs.frozen
class _Component:
    ident: int
    h: int
    v: int
    slot: int  # its quantisation and Huffman table number


def _components(channels: int, chroma_downsampling: bool) -> list[_Component]:
    """jpeg_set_defaults' components for grey or RGB input (TF turns subsampling off by
    setting every factor to 1)."""
    if channels == 1:
        return [_Component(1, 1, 1, 0)]
    luma = 2 if chroma_downsampling else 1
    return [_Component(1, luma, luma, 0), _Component(2, 1, 1, 1), _Component(3, 1, 1, 1)]


def _component_blocks(image: np.ndarray, comps: list[_Component],
                      quant: list[np.ndarray]) -> list[np.ndarray]:
    """Each component's ``[block rows, block columns, 64]`` zigzag coefficients, whole MCUs
    (dummy blocks past the image's own)."""
    height, width = image.shape[:2]
    max_s = comps[0].h  # Y's factors are the largest (and equal) in TF's layouts
    mcus_wide, mcus_high = -(-width // (8 * max_s)), -(-height // (8 * max_s))
    samples = [image[..., 0].astype(np.int64)] if len(comps) == 1 else _rgb_to_ycc(image)
    grids = []
    for comp, plane in zip(comps, samples, strict=True):
        blocks_wide = -(-width * comp.h // (8 * max_s))
        blocks_high = -(-height * comp.v // (8 * max_s))
        if comp.h < max_s:
            # rows are taken in pairs (the last repeated if alone), columns to the blocks' end
            plane = _downsample_h2v2(_pad(plane, height + height % 2, blocks_wide * 16))
        blocks = _quantized_blocks(_pad(plane, blocks_high * 8, blocks_wide * 8),
                                   quant[comp.slot])
        grids.append(_with_dummy_blocks(blocks, mcus_high * comp.v, mcus_wide * comp.h,
                                        comp.h))
    return grids


def _scan_order(grids: list[np.ndarray], comps: list[_Component], members: tuple[int, ...],
                size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The ``[blocks, 64]`` coefficients of a scan over components `members`, in its order,
    and each block's position in `members`: MCU by MCU when interleaved, else the
    component's own blocks (no dummies) row by row; `size` is the image's (height, width)."""
    if len(members) == 1:
        comp = comps[members[0]]
        max_s = comps[0].h
        rows = -(-size[0] * comp.v // (8 * max_s))
        cols = -(-size[1] * comp.h // (8 * max_s))
        blocks = grids[members[0]][:rows, :cols].reshape(-1, 64)
        return blocks, np.zeros(len(blocks), np.int64)
    mcus_high, mcus_wide = grids[0].shape[0] // comps[0].v, grids[0].shape[1] // comps[0].h
    per_mcu = [grids[i].reshape(mcus_high, comps[i].v, mcus_wide, comps[i].h, 64)
               .transpose(0, 2, 1, 3, 4).reshape(mcus_high * mcus_wide, -1, 64)
               for i in members]
    owner = np.concatenate([np.full(comps[i].h * comps[i].v, n) for n, i in enumerate(members)])
    return np.concatenate(per_mcu, axis=1).reshape(-1, 64), np.tile(owner, mcus_wide * mcus_high)


def _sequential_scan(zigzag: np.ndarray, owner: np.ndarray, comps: list[_Component],
                     optimize_size: bool) -> tuple[list[tuple[int, int, HuffmanCode]], bytes]:
    """The DHT tables (class, index, table) and entropy-coded data of a sequential scan over
    every component."""
    slots = sorted({c.slot for c in comps})
    is_ac, slot, symbol, extra, extra_len = _symbols(zigzag, owner,
                                                     np.array([c.slot for c in comps]))
    if optimize_size:
        dc = [optimal_table(np.bincount(symbol[~is_ac & (slot == s)], minlength=256))
              for s in slots]
        ac = [optimal_table(np.bincount(symbol[is_ac & (slot == s)], minlength=256))
              for s in slots]
    else:
        dc, ac = list(STANDARD_DC[:len(slots)]), list(STANDARD_AC[:len(slots)])
    codes = [t.codes() for t in dc + ac]
    table = np.where(is_ac, slot + len(slots), slot)
    code_of = np.stack([c for c, _ in codes])[table, symbol]
    length_of = np.stack([n for _, n in codes])[table, symbol]
    data = pack_bits(code_of << extra_len | extra, length_of + extra_len)
    return [(kind, s, (dc, ac)[kind][s]) for s in slots for kind in (0, 1)], data


def encode_jpeg(image: np.ndarray, quality: int = 95, progressive: bool = False,
                optimize_size: bool = False,
                chroma_downsampling: bool = True, density_unit: int = 1, x_density: int = 300,
                y_density: int = 300, xmp_metadata: bytes = b"") -> bytes:
    """The JPEG file of uint8 ``[height, width, 1 or 3]`` `image`; `density_unit` is JFIF's
    code (0 none, 1 dots per inch, 2 per cm)."""
    height, width, channels = image.shape
    if not (0 < height <= _MAX_DIMENSION and 0 < width <= _MAX_DIMENSION):
        raise JpegError(f"Invalid image size: {width} x {height}")
    if height * width >= 1 << 29:
        raise JpegError(f"Image too large: {height * width}")
    if len(_XMP_NAMESPACE) + len(xmp_metadata) > 65533:
        raise JpegError("XMP metadata too long for one APP1 marker")
    comps = _components(channels, chroma_downsampling)
    slots = sorted({c.slot for c in comps})
    quant = [_quant_table(_LUMA_QUANT, quality), _quant_table(_CHROMA_QUANT, quality)]
    grids = _component_blocks(image, comps, quant)
    if progressive:
        idents, table_of = [c.ident for c in comps], [c.slot for c in comps]
        scans = []
        for scan in simple_progression(len(comps)):
            zigzag, owner = _scan_order(grids, comps, scan.comps, (height, width))
            scans.append((scan_header(scan, idents, table_of),
                          *encode_scan(scan, zigzag, owner, table_of)))
    else:
        zigzag, owner = _scan_order(grids, comps, tuple(range(len(comps))), (height, width))
        header = bytes([len(comps)]) + b"".join(
            bytes([c.ident, c.slot << 4 | c.slot]) for c in comps) + b"\x00\x3f\x00"
        scans = [(header, *_sequential_scan(zigzag, owner, comps, optimize_size))]

    out = [b"\xff\xd8",
           _marker(0xE0, b"JFIF\0\x01\x01" + struct.pack(
               ">BHHBB", density_unit, x_density & 0xFFFF, y_density & 0xFFFF, 0, 0))]
    if xmp_metadata:
        out.append(_marker(0xE1, _XMP_NAMESPACE + xmp_metadata))
    out.extend(_marker(0xDB, bytes([s]) + quant[s][_ZIGZAG].astype(np.uint8).tobytes())
               for s in slots)
    out.append(_marker(0xC2 if progressive else 0xC0, struct.pack(
        ">BHHB", 8, height, width, len(comps)) + b"".join(
        bytes([c.ident, c.h << 4 | c.v, c.slot]) for c in comps)))
    for header, dhts, data in scans:
        out += [_marker(0xC4, code.segment(kind, index)) for kind, index, code in dhts]
        out += [_marker(0xDA, header), data]
    out.append(b"\xff\xd9")
    return b"".join(out)
