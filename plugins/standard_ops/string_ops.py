"""OpDefs of TF's dense string ops (``string_ops.cc``, ``regex_ops``, ``as_string``,
``string_to_number``, ``reduce_join``, the hash-bucket and base64 ops) and the splits into a
sparse tensor (``StringSplit``, ``StringSplitV2``), and ``StringFormat``.

Contract: every op takes and gives ``string`` tensors except where TF's signature says
otherwise (``StringLength`` -> int32, ``RegexFullMatch`` -> bool, ``StringToNumber`` ->
``out_type``, ``AsString`` from numbers and bools, the hash buckets -> int64). Shape functions
are TF's: unchanged for the elementwise ops, scalar-broadcasting merge for ``StringJoin``,
broadcast of input and pos for ``Substr``, the reduction shape for ``ReduceJoin``; the splits
take a vector and a scalar separator and give a sparse tensor's three parts (indices
``[?, 2]`` int64, values ``[?]`` string, dense shape ``[2]`` int64); ``StringFormat`` takes
tensors of any dtypes, one per placeholder of its template, and gives a scalar. An attr
outside TF's allowed values (``unit``, ``num_buckets < 1``) raises `ValueError` at construction,
as TF's attr validation does. None of these ops has a gradient.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape, format_dims
from tensorweave.plugins.standard_ops.array import _segment
from tensorweave.plugins.standard_ops.math import reduced_shape
from tensorweave.plugins.standard_ops.shape_fns import broadcast_shape, unchanged, with_rank

UNITS = ("BYTE", "UTF8_CHAR")
NUMBER_TYPES = frozenset({dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64})
AS_STRING_TYPES = frozenset({dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
                             dtypes.float32, dtypes.float64, dtypes.bool_})


def _check_unit(ctx: InferContext) -> None:
    unit = ctx.attr("unit")
    if unit not in UNITS:
        raise ValueError(f"Attr 'unit' of '{ctx.op}' Op passed string '{unit}' not in: "
                         f"{', '.join(repr(u) for u in UNITS)} (node '{ctx.node_name}').")


def _check_num_buckets(ctx: InferContext) -> None:
    if ctx.attr("num_buckets") < 1:
        raise ValueError(f"Value for attr 'num_buckets' of {ctx.attr('num_buckets')} must be at "
                         f"least minimum 1 (node '{ctx.node_name}', op '{ctx.op}').")


def _merge(ctx: InferContext, a: TensorShape, b: TensorShape) -> TensorShape:
    """TF's ``InferenceContext::Merge`` of two shapes of known rank."""
    if a.ndims is None:
        return b
    if a.ndims != b.ndims:
        raise ctx.shape_error(f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}")
    dims = []
    for i, (x, y) in enumerate(zip(a.dims, b.dims)):
        if x is not None and y is not None and x != y:
            raise ctx.shape_error(f"Dimension {i} in both shapes must be equal, but are {x} and "
                                  f"{y}. Shapes are {format_dims(a)} and {format_dims(b)}")
        dims.append(y if x is None else x)
    return TensorShape(dims)


def _string_join(ctx: InferContext) -> list[TensorSpec]:
    # Scalars broadcast; other inputs of known rank must merge. An input of unknown rank may
    # be a scalar, so it constrains nothing.
    shapes = [spec.shape for spec in ctx.inputs]
    if all(s.ndims == 0 for s in shapes):
        return [TensorSpec(dtypes.string, TensorShape([]))]
    out = TensorShape(None)
    for shape in shapes:
        if shape.ndims:
            out = _merge(ctx, out, shape)
    return [TensorSpec(dtypes.string, out)]


def _length(ctx: InferContext) -> list[TensorSpec]:
    _check_unit(ctx)
    return [TensorSpec(dtypes.int32, ctx.shape(0))]


def _substr(ctx: InferContext) -> list[TensorSpec]:
    _check_unit(ctx)
    pos, length = ctx.shape(1), ctx.shape(2)
    if pos.ndims is not None and length.ndims is not None and (
            pos.ndims != length.ndims or any(
                a is not None and b is not None and a != b
                for a, b in zip(pos.dims, length.dims))):
        raise ctx.shape_error(f"pos and len shapes must match: {format_dims(pos)} vs. "
                              f"{format_dims(length)}")
    return [TensorSpec(dtypes.string, broadcast_shape(ctx, ctx.shape(0), pos))]


def _scalar_args(*indices: int) -> Any:
    """Output 0 is input 0's shape; the inputs at `indices` must be scalars."""

    def infer(ctx: InferContext) -> list[TensorSpec]:
        for i in indices:
            with_rank(ctx, i, 0)
        return [TensorSpec(dtypes.string, ctx.shape(0))]

    return infer


