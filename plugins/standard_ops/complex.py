"""OpDefs of the complex-number ops: ``Complex``, ``Real``, ``Imag``, ``Angle``, ``ComplexAbs``,
``Conj`` and ``ConjugateTranspose``.

Contract: signatures follow TF's ``math_ops.cc``/``array_ops.cc``. ``Complex`` broadcasts its
two real operands (float32 or float64) to a complex result whose part type must be theirs
(``Tout`` complex64 for float32, complex128 for float64: else `TypeError`). The part ops take a
complex input and return ``Tout``, its part type; ``Conj`` keeps the complex dtype.
``ConjugateTranspose`` has `Transpose`'s shape function.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.plugins.standard_ops.array import _transpose
from tensorweave.plugins.standard_ops.shape_fns import broadcast_shape, unchanged

PARTS = frozenset({dtypes.float32, dtypes.float64})
PART_OPS = ("Real", "Imag", "Angle", "ComplexAbs")


def _complex(ctx: InferContext) -> list[TensorSpec]:
    out = ctx.attr("Tout")
    if out.real_dtype != ctx.dtype(0):
        raise TypeError(f"Complex of {ctx.dtype(0).name} parts cannot be {out.name}")
    return [TensorSpec(out, broadcast_shape(ctx, ctx.shape(0), ctx.shape(1)))]


def _part(ctx: InferContext) -> list[TensorSpec]:
    out = ctx.attr("Tout")
    if out != ctx.dtype(0).real_dtype:
        raise TypeError(f"The parts of {ctx.dtype(0).name} are {ctx.dtype(0).real_dtype.name}, "
                        f"not {out.name}")
    return [TensorSpec(out, ctx.shape(0))]


def register(registry: Any) -> None:
    registry.op("Complex", ["real:T", "imag:T"], _complex,
                attrs={"T": REQUIRED, "Tout": dtypes.complex64},
                type_constraints={"T": PARTS, "Tout": dtypes.COMPLEX})
    for name in PART_OPS:
        registry.op(name, ["x:T" if name == "ComplexAbs" else "input:T"], _part,
                    attrs={"T": REQUIRED, "Tout": dtypes.float32},
                    type_constraints={"T": dtypes.COMPLEX, "Tout": PARTS})
    registry.op("Conj", ["input:T"], unchanged, attrs={"T": REQUIRED},
                type_constraints={"T": dtypes.COMPLEX})
    registry.op("ConjugateTranspose", ["x:T", "perm:Tperm"], _transpose,
                attrs={"T": REQUIRED, "Tperm": None},
                type_constraints={"Tperm": dtypes.INDEX})
