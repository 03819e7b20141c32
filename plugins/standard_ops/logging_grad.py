"""Gradients of ``Print`` (its input's gradient passes through; `data` gets None, as TF's
``_PrintGrad``); ``Assert`` has no outputs, so nothing flows through it."""

from __future__ import annotations

from typing import Any

from tensorweave.engine.graph.graph import Operation, Tensor


def _print_grad(op: Operation, grad: Tensor) -> list[Tensor | None]:
    return [grad] + [None] * (len(op.inputs) - 1)


def register_gradients(registry: Any) -> None:
    registry.add("Print", _print_grad)
    registry.add("Assert", None)
