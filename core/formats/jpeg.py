"""JPEG on libjpeg-turbo, as TF's ``jpeg_mem``: decoding through `simplejpeg` (TurboJPEG),
encoding through Pillow's libjpeg encoder.

Why two packages: TF's default decode is libjpeg's JDCT_IFAST IDCT *with* fancy upsampling,
which Pillow cannot ask for (its fast "draft" mode also turns fancy upsampling off); simplejpeg
exposes both switches and DCT scaling, and its pixels equal TF 2.21's for every fixture
(``tests/data/jpeg``). For encoding, Pillow exposes every setting of TF's ``encode_jpeg``
(quality, progressive, optimize, 4:2:0/4:4:4, density, XMP) and its bytes equal TF's; simplejpeg
has no progressive, optimize or marker options. Both release the GIL while they code.

Contract: `read_header` and `decode` raise `InvalidArgumentError` (no node; the kernel adds it)
for data libjpeg refuses, with TurboJPEG's reason. `decode` gives uint8 ``[h, w, c]``:
``channels`` 0 keeps the file's (1 for grey, 3 for colour and CMYK), 1 and 3 convert as libjpeg
does; a CMYK/YCCK file decodes to RGB as TF's (``r = c * k // 255`` on libjpeg's Adobe-inverted
output) and refuses ``channels=1`` as libjpeg does. ``ratio`` 2, 4, 8 is libjpeg's DCT scaling
(``ceil(side / ratio)``). Truncated data is an error unless ``recover_truncated``: then every
row is produced (so TF's ``acceptable_fraction`` never rejects), libjpeg reading what TF's
source manager gives it after the cut: the bytes since the MCU in progress began, again, until
an MCU ends at the end of the data, then a fake end-of-image (after which the MCUs are uniform
grey). `tensorweave.formats.jpeg_cut` works out that byte order and TurboJPEG decodes it, which
gives TF 2.21's pixels on every recovered fixture of one-scan (sequential) files.
Without ``recover_truncated``, with ``acceptable_fraction`` below 1, TF keeps the rows libjpeg
produced before the data ran out and blacks out the rest, if they are at least that fraction
of the height: `tensorweave.formats.jpeg_cut` counts those rows as TF's libjpeg produces them
(equal to TF 2.21's at every cut of every fixture), and their pixels are TurboJPEG's recovered
decode's, which equal TF's there. A fraction of 1 (the default) refuses every cut file:
libjpeg's bit reader fetches 57 bits ahead, more than the last MCU's padding and end marker,
so the last MCU always runs out. Data libjpeg only warns about (extraneous bytes, a
corrupt segment) decodes, as in TF. ``crop`` ``(y, x, height, width)`` is TF's
``DecodeAndCropJpeg`` window, which must lie inside the (scaled) image: for 4:2:0 and 4:2:2
colour output at ratio 1 with fancy upsampling it comes from `tensorweave.formats.jpeg_crop`
(its edges upsample as libjpeg-turbo's cropped decode does); elsewhere no upsampling crosses
the window's edges, so it is a slice of the full decode.

Known differences from TF: TurboJPEG's header reader refuses sampling layouts outside its list
(4:4:4, 4:2:2, 4:2:0, 4:4:0, 4:1:1, 4:4:1, grey) that libjpeg itself decodes; for an image so
small that several scales give the same size (sides of a few pixels), where TurboJPEG would
pick another scale than ``ratio``, the frame is declared taller to steer it, which for 4:4:0
files can change the last row's chroma; a truncated progressive file (or one whose bytes read
again hold a marker whose segment libjpeg would go on to read), recovered with
``recover_truncated``, is TurboJPEG's recovery (TF's shape and its rows
up to the cut; after it TurboJPEG gives uniform grey where TF reads bytes again; at some cuts
of progressive files TF refuses); and a cut file given to ``DecodeAndCropJpeg`` is refused
unless ``recover_truncated``, and then recovered as TurboJPEG does (its
``acceptable_fraction`` is not modelled).
"""

from __future__ import annotations

import io

import attrs
import numpy as np
import simplejpeg
from PIL import Image

from tensorweave.engine import errors
from tensorweave.formats.jpeg_crop import FACTORS, as_rgb_components, window_pixels
from tensorweave.formats.jpeg_cut import recovered_scan, rows_read

__all__ = ["JpegHeader", "decode", "encode", "read_header"]

