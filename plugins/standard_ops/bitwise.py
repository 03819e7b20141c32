"""OpDefs of TF's bitwise ops: ``BitwiseAnd``, ``BitwiseOr``, ``BitwiseXor``, ``LeftShift``,
``RightShift`` (binary, numpy broadcasting), ``Invert`` (same shape) and ``PopulationCount``
(same shape, uint8: the number of set bits of each element).

Contract: as in TF's ``bitwise_ops.cc``, each takes the eight integer dtypes (int8..int64,
uint8..uint64) and no others; a float or bool input is a `TypeError` at construction. Kernels
cover fewer types for ``PopulationCount`` (see `tensorweave.plugins.kernels.bitwise`).
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.plugins.standard_ops.shape_fns import broadcast, unchanged

INTEGERS = dtypes.INTEGERS | {dtypes.uint32, dtypes.uint64}
BINARY = ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift")


def _population_count(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(dtypes.uint8, ctx.shape(0))]


def register(registry: Any) -> None:
    types = {"T": INTEGERS}
    for name in BINARY:
        registry.op(name, ["x:T", "y:T"], broadcast(), attrs={"T": REQUIRED},
                    type_constraints=types)
    registry.op("Invert", ["x:T"], unchanged, attrs={"T": REQUIRED}, type_constraints=types)
    registry.op("PopulationCount", ["x:T"], _population_count, attrs={"T": REQUIRED},
                type_constraints=types)
