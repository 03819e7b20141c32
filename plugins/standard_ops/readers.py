"""OpDefs of TF1 readers (TF's V2 reader ops), their verbs, and ``DecodeRaw``, which turns the
raw records they read into numbers.

Contract: a reader op (``FixedLengthRecordReaderV2``, ``TextLineReaderV2``,
``WholeFileReaderV2``, ``TFRecordReaderV2``, ``IdentityReaderV2``) gives a string scalar
handle naming the reader in its device's resource store (tensorweave has no resource dtype),
as the queue ops do. The verbs take that handle as input 0, a ref input, so the placer keeps
them with their reader; ``ReaderReadV2`` and ``ReaderReadUpToV2`` also take the handle of the
queue of work items (file names) to read from. ``ReaderReadV2`` gives a scalar key and value,
``ReaderReadUpToV2`` (``num_records`` an int64 scalar) vectors of at most that many; the
counters are int64 scalars. All are stateful.

``DecodeRaw(bytes)`` reinterprets each string as a vector of ``out_type`` (`DECODE_RAW_TYPES`),
little- or big-endian: its shape is the input's plus one unknown dimension.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import no_outputs, with_rank

# op name -> its attrs besides container and shared_name
READER_OPS: dict[str, dict[str, Any]] = {
    "FixedLengthRecordReaderV2": {"header_bytes": 0, "record_bytes": REQUIRED,
                                  "footer_bytes": 0, "hop_bytes": 0, "encoding": ""},
    "TextLineReaderV2": {"skip_header_lines": 0},
    "WholeFileReaderV2": {},
    "TFRecordReaderV2": {"compression_type": ""},
    "IdentityReaderV2": {},
}


DECODE_RAW_TYPES = frozenset({
    dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16, dtypes.int32,
    dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.bool_})


def _decode_raw(ctx: InferContext) -> list[TensorSpec]:
    out_type = ctx.attr("out_type")
    if out_type not in DECODE_RAW_TYPES:
        raise ctx.type_error(f"Value for attr 'out_type' of {out_type.name} is not in the list "
                             f"of allowed values: {sorted(t.name for t in DECODE_RAW_TYPES)}")
    return [TensorSpec(out_type, ctx.shape(0).concatenate([None]))]


def _handle(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(dtypes.string, TensorShape([]))]


def _scalar_handles(ctx: InferContext, count: int) -> None:
    for i in range(count):
        with_rank(ctx, i, 0)


def _read(ctx: InferContext) -> list[TensorSpec]:
    _scalar_handles(ctx, 2)
    return [TensorSpec(dtypes.string, TensorShape([]))] * 2


def _read_up_to(ctx: InferContext) -> list[TensorSpec]:
    _scalar_handles(ctx, 3)
    return [TensorSpec(dtypes.string, TensorShape([None]))] * 2


def _counter(ctx: InferContext) -> list[TensorSpec]:
    _scalar_handles(ctx, 1)
    return [TensorSpec(dtypes.int64, TensorShape([]))]


def _reset(ctx: InferContext) -> list[TensorSpec]:
    _scalar_handles(ctx, 1)
    return no_outputs(ctx)


def register(registry: Any) -> None:
    for name, extra in READER_OPS.items():
        registry.op(name, [], _handle, stateful=True,
                    attrs={**extra, "container": "", "shared_name": ""})
    registry.op("ReaderReadV2", ["reader_handle:string", "queue_handle:string"], _read,
                stateful=True, ref_inputs=(0,))
    registry.op("ReaderReadUpToV2", ["reader_handle:string", "queue_handle:string",
                                     "num_records:int64"], _read_up_to, stateful=True,
                ref_inputs=(0,))
    for name in ("ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2"):
        registry.op(name, ["reader_handle:string"], _counter, stateful=True, ref_inputs=(0,))
    registry.op("ReaderResetV2", ["reader_handle:string"], _reset, stateful=True,
                ref_inputs=(0,))
    registry.op("DecodeRaw", ["bytes:string"], _decode_raw,
                attrs={"out_type": REQUIRED, "little_endian": True})
