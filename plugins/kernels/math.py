"""Kernels for elementwise math, comparisons, reductions and matmul."""

from __future__ import annotations

from typing import Any

from tensorweave.kernel import KernelContext


def _binary(ufunc: str) -> Any:
    def kernel(ctx: KernelContext, x: Any, y: Any) -> Any:
        return getattr(ctx.xp, ufunc)(x, y)

    kernel.__name__ = ufunc
    return kernel


BINARY = {"AddV2": "add", "Sub": "subtract", "Mul": "multiply", "RealDiv": "true_divide"}


def register(registry: Any, device_type: str) -> None:
    for op, ufunc in BINARY.items():
        registry.add(op, device_type, _binary(ufunc))
