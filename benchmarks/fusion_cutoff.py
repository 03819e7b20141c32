"""Where the fusion plugin's compiled region loses to numpy: by size, operand layout and share of
divides and square roots (the rule in ``plugins/fusion/kernel.py``).

Run ``python benchmarks/fusion_cutoff.py [--sizes 1000 4000 16000 100000] [--rounds 3]``. Each
region is a chain on float32 over an input ``x`` and a second operand ``w``, either a
contiguous array of ``x``'s shape (``full``) or a one-element array (``scalar``, as a constant
such as ``2.0`` is). For each size it prints the compiled ufunc's time (`backend.ufunc` of
`program.scalar_source`, as the ``_FusedElementwise`` kernel calls it) over numpy's op-by-op
time (one ufunc per step, as the unfused kernels), wall and process CPU time, medians over
alternated rounds; > 1 means the compiled region is slower. The executor's per-node dispatch,
which fusing also saves, is not in either figure. Needs numba; nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.plugins.fusion import backend
from tensorweave.plugins.fusion.program import DIVIDING, Program, Step, scalar_source

NUMPY = {"Mul": np.multiply, "AddV2": np.add, "Sub": np.subtract, "RealDiv": np.divide,
         "Sqrt": np.sqrt}
# name -> steps, each applied to the previous step's value (and `w` for a binary op)
CHAINS = {
    "4 arithmetic": ("Mul", "AddV2", "Mul", "AddV2"),
    "1 div of 2": ("Mul", "RealDiv"),
    "1 div of 4": ("Mul", "AddV2", "RealDiv", "AddV2"),
    "2 div of 4": ("RealDiv", "AddV2", "RealDiv", "AddV2"),
    "1 div of 8": ("Mul", "AddV2", "Mul", "AddV2", "RealDiv", "AddV2", "Mul", "Sub"),
    "4 div/sqrt of 8": ("Mul", "Sqrt", "RealDiv", "AddV2", "Sqrt", "AddV2", "RealDiv", "Sub"),
}


def _program(ops: tuple[str, ...]) -> Program:
    steps = []
    for j, op in enumerate(ops):
        previous = 0 if j == 0 else 2 + j - 1
        operands = (previous,) if op == "Sqrt" else (previous, 1)
        steps.append(Step(f"s{j}", op, dtypes.float32, operands))
    return Program(2, tuple(steps))


def _op_by_op(ops: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    def run(x: Any, w: Any) -> Any:
        t = x
        for op in ops:
            t = NUMPY[op](t) if op == "Sqrt" else NUMPY[op](t, w)
        return t

    return run


def _times(fn: Callable[..., Any], args: tuple[Any, ...], size: int) -> tuple[float, float]:
    """The best of five (wall, process CPU) seconds per call."""
    calls = max(3, min(3000, int(3e6 / size)))
    best = (float("inf"), float("inf"))
    for _ in range(5):
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            fn(*args)
        got = ((time.perf_counter() - wall) / calls, (time.process_time() - cpu) / calls)
        best = min(best, got)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 16000, 100_000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print("compiled / op by op, wall (cpu), medians; > 1: the compiled region is slower")
    for layout in ("full", "scalar"):
        for name, ops in CHAINS.items():
            program = _program(ops)
            ufunc = backend.ufunc(scalar_source(program), [dtypes.float32] * 2, dtypes.float32)
            numpy_fn = _op_by_op(ops)
            share = sum(op in DIVIDING for op in ops) / len(ops)
            cells = []
            for size in args.sizes:
                rs = np.random.RandomState(0)
                x = rs.rand(size).astype(np.float32) + 0.5
                w = rs.rand(size if layout == "full" else 1).astype(np.float32) + 0.5
                np.testing.assert_allclose(ufunc(x, w), numpy_fn(x, w), rtol=1e-6)
                wall, cpu = [], []
                for _ in range(args.rounds):
                    base, fused = _times(numpy_fn, (x, w), size), _times(ufunc, (x, w), size)
                    wall.append(fused[0] / base[0])
                    cpu.append(fused[1] / base[1] if base[1] else float("nan"))
                cells.append(f"{size:>7}: {statistics.median(wall):4.2f} "
                             f"({statistics.median(cpu):4.2f})")
            print(f"{layout:6} {name:16} share {share:.2f}  " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
