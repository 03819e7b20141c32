"""OpDef of ``DecodeCSV``, as TF's ``parsing_ops.cc``.

Contract: ``DecodeCSV(records, record_defaults)`` takes a string tensor of CSV records (any
shape) and one default per output column (typed ``OUT_TYPE[i]``: float32, float64, int32, int64
or string; a scalar or a vector of length at most 1, empty for a required column) and gives one
tensor per column, typed ``OUT_TYPE[i]`` and shaped as `records`. Attrs: ``field_delim`` (one
character), ``use_quote_delim``, ``na_value`` (a field equal to it is missing) and
``select_cols`` (sorted, unique column indices to keep; empty keeps all). Bad default ranks and
lengths raise `ValueError` here; what the records hold is the kernel's business
(``plugins/kernels/csv.py``).
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.plugins.standard_ops.shape_fns import with_rank_at_most

CSV_TYPES = frozenset({dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string})


def _decode_csv(ctx: InferContext) -> list[TensorSpec]:
    types = list(ctx.attr("OUT_TYPE"))
    given = [s.dtype for s in ctx.inputs[1:]]
    if given != types:
        raise ctx.type_error(f"attr OUT_TYPE is {[t.name for t in types]} but the defaults are "
                             f"{[t.name for t in given]}")
    for t in types:
        if t not in CSV_TYPES:
            raise ctx.type_error(f"DecodeCSV column type {t.name} is not one of float32, "
                                 "float64, int32, int64, string")
    for i in range(1, len(ctx.inputs)):
        shape = with_rank_at_most(ctx, i, 1)
        if shape.ndims == 1 and shape[0] is not None and shape[0] > 1:
            raise ctx.shape_error(f"Shape of a default must be a length-0 or length-1 vector, "
                                  f"or a scalar, but input {i} has {shape[0]} elements")
    return [TensorSpec(t, ctx.shape(0)) for t in types]


def register(registry: Any) -> None:
    registry.op("DecodeCSV", ["records:string", "record_defaults:*"], _decode_csv,
                list_output=True,
                attrs={"OUT_TYPE": REQUIRED, "field_delim": ",", "use_quote_delim": True,
                       "na_value": "", "select_cols": []})
