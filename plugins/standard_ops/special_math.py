"""OpDefs of TF's special-function ops: ``Lgamma``, ``Digamma``, ``BesselI0e``, ``BesselI1e``
(unary), ``Polygamma``, ``Zeta``, ``Igamma``, ``Igammac``, ``IgammaGradA`` (binary, broadcasting)
and ``Betainc`` (ternary).

Contract: names, inputs and allowed dtypes follow TF 1.15's op registry (the gamma functions and
the Bessel functions take half, float and double; the others float and double). ``Betainc``
does not broadcast: its non-scalar operands must have compatible shapes, else `ValueError` at
construction; the output takes the shape they share (a scalar when all are scalars).
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import broadcast, unchanged

HALF_FLOAT_DOUBLE = dtypes.FLOATS
FLOAT_DOUBLE = frozenset({dtypes.float32, dtypes.float64})

UNARY = ("Lgamma", "Digamma", "BesselI0e", "BesselI1e")
BINARY = {"Polygamma": ("a", "x"), "Zeta": ("x", "q"), "Igamma": ("a", "x"),
          "Igammac": ("a", "x"), "IgammaGradA": ("a", "x")}


def _dims(shape: TensorShape) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in shape.dims) + "]"


def _betainc(ctx: InferContext) -> list[TensorSpec]:
    """TF's: scalars broadcast; all other operands are merged into one shape."""
    output = TensorShape(None)
    for i in range(3):
        shape = ctx.shape(i)
        if shape.ndims == 0:
            continue
        if output.ndims is not None and shape.ndims is not None:
            if output.ndims != shape.ndims:
                raise ctx.shape_error(f"Shapes must be equal rank, but are {output.ndims} "
                                      f"and {shape.ndims}")
            for axis, (d1, d2) in enumerate(zip(output.dims, shape.dims)):
                if d1 is not None and d2 is not None and d1 != d2:
                    raise ctx.shape_error(
                        f"Dimension {axis} in both shapes must be equal, but are {d1} and {d2}. "
                        f"Shapes are {_dims(output)} and {_dims(shape)}.")
        output = output.merge_with(shape)
    if all(ctx.shape(i).ndims == 0 for i in range(3)):
        output = TensorShape([])
    return [TensorSpec(ctx.dtype(0), output)]


def register(registry: Any) -> None:
    for name in UNARY:
        registry.op(name, ["x:T"], unchanged, attrs={"T": REQUIRED},
                    type_constraints={"T": HALF_FLOAT_DOUBLE})
    for name, (first, second) in BINARY.items():
        registry.op(name, [f"{first}:T", f"{second}:T"], broadcast(), attrs={"T": REQUIRED},
                    type_constraints={"T": FLOAT_DOUBLE})
    registry.op("Betainc", ["a:T", "b:T", "x:T"], _betainc, attrs={"T": REQUIRED},
                type_constraints={"T": FLOAT_DOUBLE})
