"""Whole-file I/O and image codecs under ``tf.compat.v1``'s names: ``tw.read_file`` /
``tw.io.read_file``, ``write_file``, and ``tw.image`` / ``tw.io``'s ``decode_png``,
``encode_png``, ``decode_bmp``, ``decode_gif``, ``decode_jpeg``, ``decode_and_crop_jpeg``,
``extract_jpeg_shape``, ``encode_jpeg``, ``decode_image`` and ``is_jpeg``.

Contract: each wraps its op (`tensorweave.plugins.standard_ops.image_io`; the kernels,
``plugins/kernels/image_io.py``, state what the bytes may hold). ``write_file`` returns the
``WriteFile`` operation. ``decode_image`` checks `channels` (None, 0, 1, 3 or 4; else
`ValueError`) and builds one ``DecodeImage`` op for uint8, uint16 and float dtypes; for another
integer dtype it decodes uint8 and converts with ``convert_image_dtype``. ``is_jpeg`` compares
the first three bytes with JPEG's magic number, as TF's.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.image_ops import convert_image_dtype
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply, make_op

__all__ = ["decode_and_crop_jpeg", "decode_bmp", "decode_gif", "decode_image", "decode_jpeg",
           "decode_png", "encode_jpeg", "encode_png", "extract_jpeg_shape", "is_jpeg",
           "read_file", "write_file"]


def read_file(filename: Any, name: str | None = None) -> Tensor:
    """The whole contents of file `filename` (a string scalar)."""
    return apply("ReadFile", [filename], name=name)


def write_file(filename: Any, contents: Any, name: str | None = None) -> Operation:
    """The op that writes `contents` to file `filename`, creating missing directories."""
    return make_op("WriteFile", [filename, contents], name=name)


def decode_png(contents: Any, channels: int = 0, dtype: Any = dtypes.uint8,
               name: str | None = None) -> Tensor:
    """A PNG (or single-frame GIF) as `dtype` (uint8, or uint16 for all 16 bits of a PNG)
    ``[height, width, channels]``."""
    return apply("DecodePng", [contents], {"channels": channels, "dtype": dtype}, name=name)


def encode_png(image: Any, compression: int = -1, name: str | None = None) -> Tensor:
    """uint8 or uint16 ``[height, width, 1-4]`` `image` as an 8- or 16-bit PNG's bytes;
    `compression` is zlib's level."""
    return apply("EncodePng", [image], {"compression": compression}, name=name)


def decode_bmp(contents: Any, channels: int = 0, name: str | None = None) -> Tensor:
    """An uncompressed 24/32-bit BMP as uint8 ``[height, width, 3 or 4]``."""
    return apply("DecodeBmp", [contents], {"channels": channels}, name=name)


def decode_gif(contents: Any, name: str | None = None) -> Tensor:
    """Every frame of a GIF as uint8 ``[frames, height, width, 3]``."""
    return apply("DecodeGif", [contents], name=name)


def decode_jpeg(contents: Any, channels: int = 0, ratio: int = 1,
                fancy_upscaling: bool = True, try_recover_truncated: bool = False,
                acceptable_fraction: float = 1, dct_method: str = "",
                name: str | None = None) -> Tensor:
    """A JPEG (or PNG, or single-frame GIF) as uint8 ``[height, width, channels]``."""
    return apply("DecodeJpeg", [contents],
                 _jpeg_attrs(channels, ratio, fancy_upscaling, try_recover_truncated,
                             acceptable_fraction, dct_method), name=name)


def decode_and_crop_jpeg(contents: Any, crop_window: Any, channels: int = 0, ratio: int = 1,
                         fancy_upscaling: bool = True, try_recover_truncated: bool = False,
                         acceptable_fraction: float = 1, dct_method: str = "",
                         name: str | None = None) -> Tensor:
    """The ``crop_window = [y, x, height, width]`` part of a JPEG, as uint8."""
    return apply("DecodeAndCropJpeg", [contents, crop_window],
                 _jpeg_attrs(channels, ratio, fancy_upscaling, try_recover_truncated,
                             acceptable_fraction, dct_method), name=name)


def extract_jpeg_shape(contents: Any, output_type: Any = dtypes.int32,
                       name: str | None = None) -> Tensor:
    """A JPEG's ``[height, width, components]``, read from its headers."""
    return apply("ExtractJpegShape", [contents], {"output_type": dtypes.as_dtype(output_type)},
                 name=name)


def _jpeg_attrs(channels: int, ratio: int, fancy_upscaling: bool, try_recover_truncated: bool,
                acceptable_fraction: float, dct_method: str) -> dict[str, Any]:
    return {"channels": channels, "ratio": ratio, "fancy_upscaling": fancy_upscaling,
            "try_recover_truncated": try_recover_truncated,
            "acceptable_fraction": float(acceptable_fraction), "dct_method": dct_method}


def encode_jpeg(image: Any, format: str = "", quality: int = 95,  # noqa: A002 - TF's name
                progressive: bool = False, optimize_size: bool = False,
                chroma_downsampling: bool = True, density_unit: str = "in",
                x_density: int = 300, y_density: int = 300, xmp_metadata: str = "",
                name: str | None = None) -> Tensor:
    """TF's ``EncodeJpeg`` op: the JPEG file of a uint8 ``[height, width, 1 or 3]`` image."""
    return apply("EncodeJpeg", [image],
                 {"format": format, "quality": quality, "progressive": progressive,
                  "optimize_size": optimize_size, "chroma_downsampling": chroma_downsampling,
                  "density_unit": density_unit, "x_density": x_density, "y_density": y_density,
                  "xmp_metadata": xmp_metadata}, name=name)


def decode_image(contents: Any, channels: int | None = None, dtype: Any = dtypes.uint8,
                 name: str | None = None, expand_animations: bool = True) -> Tensor:
    """A BMP, GIF, JPEG or PNG image, told apart by its first bytes: 3-D, or 4-D for a GIF
    unless `expand_animations` is False (then its first frame)."""
    if channels not in (None, 0, 1, 3, 4):
        raise ValueError("channels must be in (None, 0, 1, 3, 4)")
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "decode_image", [contents]) as scope:
        attrs = {"channels": channels or 0, "expand_animations": expand_animations}
        if dtype in (dtypes.uint8, dtypes.uint16) or dtype.is_floating:
            return apply("DecodeImage", [contents], {**attrs, "dtype": dtype}, name=scope)
        image = apply("DecodeImage", [contents], {**attrs, "dtype": dtypes.uint8})
        return convert_image_dtype(image, dtype, name=scope)


def is_jpeg(contents: Any, name: str | None = None) -> Tensor:
    """Whether `contents` starts with JPEG's magic number ``\\xff\\xd8\\xff``."""
    with name_scope(name, "is_jpeg", [contents]) as scope:
        contents = convert_to_tensor(contents, dtype=dtypes.string, name="contents")
        head = apply("Substr", [contents, 0, 3], {"unit": "BYTE"})
        return apply("Equal", [head, b"\xff\xd8\xff"], name=scope)
