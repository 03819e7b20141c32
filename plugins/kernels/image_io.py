"""Kernels of whole-file I/O and the image codecs (host only, as TF's): ``ReadFile``,
``WriteFile``, ``DecodePng``/``DecodeGif``/``DecodeJpeg``, ``DecodeBmp``, ``DecodeImage``,
``EncodePng`` and ``EncodeJpeg``.

Contract: files go through `tensorweave.gfile`, so a missing file is `NotFoundError` naming it;
``WriteFile`` creates missing parent directories, as TF's. As TF's one decoder kernel behind
``DecodePng``, ``DecodeGif`` and ``DecodeJpeg``, each accepts PNG, GIF and JPEG bytes (by magic
number): ``DecodeGif`` gives 4-D (a PNG as one frame), the others 3-D (a GIF must then hold one
frame). ``DecodeImage`` dispatches as TF 1.15's ``decode_image`` (JPEG, PNG, GIF by their first
three bytes, else BMP, which must start with ``BM``); a GIF stays 4-D unless
``expand_animations`` is False (first frame); a float ``dtype`` scales to [0, 1] (PNGs from
their 16-bit decode, as TF); a uint16 ``dtype`` gives a PNG's 16-bit decode and GIF or BMP values
times 256 (``convert_image_dtype``'s widening). ``DecodePng`` with ``dtype`` uint16 gives 16-bit
samples (8-bit files as ``v * 257``) and refuses GIF data; ``EncodePng`` writes a 16-bit PNG for
a uint16 image. Failures are `InvalidArgumentError` in TF's wording, the codec's reason
appended. The codecs are `tensorweave.formats` (libjpeg-turbo, libpng, giflib): ``DecodeJpeg`` and
``DecodeAndCropJpeg`` honour every attr (``dct_method`` "" and "INTEGER_FAST" are TF's
JDCT_IFAST, "INTEGER_ACCURATE" JDCT_ISLOW; ``ratio`` is libjpeg's DCT scaling); the other ops
decode JPEG bytes with TF's defaults. Truncated JPEG data is an error unless
``try_recover_truncated``, or unless the rows read before the data ran out reach
``acceptable_fraction`` (``DecodeJpeg``; the rest black, as TF); ``channels`` 4 is refused; a
crop window must lie inside the image, and ``DecodeAndCropJpeg`` gives TF's pixels at the
window's edges (`tensorweave.formats.jpeg_crop`). ``ExtractJpegShape`` reads the headers only.
``EncodeJpeg`` writes TF's bytes, every attr honoured; libjpeg's refusals (a side over 65500,
an empty image, an XMP packet too long for a marker) are TF's `InternalError`.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.formats import gif, jpeg, png
from tensorweave.formats.bmp import BmpError, decode_bmp
from tensorweave.platform import gfile
from tensorweave.plugins.kernels.file_access import checked_path

_JPEG, _PNG, _GIF = b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF8"


def _scalar(ctx: KernelContext, value: Any, what: str) -> bytes:
    array = np.asarray(value)
    if array.ndim:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op, f"{what} must be scalar, got "
                                          f"shape {list(array.shape)}")
    item = array.item()
    return item.encode() if isinstance(item, str) else bytes(item)


def _string(data: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def _invalid(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _check_channels(ctx: KernelContext, channels: int, allowed: tuple[int, ...],
                    text: str) -> None:
    if channels not in allowed:
        raise _invalid(ctx, f"channels must be {text}, got {channels}")


# -- files --------------------------------------------------------------------------------------


def read_file(ctx: KernelContext, filename: Any) -> np.ndarray:
    name = checked_path(ctx, _scalar(ctx, filename, "filename").decode())
    with gfile.GFile(name, "rb") as f:
        return _string(f.read())


def write_file(ctx: KernelContext, filename: Any, contents: Any) -> None:
    name = checked_path(ctx, _scalar(ctx, filename, "filename").decode())
    data = _scalar(ctx, contents, "contents")
    parent = os.path.dirname(name)
    if parent:
        gfile.makedirs(parent)
    with gfile.GFile(name, "wb") as f:
        f.write(data)


# -- decoding -----------------------------------------------------------------------------------


def _format_name(data: bytes) -> str:
    if not data:
        return "empty file"
    # C-style escapes, as TF's CEscape
    escaped = "".join(("\\" + chr(b)) if b in b"'\"\\" else chr(b) if 32 <= b < 127
                      else f"\\{b:03o}" for b in data[:16])
    return f"unknown format starting with '{escaped}'"


def _png(ctx: KernelContext, data: bytes, channels: int, bits: int = 8) -> np.ndarray:
    try:
        return png.decode(data, channels, bits)
    except errors.InvalidArgumentError as exc:
        raise _invalid(ctx, exc.message) from None


def _gif(ctx: KernelContext, data: bytes, first_only: bool = False) -> np.ndarray:
    try:
        return gif.decode(data, first_only)
    except errors.InvalidArgumentError as exc:
        raise _invalid(ctx, f"Invalid GIF data (size {len(data)}), {exc.message}") from None


def _bmp(ctx: KernelContext, data: bytes, channels: int) -> np.ndarray:
    try:
        return decode_bmp(data, channels)
    except BmpError as exc:
        raise _invalid(ctx, str(exc)) from None


def _jpeg_options(ctx: KernelContext) -> dict[str, Any]:
    """`tensorweave.formats.jpeg.decode`'s options from the op's attrs, as TF's DecodeJpeg
    kernel reads them; ops without JPEG attrs get TF's defaults."""
    attrs = ctx.attrs
    if "dct_method" not in attrs:
        return {}
    ratio, dct = attrs["ratio"], attrs["dct_method"]
    if ratio not in (1, 2, 4, 8):
        raise _invalid(ctx, f"ratio must be 1, 2, 4, or 8, got {ratio}")
    if dct not in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
        raise _invalid(ctx, "dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}")
    return {"fast_idct": dct != "INTEGER_ACCURATE", "fancy_upsampling": attrs["fancy_upscaling"],
            "ratio": ratio, "recover_truncated": attrs["try_recover_truncated"],
            "acceptable_fraction": attrs["acceptable_fraction"]}


