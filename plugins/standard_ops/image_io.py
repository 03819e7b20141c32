"""OpDefs of whole-file I/O and the image codecs: ``ReadFile``, ``WriteFile``, ``DecodePng``,
``EncodePng``, ``DecodeBmp``, ``DecodeGif``, ``DecodeJpeg``, ``DecodeAndCropJpeg``,
``ExtractJpegShape``, ``EncodeJpeg`` and ``DecodeImage``.

Contract: names, inputs, attrs and defaults follow TF's ``io_ops.cc`` and ``image_ops.cc``
(``DecodeImage`` is TF 2's op, which tensorweave's ``decode_image`` builds). File names and
encoded images are string scalars (rank checked here, `ValueError`). Decoders give 3-D
``[height, width, channels]`` (the channel dimension known when the ``channels`` attr is
non-zero), ``DecodeGif`` 4-D ``[frames, height, width, 3]``, ``DecodeImage`` unknown rank unless
``expand_animations`` is False. ``DecodePng``'s ``dtype`` and ``EncodePng``'s ``T`` are uint8
or uint16; ``DecodeImage``'s ``dtype`` is uint8, uint16 or a float type. ``DecodeAndCropJpeg``'s
``crop_window`` is an int32 vector of 4 (``[y, x, height, width]``; rank and a known length
checked; a constant window gives the output's height and width). ``ExtractJpegShape`` gives
a ``[3]`` vector of its ``output_type`` (int32 or int64).
Encoders take 3-D images and give a string scalar. ``WriteFile`` is stateful and has no
outputs. What the bytes hold is the kernels' business (``plugins/kernels/image_io.py``).
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank

DECODE_IMAGE_TYPES = frozenset({dtypes.uint8, dtypes.uint16, *dtypes.FLOATS})
PNG_TYPES = frozenset({dtypes.uint8, dtypes.uint16})
JPEG_DECODE_ATTRS = {"channels": 0, "ratio": 1, "fancy_upscaling": True,
                     "try_recover_truncated": False, "acceptable_fraction": 1.0,
                     "dct_method": ""}
JPEG_ENCODE_ATTRS = {"format": "", "quality": 95, "progressive": False, "optimize_size": False,
                     "chroma_downsampling": True, "density_unit": "in", "x_density": 300,
                     "y_density": 300, "xmp_metadata": ""}


def _scalar_string(ctx: InferContext) -> list[TensorSpec]:
    for i in range(len(ctx.inputs)):
        with_rank(ctx, i, 0)
    return [TensorSpec(dtypes.string, TensorShape([]))]


def _write(ctx: InferContext) -> list[TensorSpec]:
    _scalar_string(ctx)
    return []


def _channels(ctx: InferContext) -> int | None:
    channels = ctx.attr("channels")
    return channels or None


def _image(dtype_attr: str | None) -> Any:
    def infer(ctx: InferContext) -> list[TensorSpec]:
        with_rank(ctx, 0, 0)
        dtype = ctx.attr(dtype_attr) if dtype_attr else dtypes.uint8
        return [TensorSpec(dtype, TensorShape([None, None, _channels(ctx)]))]

    return infer


def _gif(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    return [TensorSpec(dtypes.uint8, TensorShape([None, None, None, 3]))]


def _any_image(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    if ctx.attr("expand_animations"):
        return [TensorSpec(ctx.attr("dtype"), TensorShape(None))]
    return [TensorSpec(ctx.attr("dtype"), TensorShape([None, None, _channels(ctx)]))]


def _crop(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    length = with_rank(ctx, 1, 1).as_list()[0]
    if length is not None and length != 4:
        raise ctx.shape_error(f"crop_size must have four elements, got {length}")
    window = ctx.constant_value(1)
    height, width = (int(window[2]), int(window[3])) if window is not None else (None, None)
    return [TensorSpec(dtypes.uint8, TensorShape([height, width, _channels(ctx)]))]


def _jpeg_shape(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    return [TensorSpec(ctx.attr("output_type"), TensorShape([3]))]


def _encode(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 3)
    return [TensorSpec(dtypes.string, TensorShape([]))]


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    registry.op("ReadFile", ["filename:string"], _scalar_string)
    registry.op("WriteFile", ["filename:string", "contents:string"], _write, stateful=True)
    registry.op("DecodePng", ["contents:string"], _image("dtype"),
                attrs={"channels": 0, "dtype": dtypes.uint8},
                type_constraints={"dtype": PNG_TYPES})
    registry.op("EncodePng", ["image:T"], _encode, attrs={"T": REQUIRED, "compression": -1},
                type_constraints={"T": PNG_TYPES})
    registry.op("DecodeBmp", ["contents:string"], _image(None), attrs={"channels": 0})
    registry.op("DecodeGif", ["contents:string"], _gif)
    registry.op("DecodeJpeg", ["contents:string"], _image(None), attrs=dict(JPEG_DECODE_ATTRS))
    registry.op("DecodeAndCropJpeg", ["contents:string", "crop_window:int32"], _crop,
                attrs=dict(JPEG_DECODE_ATTRS))
    registry.op("ExtractJpegShape", ["contents:string"], _jpeg_shape,
                attrs={"output_type": dtypes.int32},
                type_constraints={"output_type": frozenset({dtypes.int32, dtypes.int64})})
    registry.op("EncodeJpeg", ["image:uint8"], _encode, attrs=dict(JPEG_ENCODE_ATTRS))
    registry.op("DecodeImage", ["contents:string"], _any_image,
                attrs={"channels": 0, "dtype": dtypes.uint8, "expand_animations": True},
                type_constraints={"dtype": DECODE_IMAGE_TYPES})
