"""OpDefs for elementwise math, comparisons, reductions and matmul."""

from __future__ import annotations

from typing import Any

from tensorweave import dtypes
from tensorweave.op_def import REQUIRED
from tensorweave.plugins.standard_ops.shape_fns import broadcast

T = {"T": REQUIRED}


def register(registry: Any) -> None:
    for name in ("AddV2", "Sub", "Mul"):
        registry.op(name, ["x:T", "y:T"], broadcast(), attrs=T,
                    type_constraints={"T": dtypes.NUMERIC})
    registry.op("RealDiv", ["x:T", "y:T"], broadcast(), attrs=T,
                type_constraints={"T": dtypes.FLOATS})