def _jpeg(ctx: KernelContext, data: bytes, channels: int,
          crop: tuple[int, int, int, int] | None = None) -> np.ndarray:
    options = _jpeg_options(ctx)
    failed = f"Invalid JPEG data or crop window, data size {len(data)}"
    if channels not in (0, 1, 3):
        raise _invalid(ctx, f"{failed}: JPEG images decode to 1 or 3 channels, not {channels}")
    try:
        return jpeg.decode(data, channels, crop=crop, **options)
    except errors.InvalidArgumentError as exc:
        raise _invalid(ctx, f"{failed}: {exc.message}") from None


def decode_and_crop_jpeg(ctx: KernelContext, contents: Any, crop_window: Any) -> np.ndarray:
    data = _scalar(ctx, contents, "contents")
    window = np.asarray(crop_window)
    if window.ndim != 1:
        raise _invalid(ctx, f"crop_window must be 1-D, got shape {list(window.shape)}")
    if window.shape[0] != 4:
        raise _invalid(ctx, f"crop_size must have four elements {list(window.shape)}")
    _check_channels(ctx, ctx.attrs["channels"], (0, 1, 3, 4), "0, 1, 3, or 4")
    if not data.startswith(_JPEG):
        raise _invalid(ctx, f"Invalid JPEG data or crop window, data size {len(data)}")
    y, x, height, width = (int(v) for v in window)
    return _jpeg(ctx, data, ctx.attrs["channels"], (y, x, height, width))


def extract_jpeg_shape(ctx: KernelContext, contents: Any) -> np.ndarray:
    data = _scalar(ctx, contents, "contents")
    try:
        header = jpeg.read_header(data)
    except errors.InvalidArgumentError as exc:
        raise _invalid(ctx, f"Invalid JPEG data, size {len(data)}: {exc.message}") from None
    return np.array([header.height, header.width, header.components], ctx.out_np)


def decode_any(ctx: KernelContext, contents: Any) -> np.ndarray:
    """``DecodePng``, ``DecodeGif`` and ``DecodeJpeg``: one kernel, as TF's."""
    data = _scalar(ctx, contents, "contents")
    channels = ctx.attrs.get("channels", 3)
    _check_channels(ctx, channels, (0, 1, 3, 4), "0, 1, 3, or 4")
    wide = ctx.out_np is np.uint16  # only DecodePng's dtype may ask for it
    if data.startswith(_JPEG):
        if wide:
            raise _invalid(ctx, "JPEG images decode to uint8 only, not uint16")
        image = _jpeg(ctx, data, channels)
        return image[None] if ctx.op == "DecodeGif" else image
    if data.startswith(_PNG):
        image = _png(ctx, data, channels, 16 if wide else 8)
        return image[None] if ctx.op == "DecodeGif" else image
    if data.startswith(_GIF):
        if wide:
            raise _invalid(ctx, "GIF images decode to uint8 only, not uint16")
        _check_channels(ctx, channels, (0, 3), "0 or 3 for GIF")
        frames = _gif(ctx, data)
        if ctx.op == "DecodeGif":
            return frames
        if len(frames) != 1:
            raise _invalid(ctx, f"Got {len(frames)} frames, but animated gifs can only be "
                                "decoded by tf.image.decode_gif or tf.image.decode_image")
        return frames[0]
    raise _invalid(ctx, f"Expected image (JPEG, PNG, or GIF), got {_format_name(data)}")


def decode_bmp_kernel(ctx: KernelContext, contents: Any) -> np.ndarray:
    _check_channels(ctx, ctx.attrs["channels"], (0, 3, 4), "0, 3 or 4")
    return _bmp(ctx, _scalar(ctx, contents, "contents"), ctx.attrs["channels"])


