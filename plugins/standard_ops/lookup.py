"""OpDefs of TF1's lookup tables (``lookup_ops``): the table ops ``HashTableV2``,
``MutableHashTableV2`` and ``MutableHashTableOfTensorsV2``, and the ops that use a table.

Contract: a table op gives a string scalar handle naming the table in its device's resource
store (tensorweave has no resource dtype; the handle is a scalar, as the queues'). Attrs as
TF's: ``key_dtype`` (int32, int64 or string), ``value_dtype`` (bool, int32, int64, float32,
float64 or string), ``container``, ``shared_name``, ``use_node_name_sharing``, and
``value_shape`` (a vector shape) for ``MutableHashTableOfTensorsV2``. Every other op takes the
handle as input 0, declared a ref input, so the placer keeps it on the table's device:
``LookupTableFindV2(table_handle, keys: Tin, default_value: Tout) -> values: Tout`` (the
default at most rank 1; the values' shape is left unknown, as TF's without handle shape data:
the Python tables set it), ``LookupTableInsertV2`` / ``LookupTableImportV2`` /
``InitializeTableV2(table_handle, keys, values)`` (no outputs), ``LookupTableRemoveV2(
table_handle, keys: Tin)``, ``LookupTableSizeV2 -> int64 scalar``, ``LookupTableExportV2 ->
(keys: Tkeys vector, values: Tvalues)`` and ``InitializeTableFromTextFileV2(table_handle,
filename: string scalar)`` with attrs ``key_index``, ``value_index`` (each >= -2: -2 the whole
line, -1 the line number), ``vocab_size`` (-1: all lines; else >= 1) and ``delimiter``. Bad
ranks and attrs are `ValueError` at construction. All are stateful: never merged, folded or
pruned into one.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank, with_rank_at_most

KEY_DTYPES = frozenset({dtypes.int32, dtypes.int64, dtypes.string})
VALUE_DTYPES = frozenset({dtypes.bool_, dtypes.int32, dtypes.int64, dtypes.float32,
                          dtypes.float64, dtypes.string})
TABLE_OPS = ("HashTableV2", "MutableHashTableV2", "MutableHashTableOfTensorsV2")
WHOLE_LINE, LINE_NUMBER = -2, -1


def _handle(ctx: InferContext) -> list[TensorSpec]:
    if ctx.op == "MutableHashTableOfTensorsV2":
        shape = TensorShape(ctx.attr("value_shape"))
        if shape.ndims != 1:
            raise ctx.shape_error(f"value_shape must be a vector, got {shape}")
    return [TensorSpec(dtypes.string, TensorShape([]))]


def _find(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    with_rank_at_most(ctx, 2, 1)
    return [TensorSpec(ctx.attr("Tout"), TensorShape(None))]


def _no_outputs(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    return []


def _size(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    return [TensorSpec(dtypes.int64, TensorShape([]))]


def _export(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    return [TensorSpec(ctx.attr("Tkeys"), TensorShape([None])),
            TensorSpec(ctx.attr("Tvalues"), TensorShape(None))]


def _from_text_file(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    with_rank(ctx, 1, 0)
    for attr in ("key_index", "value_index"):
        if ctx.attr(attr) < WHOLE_LINE:
            raise ctx.shape_error(f"attr '{attr}' must be at least {WHOLE_LINE}, got "
                                  f"{ctx.attr(attr)}")
    if ctx.attr("vocab_size") < LINE_NUMBER or ctx.attr("vocab_size") == 0:
        raise ctx.shape_error(f"attr 'vocab_size' must be -1 or positive, got "
                              f"{ctx.attr('vocab_size')}")
    return []


def register(registry: Any) -> None:
    table = {"container": "", "shared_name": "", "use_node_name_sharing": False,
             "key_dtype": REQUIRED, "value_dtype": REQUIRED}
    table_types = {"key_dtype": KEY_DTYPES, "value_dtype": VALUE_DTYPES}
    for name in TABLE_OPS:
        attrs = {**table, "value_shape": []} if name == "MutableHashTableOfTensorsV2" else table
        registry.op(name, [], _handle, stateful=True, attrs=attrs, type_constraints=table_types)
    pair_types = {"Tin": KEY_DTYPES, "Tout": VALUE_DTYPES}
    pair = {"Tin": REQUIRED, "Tout": REQUIRED}
    registry.op("LookupTableFindV2", ["table_handle:string", "keys:Tin", "default_value:Tout"],
                _find, stateful=True, ref_inputs=(0,), attrs=pair, type_constraints=pair_types)
    for name in ("LookupTableInsertV2", "LookupTableImportV2"):
        registry.op(name, ["table_handle:string", "keys:Tin", "values:Tout"], _no_outputs,
                    stateful=True, ref_inputs=(0,), attrs=pair, type_constraints=pair_types)
    registry.op("InitializeTableV2", ["table_handle:string", "keys:Tkey", "values:Tval"],
                _no_outputs, stateful=True, ref_inputs=(0,),
                attrs={"Tkey": REQUIRED, "Tval": REQUIRED},
                type_constraints={"Tkey": KEY_DTYPES, "Tval": VALUE_DTYPES})
    registry.op("LookupTableRemoveV2", ["table_handle:string", "keys:Tin"], _no_outputs,
                stateful=True, ref_inputs=(0,), attrs={"Tin": REQUIRED},
                type_constraints={"Tin": KEY_DTYPES})
    registry.op("LookupTableSizeV2", ["table_handle:string"], _size, stateful=True,
                ref_inputs=(0,))
    registry.op("LookupTableExportV2", ["table_handle:string"], _export, stateful=True,
                ref_inputs=(0,), attrs={"Tkeys": REQUIRED, "Tvalues": REQUIRED},
                type_constraints={"Tkeys": KEY_DTYPES, "Tvalues": VALUE_DTYPES})
    registry.op("InitializeTableFromTextFileV2", ["table_handle:string", "filename:string"],
                _from_text_file, stateful=True, ref_inputs=(0,),
                attrs={"key_index": REQUIRED, "value_index": REQUIRED, "vocab_size": -1,
                       "delimiter": "\t"})