_COMPONENTS = {"Gray": 1, "CMYK": 4, "YCCK": 4}
# libjpeg reports a file that ends before its end-of-image marker as this warning; TF's source
# manager instead suspends there, which fails the decode unless recovering.
_TRUNCATED = "Premature end of JPEG file"
# libjpeg's warnings (as opposed to its errors) that TF decodes through
_WARNINGS = (_TRUNCATED, "Corrupt JPEG data", "Invalid SOS parameters for sequential JPEG",
             "Inconsistent progression sequence", "Unsupported marker type",
             "Warning: unknown JFIF revision number")


@attrs.frozen
class JpegHeader:
    """The frame header: sides in pixels and the number of colour components (1, 3 or 4)."""

    height: int
    width: int
    components: int


def _invalid(reason: object) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, str(reason))


def _frame(data: bytes) -> tuple[int, int, str, str]:
    """TurboJPEG's height, width, colour space and subsampling names of `data`."""
    try:
        return simplejpeg.decode_jpeg_header(data)
    except ValueError as exc:
        raise _invalid(exc) from None


def read_header(data: bytes) -> JpegHeader:
    """The header of JPEG `data` (TF's ``GetImageInfo``), reading no scan data."""
    height, width, colorspace, _ = _frame(data)
    return JpegHeader(height, width, _COMPONENTS.get(colorspace, 3))


def _decode(data: bytes, colorspace: str, fast_idct: bool, fancy_upsampling: bool,
            min_side: tuple[int, int], ratio: int,
            recover_truncated: bool) -> tuple[np.ndarray, bool]:
    """TurboJPEG's decode, and whether the data ran out (decoded as libjpeg recovers it)."""
    def run(strict: bool) -> np.ndarray:
        return simplejpeg.decode_jpeg(data, colorspace=colorspace, fastdct=fast_idct,
                                      fastupsample=not fancy_upsampling, min_height=min_side[0],
                                      min_width=min_side[1], min_factor=ratio, strict=strict)

    try:
        return run(strict=True), False
    except ValueError as exc:
        reason = str(exc)
        if not reason.startswith(_WARNINGS) or (reason.startswith(_TRUNCATED)
                                                 and not recover_truncated):
            raise _invalid(exc) from None
    # a warning stopped the strict run: decode again as libjpeg does, warnings ignored
    try:
        return run(strict=False), reason.startswith(_TRUNCATED)
    except ValueError as exc:
        raise _invalid(exc) from None