def _as_float(image: np.ndarray, dtype: type) -> np.ndarray:
    # convert_image_dtype's integer -> float: a cast, then a product with 1 / max in `dtype`
    scale = dtype(1.0 / np.iinfo(image.dtype).max)
    return image.astype(dtype) * scale


def decode_image(ctx: KernelContext, contents: Any) -> np.ndarray:
    data = _scalar(ctx, contents, "contents")
    channels, out = ctx.attrs["channels"], ctx.out_np
    _check_channels(ctx, channels, (0, 1, 3, 4), "0, 1, 3, or 4")
    wide = out is not np.uint8
    if data.startswith(_JPEG):
        image = _jpeg(ctx, data, channels)
    elif data.startswith(_PNG[:3]):
        image = _png(ctx, data, channels, 16 if wide else 8)
    elif data.startswith(_GIF[:3]):
        if channels not in (0, 3):
            raise _invalid(ctx, "Channels must be in (None, 0, 3) when decoding GIF images")
        if ctx.attrs["expand_animations"]:
            image = _gif(ctx, data)
        else:
            image = _gif(ctx, data, first_only=True)[0]
    elif data.startswith(b"BM"):
        if channels == 1:
            raise _invalid(ctx, "Channels must be in (None, 0, 3) when decoding BMP images")
        image = _bmp(ctx, data, channels)
    else:
        raise _invalid(ctx, "Unable to decode bytes as JPEG, PNG, GIF, or BMP")
    if not wide:
        return image
    if out is np.uint16:
        # a 16-bit PNG decode is already uint16; the others scale as convert_image_dtype
        return image if image.dtype == np.uint16 else image.astype(np.uint16) * np.uint16(256)
    return _as_float(image, out)


# -- encoding -----------------------------------------------------------------------------------


def encode_png_kernel(ctx: KernelContext, image: Any) -> np.ndarray:
    compression = ctx.attrs["compression"]
    if not -1 <= compression <= 9:
        raise _invalid(ctx, f"compression should be in [-1,9], got {compression}")
    image = np.asarray(image)
    if image.ndim != 3:
        raise _invalid(ctx, f"image must be 3-dimensional{list(image.shape)}")
    if image.shape[2] not in (1, 2, 3, 4):
        raise _invalid(ctx, f"image must have 1, 2, 3, or 4 channels, got {image.shape[2]}")
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise errors.InternalError(ctx.node_name, ctx.op, "PNG encoding failed")
    try:
        return _string(png.encode(image, compression))
    except errors.InternalError as exc:
        raise errors.InternalError(ctx.node_name, ctx.op, exc.message) from None


def _xmp(value: str | bytes) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def encode_jpeg_kernel(ctx: KernelContext, image: Any) -> np.ndarray:
    attrs = ctx.attrs
    form, quality, unit = attrs["format"], attrs["quality"], attrs["density_unit"]
    if form not in ("", "grayscale", "rgb"):
        raise _invalid(ctx, f"format must be '', grayscale or rgb, got {form}")
    if not 0 <= quality <= 100:
        raise _invalid(ctx, f"quality must be in [0,100], got {quality}")
    if unit not in ("in", "cm"):
        raise _invalid(ctx, f"density_unit must be 'in' or 'cm'{unit}")
    image = np.asarray(image)
    if image.ndim != 3:
        raise _invalid(ctx, f"image must be 3-dimensional{list(image.shape)}")
    if form:
        channels = 1 if form == "grayscale" else 3
        if image.shape[2] != channels:
            raise _invalid(ctx, f"format {form} expects {channels} channels, got "
                                f"{list(image.shape)}")
    elif image.shape[2] not in (1, 3):
        raise _invalid(ctx, f"image must have 1 or 3 channels, got {list(image.shape)}")
    try:
        data = jpeg.encode(image, quality, progressive=attrs["progressive"],
                           optimize=attrs["optimize_size"],
                           chroma_downsampling=attrs["chroma_downsampling"],
                           density_unit=1 if unit == "in" else 2, x_density=attrs["x_density"],
                           y_density=attrs["y_density"], xmp=_xmp(attrs["xmp_metadata"]))
    except errors.InternalError as exc:
        raise errors.InternalError(ctx.node_name, ctx.op, exc.message) from None
    return _string(data)


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    registry.add("ReadFile", device_type, read_file)
    registry.add("WriteFile", device_type, write_file)
    for op in ("DecodePng", "DecodeGif", "DecodeJpeg"):
        registry.add(op, device_type, decode_any, expensive=True)
    registry.add("DecodeAndCropJpeg", device_type, decode_and_crop_jpeg, expensive=True)
    registry.add("ExtractJpegShape", device_type, extract_jpeg_shape)
    registry.add("DecodeBmp", device_type, decode_bmp_kernel)
    registry.add("DecodeImage", device_type, decode_image, expensive=True)
    registry.add("EncodePng", device_type, encode_png_kernel, expensive=True)
    registry.add("EncodeJpeg", device_type, encode_jpeg_kernel, expensive=True)
