"""TF's ``decode_and_crop_jpeg`` pixels for subsampled colour files: libjpeg-turbo's
``jpeg_crop_scanline`` upsampling, reproduced from the component planes.

TF has libjpeg-turbo decode only the window (``jpeg_crop_scanline``, ``jpeg_skip_scanlines``).
The crop moves the window's left edge down to an iMCU boundary (8 times the luma's horizontal
sampling factor) and leaves each chroma component ``ceil(width / factor)`` samples from there,
so fancy upsampling replicates the edge samples at the cropped edges, where the full image has
neighbours; a component left one sample wide gets plain upsampling (libjpeg-turbo then
re-initialises its upsampler, whose fancy routines need more than two samples, as they do
across the full image). Rows are the full decode's: skipping keeps the context rows.

How: the caller decodes the file relabelled as Adobe RGB (`as_rgb_components`), which makes
libjpeg-turbo skip colour conversion, with plain upsampling: the Y, Cb and Cr planes of the
same IDCT come back, the chroma replicated. `window_pixels` then applies jdsample.c's fancy
upsampling (h2v1, h2v2; its rounding) to the cropped chroma samples and jdcolor.c's integer
YCbCr -> RGB tables, in numpy. Both equal libjpeg-turbo's SIMD paths, which give the C code's
results (checked against TF's crops of the fixtures, ``tests/data/jpeg/tf_crop.npz``).
"""

from __future__ import annotations

import numpy as np

from tensorweave.engine import errors

__all__ = ["FACTORS", "as_rgb_components", "window_pixels"]

# luma's sampling factors over the chroma's (horizontal, vertical), by TurboJPEG's name
FACTORS = {"420": (2, 2), "422": (2, 1)}

_ADOBE_RGB = b"\xff\xee\x00\x0eAdobe\x00\x64\x00\x00\x00\x00\x00"  # APP14, transform 0: RGB


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    # jdcolor.c's build_ycc_rgb_table: 16 fraction bits, each product rounded as there
    def fix(value: float) -> int:
        return int(value * 65536 + 0.5)

    x = np.arange(256, dtype=np.int64) - 128
    half = 1 << 15
    return ((fix(1.40200) * x + half) >> 16, (fix(1.77200) * x + half) >> 16,
            -fix(0.71414) * x, -fix(0.34414) * x + half)


_CR_R, _CB_B, _CR_G, _CB_G = _tables()


def as_rgb_components(data: bytes) -> bytes:
    """JPEG `data` with its JFIF and Adobe markers replaced by an Adobe marker saying RGB, so
    that libjpeg decodes the components without converting them (same IDCT, same scans)."""
    out, pos = bytearray(data[:2] + _ADOBE_RGB), 2
    try:
        while data[pos + 1] != 0xDA:  # the header's segments, up to the first scan
            length = int.from_bytes(data[pos + 2:pos + 4], "big")
            segment = data[pos:pos + 2 + length]
            if not (data[pos + 1] == 0xE0 and segment[4:9] == b"JFIF\0"
                    or data[pos + 1] == 0xEE and segment[4:9] == b"Adobe"):
                out += segment
            pos += 2 + length
    except IndexError:
        raise errors.InvalidArgumentError(None, None, "JPEG headers end before a scan") from None
    return bytes(out + data[pos:])


def _ycc_to_rgb(luma: np.ndarray, cb: np.ndarray, cr: np.ndarray) -> np.ndarray:
    luma = luma.astype(np.int64)
    rgb = np.stack([luma + _CR_R[cr], luma + ((_CB_G[cb] + _CR_G[cr]) >> 16), luma + _CB_B[cb]],
                   axis=-1)
    return np.clip(rgb, 0, 255).astype(np.uint8)


def _fancy(samples: np.ndarray, v_factor: int) -> np.ndarray:
    """jdsample.c's h2v1/h2v2 fancy upsampling of one row group's samples ``[rows, n, 2]``
    (h2v2: the vertical sums ``3 * nearer + further``) to ``[rows, 2n, 2]``: edges replicated,
    3/4 of the nearer sample and 1/4 of the further, with the routine's rounding."""
    padded = np.concatenate([samples[:, :1], samples, samples[:, -1:]], axis=1)
    near = 3 * padded[:, 1:-1]
    shift, left, right = (4, 8, 7) if v_factor == 2 else (2, 1, 2)
    out = np.empty((samples.shape[0], 2 * samples.shape[1], 2), np.int64)
    out[:, 0::2] = (near + padded[:, :-2] + left) >> shift
    out[:, 1::2] = (near + padded[:, 2:] + right) >> shift
    return out


def window_pixels(planes: np.ndarray, window: tuple[int, int, int, int], h_factor: int,
                  v_factor: int) -> np.ndarray:
    """TF's RGB pixels of `window` ``(y, x, height, width)`` (inside the image) from `planes`,
    the whole image's ``[H, W, 3]`` Y, Cb, Cr with chroma subsampled by `h_factor` x
    `v_factor` and replicated (plain upsampling)."""
    top, left, height, width = window
    full_width = planes.shape[1]
    start = left // (8 * h_factor) * (8 * h_factor)  # jpeg_crop_scanline's iMCU-aligned x
    samples = -(-(left + width - start) // h_factor)
    luma = planes[top:top + height, left:left + width, 0]
    if samples == 1 or -(-full_width // h_factor) <= 2:  # plain upsampling: the planes as given
        chroma = planes[top:top + height, left:left + width, 1:]
        return _ycc_to_rgb(luma, chroma[..., 0], chroma[..., 1])
    columns = planes[::v_factor, start:start + samples * h_factor:h_factor, 1:].astype(np.int64)
    rows = np.arange(top, top + height)
    if v_factor == 2:  # the nearer chroma row 3/4, the row above (even rows) or below 1/4
        near = rows // 2
        far = np.clip(np.where(rows % 2 == 0, near - 1, near + 1), 0, len(columns) - 1)
        columns = 3 * columns[near] + columns[far]
    else:
        columns = columns[rows]
    chroma = _fancy(columns, v_factor)[:, left - start:left - start + width]
    return _ycc_to_rgb(luma, chroma[..., 0], chroma[..., 1])
