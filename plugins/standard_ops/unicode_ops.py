"""OpDefs of TF's unicode ops ``UnicodeDecode``, ``UnicodeDecodeWithOffsets``,
``UnicodeEncode`` and ``UnicodeTranscode``; the host kernels are
`tensorweave.plugins.kernels.unicode_ops`. Decoding flattens the strings into ``row_splits``
(``Tsplits``, int64 by default) and int32 code points; encoding takes code points cut by splits.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank

_ENCODINGS = ("UTF-8", "UTF-16-BE", "UTF-32-BE")
_ERRORS = ("strict", "replace", "ignore")


def _check(ctx: InferContext, *names: str) -> None:
    for name in names:
        if ctx.attr(name) not in _ENCODINGS:
            raise ctx.shape_error(f"{name} must be one of {', '.join(_ENCODINGS)}, got "
                                  f"{ctx.attr(name)!r}")
    if ctx.attr("errors") not in _ERRORS:
        raise ctx.shape_error(f"errors must be one of {', '.join(_ERRORS)}, got "
                              f"{ctx.attr('errors')!r}")


def _decode(ctx: InferContext) -> list[TensorSpec]:
    _check(ctx, "input_encoding")
    with_rank(ctx, 0, 1)
    return [TensorSpec(ctx.attr("Tsplits"), TensorShape([None])),
            TensorSpec(dtypes.int32, TensorShape([None]))]


def _decode_with_offsets(ctx: InferContext) -> list[TensorSpec]:
    return [*_decode(ctx), TensorSpec(dtypes.int64, TensorShape([None]))]


def _encode(ctx: InferContext) -> list[TensorSpec]:
    _check(ctx, "output_encoding")
    with_rank(ctx, 0, 1)
    splits = with_rank(ctx, 1, 1)
    rows = None if splits[0] is None else int(splits[0]) - 1
    return [TensorSpec(dtypes.string, TensorShape([rows]))]


def _transcode(ctx: InferContext) -> list[TensorSpec]:
    _check(ctx, "input_encoding", "output_encoding")
    return [TensorSpec(dtypes.string, ctx.shape(0))]


def register(registry: Any) -> None:
    decode_attrs = {"input_encoding": REQUIRED, "errors": "replace", "replacement_char": 65533,
                    "replace_control_characters": False, "Tsplits": dtypes.int64}
    splits = {"Tsplits": (dtypes.int32, dtypes.int64)}
    registry.op("UnicodeDecode", ["input:string"], _decode, attrs=decode_attrs,
                type_constraints=splits)
    registry.op("UnicodeDecodeWithOffsets", ["input:string"], _decode_with_offsets,
                attrs=decode_attrs, type_constraints=splits)
    registry.op("UnicodeEncode", ["input_values:int32", "input_splits:Tsplits"], _encode,
                attrs={"errors": "replace", "output_encoding": REQUIRED,
                       "replacement_char": 65533, "Tsplits": dtypes.int64},
                type_constraints=splits)
    registry.op("UnicodeTranscode", ["input:string"], _transcode,
                attrs={"input_encoding": REQUIRED, "output_encoding": REQUIRED,
                       "errors": "replace", "replacement_char": 65533,
                       "replace_control_characters": False})