def _scale_is_ambiguous(height: int, width: int, ratio: int) -> bool:
    """Whether a TurboJPEG scale larger than 1 / `ratio` (k / 8) gives the same output size."""
    def scaled(side: int, num: int, denom: int) -> int:
        return -(-side * num // denom)

    wanted = (scaled(height, 1, ratio), scaled(width, 1, ratio))
    return any((scaled(height, k, 8), scaled(width, k, 8)) == wanted
               for k in range(8 // ratio + 1, 9))


def _with_height(data: bytes, height: int) -> bytes:
    """JPEG `data` with its frame header (SOF) declaring `height` rows."""
    pos = 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return data[:pos + 5] + height.to_bytes(2, "big") + data[pos + 7:]
        pos += 2 + int.from_bytes(data[pos + 2:pos + 4], "big")
    raise _invalid("no frame header before the data ends")


def decode(data: bytes, channels: int = 0, *, fast_idct: bool = True,
           fancy_upsampling: bool = True, ratio: int = 1, recover_truncated: bool = False,
           acceptable_fraction: float = 1.0,
           crop: tuple[int, int, int, int] | None = None) -> np.ndarray:
    """JPEG `data` decoded as TF's ``DecodeJpeg`` with these attrs (`fast_idct` is
    ``dct_method`` "" or "INTEGER_FAST", False "INTEGER_ACCURATE"), or as
    ``DecodeAndCropJpeg`` with `crop` ``(y, x, height, width)``; see the module docstring."""
    # TF compares in float32: fraction read < min(1, acceptable_fraction)
    fraction = min(np.float32(1), np.float32(acceptable_fraction))
    partial = not recover_truncated and crop is None and fraction < 1
    height, width, space, subsampling = _frame(data)
    header = JpegHeader(height, width, _COMPONENTS.get(space, 3))
    if header.components == 4:
        colorspace = "CMYK"
        if channels == 1:
            raise _invalid("Unsupported color conversion request")
    elif channels == 0:
        colorspace = "GRAY" if header.components == 1 else "RGB"
    else:
        colorspace = "GRAY" if channels == 1 else "RGB"
    min_side = (-(-header.height // ratio), -(-header.width // ratio))
    if crop is not None:
        top, left, rows, cols = crop
        if not (rows > 0 and cols > 0 and top >= 0 and left >= 0 and top + rows <= min_side[0]
                and left + cols <= min_side[1]):
            raise _invalid(f"crop window [{top}, {left}, {rows}, {cols}] does not fit the "
                           f"{min_side[0]}x{min_side[1]} image")
        if (space == "YCbCr" and subsampling in FACTORS and colorspace == "RGB"
                and fancy_upsampling and ratio == 1):
            # the window's edges upsample as libjpeg-turbo's cropped decode does
            planes, _ = _decode(as_rgb_components(data), "RGB", fast_idct, False, min_side,
                                ratio, recover_truncated)
            return window_pixels(planes, crop, *FACTORS[subsampling])
    def whole(source: bytes) -> tuple[np.ndarray, bool]:
        if ratio > 1 and _scale_is_ambiguous(height, width, ratio):
            # TurboJPEG picks its scale by the output size, which several scales share here:
            # declare the frame taller, so that only 1 / ratio gives the size asked for, and
            # keep the real rows (no upsampling crosses rows at ratio > 1, but for 4:4:0's
            # chroma)
            taller = height + 64 * ratio
            image, cut = _decode(_with_height(source, taller), colorspace, fast_idct,
                                 fancy_upsampling, (-(-taller // ratio), min_side[1]), ratio,
                                 recover_truncated or partial)
            return image[:min_side[0]], cut
        return _decode(source, colorspace, fast_idct, fancy_upsampling, min_side, ratio,
                       recover_truncated or partial)

    image, cut = whole(data)
    if cut and recover_truncated and crop is None:
        # TF's source reads the bytes since the MCU in progress again before its fake end
        # marker: decode them in that order, where `jpeg_cut` models it
        stream = recovered_scan(data)
        if stream is not None:
            image, _ = whole(stream)
    if colorspace == "CMYK":
        cmyk = image.astype(np.uint16)
        image = (cmyk[..., :3] * cmyk[..., 3:] // 255).astype(np.uint8)
    if cut and not recover_truncated:
        # the rows libjpeg produced under TF's source manager are TurboJPEG's (they come from
        # the MCUs before the cut); the rest are black, as TF leaves them
        rows = rows_read(data, ratio, fancy_upsampling, colorspace == "GRAY")
        if rows is None or np.float32(rows) / np.float32(len(image)) < fraction:
            raise _invalid(f"Premature end of JPEG file: {rows or 0} of {len(image)} rows read, "
                           f"fewer than acceptable_fraction {acceptable_fraction}")
        image[rows:] = 0
    if crop is not None:
        image = image[top:top + rows, left:left + cols]
    return image


def encode(image: np.ndarray, quality: int = 95, *, progressive: bool = False,
           optimize: bool = False, chroma_downsampling: bool = True, density_unit: int = 1,
           x_density: int = 300, y_density: int = 300, xmp: bytes = b"") -> bytes:
    """uint8 `image` ``[h, w, 1 or 3]`` as TF's ``EncodeJpeg`` writes it: JFIF with
    `density_unit` (1 inches, 2 cm), `quality` with baseline tables, 4:2:0 when
    `chroma_downsampling` else 4:4:4 (grey: 1x1), Huffman tables optimized if asked (libjpeg
    always optimizes progressive files), an XMP APP1 packet if `xmp`. Raises `InternalError`
    where libjpeg refuses (an empty image, a side over 65500)."""
    grey = image.shape[2] == 1
    picture = Image.fromarray(np.ascontiguousarray(image[..., 0] if grey else image),
                              "L" if grey else "RGB")
    options: dict = {"quality": quality, "progressive": progressive, "optimize": optimize,
                     "subsampling": 2 if chroma_downsampling and not grey else 0,
                     "dpi": (x_density, y_density)}
    if xmp:
        options["xmp"] = xmp
    out = io.BytesIO()
    try:
        picture.save(out, "JPEG", **options)
    except (OSError, ValueError, SystemError):
        raise errors.InternalError(None, None, "JPEG encoding failed") from None
    data = out.getvalue()
    if density_unit != 1:
        # Pillow writes dots per inch only; the unit is one byte of the JFIF APP0 segment
        # (SOI, APP0 marker and length, "JFIF\0", version, then the unit at offset 13)
        data = data[:13] + bytes([density_unit]) + data[14:]
    return data