def _full_match(ctx: InferContext) -> list[TensorSpec]:
    if len(ctx.inputs) > 1:
        with_rank(ctx, 1, 0)
    return [TensorSpec(dtypes.bool_, ctx.shape(0))]


def _to_number(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.attr("out_type"), ctx.shape(0))]


def _to_string(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(dtypes.string, ctx.shape(0))]


def _reduce_join(ctx: InferContext) -> list[TensorSpec]:
    return [reduced_shape(ctx, dtypes.string)]


def _hash_bucket(ctx: InferContext) -> list[TensorSpec]:
    _check_num_buckets(ctx)
    return [TensorSpec(dtypes.int64, ctx.shape(0))]


def _split(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 1)
    with_rank(ctx, 1, 0)
    return [TensorSpec(dtypes.int64, TensorShape([None, 2])),
            TensorSpec(dtypes.string, TensorShape([None])),
            TensorSpec(dtypes.int64, TensorShape([2]))]


def split_template(template: str, placeholder: str) -> list[bytes]:
    """The pieces of `template` between its placeholders, as ``absl::StrSplit`` cuts them (an
    empty placeholder cuts between every byte)."""
    text, cut = _utf8(template), _utf8(placeholder)
    if cut:
        return text.split(cut)
    return [text[i:i + 1] for i in range(len(text))] or [b""]


def _utf8(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8")


def _format(ctx: InferContext) -> list[TensorSpec]:
    placeholders = len(split_template(ctx.attr("template"), ctx.attr("placeholder"))) - 1
    if placeholders != len(ctx.inputs):
        raise ctx.shape_error(f"num placeholders in template and num inputs must match: "
                              f"{placeholders} vs. {len(ctx.inputs)}")
    return [TensorSpec(dtypes.string, TensorShape([]))]


def register(registry: Any) -> None:
    registry.op("StringJoin", ["inputs:*string"], _string_join,
                attrs={"N": REQUIRED, "separator": ""})
    registry.op("StringLength", ["input:string"], _length, attrs={"unit": "BYTE"})
    registry.op("Substr", ["input:string", "pos:T", "len:T"], _substr,
                attrs={"T": REQUIRED, "unit": "BYTE"},
                type_constraints={"T": dtypes.INDEX})
    registry.op("StringUpper", ["input:string"], unchanged, attrs={"encoding": ""})
    registry.op("StringLower", ["input:string"], unchanged, attrs={"encoding": ""})
    registry.op("StringStrip", ["input:string"], unchanged)
    registry.op("RegexReplace", ["input:string", "pattern:string", "rewrite:string"],
                _scalar_args(1, 2), attrs={"replace_global": True})
    registry.op("StaticRegexReplace", ["input:string"], unchanged,
                attrs={"pattern": REQUIRED, "rewrite": REQUIRED, "replace_global": True})
    registry.op("RegexFullMatch", ["input:string", "pattern:string"], _full_match)
    registry.op("StaticRegexFullMatch", ["input:string"], _full_match,
                attrs={"pattern": REQUIRED})
    registry.op("StringToNumber", ["string_tensor:string"], _to_number,
                attrs={"out_type": dtypes.float32}, type_constraints={"out_type": NUMBER_TYPES})
    registry.op("AsString", ["input:T"], _to_string,
                attrs={"T": REQUIRED, "precision": -1, "scientific": False, "shortest": False,
                       "width": -1, "fill": ""},
                type_constraints={"T": AS_STRING_TYPES})
    registry.op("ReduceJoin", ["inputs:string", "reduction_indices:int32"], _reduce_join,
                attrs={"keep_dims": False, "separator": ""})
    registry.op("UnsortedSegmentJoin",
                ["inputs:string", "segment_ids:Tindices", "num_segments:Tnumsegments"], _segment,
                attrs={"separator": "", "Tindices": None, "Tnumsegments": None},
                type_constraints={"Tindices": dtypes.INDEX, "Tnumsegments": dtypes.INDEX})
    registry.op("StringToHashBucket", ["string_tensor:string"], _hash_bucket,
                attrs={"num_buckets": REQUIRED})
    registry.op("StringToHashBucketFast", ["input:string"], _hash_bucket,
                attrs={"num_buckets": REQUIRED})
    registry.op("StringToHashBucketStrong", ["input:string"], _hash_bucket,
                attrs={"num_buckets": REQUIRED, "key": REQUIRED})
    registry.op("EncodeBase64", ["input:string"], unchanged, attrs={"pad": False})
    registry.op("DecodeBase64", ["input:string"], unchanged)
    registry.op("StringSplit", ["input:string", "delimiter:string"], _split,
                attrs={"skip_empty": True})
    registry.op("StringSplitV2", ["input:string", "sep:string"], _split,
                attrs={"maxsplit": -1})
    registry.op("StringFormat", ["inputs:*"], _format,
                attrs={"template": "%s", "placeholder": "%s", "summarize": 3})
