"""Graph-construction-time decisions from statically known values.

Contract: `get_static_value(x)` is TF's ``tensor_util.constant_value``: a non-tensor is returned
as is, a `Tensor` whose value is known while the graph is built gives that value as a numpy
array, anything else (an unknown tensor, a variable) gives ``None``. `smart_constant_value(pred)`
is the value of a condition if it is known: a Python bool or 0/1 int, or a bool tensor with a
static value; another type raises `TypeError`. `smart_cond(pred, true_fn, false_fn)` calls one
branch directly when `pred` is known (no ``If`` op), else builds ``tw.cond``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.engine.graph.constant_op import is_tensor_like
from tensorweave.engine.graph.graph import Tensor, constant_value

__all__ = ["get_static_value", "smart_cond", "smart_constant_value"]


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """The value of `tensor` known at graph-construction time, or ``None``; `partial` is
    accepted for TF's signature (partially known values are not reported)."""
    if not is_tensor_like(tensor):
        return tensor
    if not isinstance(tensor, Tensor):
        return None
    return constant_value(tensor)


def smart_constant_value(pred: Any) -> bool | None:
    """`pred` as a Python bool if it is known now, else ``None``."""
    if isinstance(pred, Tensor):
        value = constant_value(pred)
        return None if value is None else bool(np.asarray(value))
    if pred in (0, 1) and isinstance(pred, (bool, int, np.bool_, np.integer)):
        return bool(pred)
    raise TypeError(f"`pred` must be a Tensor, or a Python bool, or 1 or 0. "
                    f"Found instead: {type(pred)}")


def smart_cond(pred: Any, true_fn: Callable[[], Any] | None = None,
               false_fn: Callable[[], Any] | None = None, name: str | None = None) -> Any:
    """``true_fn()`` or ``false_fn()`` chosen now when `pred` is known, else a ``tw.cond``."""
    if not callable(true_fn):
        raise TypeError(f"`true_fn` must be callable: {true_fn}")
    if not callable(false_fn):
        raise TypeError(f"`false_fn` must be callable: {false_fn}")
    value = smart_constant_value(pred)
    if value is not None:
        return true_fn() if value else false_fn()
    from tensorweave.api.control_flow_ops import cond

    return cond(pred, true_fn=true_fn, false_fn=false_fn, name=name)
