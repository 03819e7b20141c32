"""A fused region as a program: the elementwise ops it computes, in order, and their source.

Contract: a `Program` is the region's steps in topological order; step j reads operands that
are either the fused node's inputs (``0 .. num_inputs-1``) or earlier steps (``num_inputs +
j'``). `encode`/`decode` turn it into the list of strings kept in the fused node's ``program``
attr (``name;op;dtype;operands``), so the node carries the names and ops of the user's nodes it
stands for. `scalar_source` is the body of one scalar function over ``a0 .. an`` whose value is
what the steps compute for one element: each step's result is converted to its own dtype (an
int32 product wraps at 32 bits, a float32 sum rounds to float32), so the fused result equals
the op-by-op one within float tolerance.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from tensorweave.engine import dtypes
from tensorweave.engine.dtypes import DType

FLOATS = frozenset({dtypes.float32, dtypes.float64})
INTS = frozenset({dtypes.int32, dtypes.int64})
SUPPORTED = FLOATS | INTS

# op -> (number of operands, source template over {a}, {b}, {c} (the result's dtype), dtypes).
# Maximum, Minimum and Relu return NaN for a NaN operand, as numpy's (and Eigen's) do.
OPS: dict[str, tuple[int, str, frozenset[DType]]] = {
    "Add": (2, "{a} + {b}", SUPPORTED),
    "AddV2": (2, "{a} + {b}", SUPPORTED),
    "Sub": (2, "{a} - {b}", SUPPORTED),
    "Mul": (2, "{a} * {b}", SUPPORTED),
    "RealDiv": (2, "{a} / {b}", FLOATS),
    "Neg": (1, "-{a}", SUPPORTED),
    "Square": (1, "{a} * {a}", SUPPORTED),
    "Sqrt": (1, "np.sqrt({a})", FLOATS),
    "Rsqrt": (1, "{c}(1) / np.sqrt({a})", FLOATS),
    "Exp": (1, "np.exp({a})", FLOATS),
    "Log": (1, "np.log({a})", FLOATS),
    "Tanh": (1, "np.tanh({a})", FLOATS),
    # the kernel's overflow-free form: exp(-|x|) never overflows
    "Sigmoid": (1, "{c}(1) / ({c}(1) + np.exp(-abs({a}))) if {a} >= 0 "
                   "else np.exp(-abs({a})) / ({c}(1) + np.exp(-abs({a})))", FLOATS),
    "Relu": (1, "{a} if ({a} > 0 or {a} != {a}) else {c}(0)", SUPPORTED),
    "Maximum": (2, "{a} if ({a} > {b} or {a} != {a}) else {b}", SUPPORTED),
    "Minimum": (2, "{a} if ({a} < {b} or {a} != {a}) else {b}", SUPPORTED),
    "Abs": (1, "abs({a})", SUPPORTED),
    "Cast": (1, "{a}", SUPPORTED),
    # the gradient kernels' formulas (plugins/kernels/grad.py), in their order
    "SigmoidGrad": (2, "{b} * {a} * ({c}(1) - {a})", FLOATS),
    "TanhGrad": (2, "{b} * ({c}(1) - {a} * {a})", FLOATS),
    "ReluGrad": (2, "{a} if {b} > 0 else {c}(0)", FLOATS),
}
# Ops whose kernels require operands of one shape, where the others broadcast.
SAME_SHAPE = frozenset({"SigmoidGrad", "TanhGrad", "ReluGrad"})
# Ops whose scalar loop is several times slower than numpy's vectorized one (see
# benchmarks/fusion_backends.py): fused only where the saved dispatch outweighs that.
TRANSCENDENTAL = frozenset({"Exp", "Log", "Tanh", "Sigmoid"})
# Ops numpy computes several elements at a time and numba's strided ufunc loop one by one (see
# `kernel` and benchmarks/fusion_cutoff.py).
DIVIDING = frozenset({"RealDiv", "Sqrt", "Rsqrt"})


@attrs.frozen
class Step:
    """One user node of a region: its name, op, result dtype and operand indices."""

    name: str
    op: str
    dtype: DType
    operands: tuple[int, ...]


@attrs.frozen
class Program:
    """The steps of one fused region over `num_inputs` inputs; the last step is its result."""

    num_inputs: int
    steps: tuple[Step, ...]


def encode(program: Program) -> list[str]:
    return [f"{s.name};{s.op};{s.dtype.name};{','.join(map(str, s.operands))}"
            for s in program.steps]


def decode(lines: Sequence[str], num_inputs: int) -> Program:
    steps = []
    for line in lines:
        name, op, dtype, operands = line.split(";")
        steps.append(Step(name, op, dtypes.as_dtype(dtype),
                          tuple(int(i) for i in operands.split(","))))
    return Program(num_inputs, tuple(steps))


def scalar_source(program: Program) -> str:
    """The source of ``def fused(a0, ...)``, the region's value for one element; it refers to
    ``np`` and to the dtypes' numpy types by their names (``float32``)."""
    n = program.num_inputs
    names = [f"a{i}" for i in range(n)] + [f"t{j}" for j in range(len(program.steps))]
    lines = [f"def fused({', '.join(names[:n])}):"]
    for j, step in enumerate(program.steps):
        template = OPS[step.op][1]
        a = names[step.operands[0]]
        b = names[step.operands[1]] if len(step.operands) > 1 else ""
        c = step.dtype.name
        lines.append(f"    t{j} = {c}({template.format(a=a, b=b, c=c)})")
    lines.append(f"    return t{len(program.steps) - 1}")
    return "\n".join(lines) + "\n"

