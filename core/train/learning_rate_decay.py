"""Learning-rate schedules of ``tf.compat.v1.train``: tensors of the global step.

Contract: each schedule returns a scalar tensor in the learning rate's dtype (float32 for a Python
float), computed from `global_step` (a variable or tensor, usually
``tw.train.get_or_create_global_step()``) each time it is evaluated, under a name scope named
after the schedule (``ExponentialDecay``, ``PiecewiseConstant``, ...), so it can be handed to an
optimizer as its learning rate. `global_step` None raises `ValueError`. Where TF branches with
``cond``/``case`` (``piecewise_constant``, ``polynomial_decay(cycle=True)``), the branches are
selected with ``SelectV2``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api.control_flow_ops import identity
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "cosine_decay", "exponential_decay", "inverse_time_decay", "natural_exp_decay",
    "piecewise_constant", "polynomial_decay",
]


def _require_step(global_step: Any, schedule: str) -> None:
    if global_step is None:
        raise ValueError(f"global_step is required for {schedule}.")


def _step_fraction(global_step: Any, decay_steps: Any, dtype: dtypes.DType,
                   staircase: bool) -> Tensor:
    """``global_step / decay_steps`` in `dtype`, floored when `staircase`."""
    p = math_ops.truediv(math_ops.cast(global_step, dtype), math_ops.cast(decay_steps, dtype))
    return math_ops.floor(p) if staircase else p


def exponential_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False, name: str | None = None) -> Tensor:
    """``learning_rate * decay_rate ** (global_step / decay_steps)``."""
    _require_step(global_step, "exponential_decay")
    return _exponential(learning_rate, global_step, decay_steps, decay_rate, staircase, name)


def _exponential(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                 staircase: bool, name: str | None) -> Tensor:
    with name_scope(name, "ExponentialDecay", [learning_rate, global_step]) as scope:
        lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
        p = _step_fraction(global_step, decay_steps, lr.dtype, staircase)
        return math_ops.multiply(lr, math_ops.pow(math_ops.cast(decay_rate, lr.dtype), p),
                                 name=scope)


def natural_exp_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False, name: str | None = None) -> Tensor:
    """``learning_rate * exp(-decay_rate * global_step / decay_steps)``, TF's exponential
    decay with rate ``exp(-decay_rate)``."""
    _require_step(global_step, "natural_exp_decay")
    rate = math_ops.exp(math_ops.negative(math_ops.cast(
        decay_rate, convert_to_tensor(learning_rate).dtype)))
    return _exponential(learning_rate, global_step, decay_steps, rate, staircase, name)


def inverse_time_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                       staircase: bool = False, name: str | None = None) -> Tensor:
    """``learning_rate / (1 + decay_rate * global_step / decay_steps)``."""
    _require_step(global_step, "inverse_time_decay")
    with name_scope(name, "InverseTimeDecay", [learning_rate, global_step]) as scope:
        lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
        p = _step_fraction(global_step, decay_steps, lr.dtype, staircase)
        denom = math_ops.add(constant(1, lr.dtype),
                             math_ops.multiply(math_ops.cast(decay_rate, lr.dtype), p))
        return math_ops.truediv(lr, denom, name=scope)


def polynomial_decay(learning_rate: Any, global_step: Any, decay_steps: Any,
                     end_learning_rate: Any = 0.0001, power: Any = 1.0, cycle: bool = False,
                     name: str | None = None) -> Tensor:
    """From `learning_rate` to `end_learning_rate` over `decay_steps` along
    ``(1 - step / decay_steps) ** power``; then constant, or with `cycle` restarted over the next
    multiple of `decay_steps`."""
    _require_step(global_step, "polynomial_decay")
    with name_scope(name, "PolynomialDecay", [learning_rate, global_step]) as scope:
        lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = lr.dtype
        end = math_ops.cast(end_learning_rate, dtype)
        step = math_ops.cast(global_step, dtype)
        steps = math_ops.cast(decay_steps, dtype)
        if cycle:
            multiplier = array_ops.where_v2(math_ops.equal(step, 0.0), constant(1.0, dtype),
                                            math_ops.ceil(math_ops.truediv(step, steps)))
            steps = math_ops.multiply(steps, multiplier)
        else:
            step = math_ops.minimum(step, steps)
        p = math_ops.truediv(step, steps)
        decayed = math_ops.multiply(lr - end, math_ops.pow(1 - p, math_ops.cast(power, dtype)))
        return math_ops.add(decayed, end, name=scope)


def cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any, alpha: float = 0.0,
                 name: str | None = None) -> Tensor:
    """``learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
    decay_steps)) + alpha)``."""
    _require_step(global_step, "cosine_decay")
    with name_scope(name, "CosineDecay", [learning_rate, global_step]) as scope:
        lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = lr.dtype
        steps = math_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(math_ops.cast(global_step, dtype), steps)
        fraction = math_ops.truediv(step, steps)
        cosine = 0.5 * (1.0 + math_ops.cos(constant(math.pi, dtype) * fraction))
        decayed = (1 - alpha) * cosine + alpha
        return math_ops.multiply(lr, decayed, name=scope)


def piecewise_constant(x: Any, boundaries: Sequence[Any], values: Sequence[Any],
                       name: str | None = None) -> Tensor:
    """``values[0]`` for ``x <= boundaries[0]``, ``values[i]`` for
    ``boundaries[i-1] < x <= boundaries[i]``, ``values[-1]`` beyond the last boundary."""
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with name_scope(name, "PiecewiseConstant", [x, *boundaries, *values]) as scope:
        x = convert_to_tensor(x)
        bounds = [convert_to_tensor(b) for b in boundaries]
        for i, b in enumerate(bounds):
            if b.dtype != x.dtype:
                # int32 boundaries (Python ints) promote to an int64 step without loss.
                if b.dtype == dtypes.int32 and x.dtype == dtypes.int64:
                    bounds[i] = math_ops.cast(b, dtypes.int64)
                else:
                    raise ValueError(f"Boundaries ({b.dtype.name}) must have the same dtype as "
                                     f"x ({x.dtype.name}).")
        vals = [convert_to_tensor(v) for v in values]
        for v in vals[1:]:
            if v.dtype != vals[0].dtype:
                raise ValueError(f"Values must have elements all with the same dtype "
                                 f"({vals[0].dtype.name} vs {v.dtype.name}).")
        # Walk down from the last interval: each boundary at or above x selects the value below.
        result = vals[-1]
        for bound, value in reversed(list(zip(bounds, vals[:-1], strict=True))):
            result = array_ops.where_v2(math_ops.less_equal(x, bound), value, result)
        return identity(result, name=scope)
