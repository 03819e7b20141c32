"""Kernels of TF1's conditional accumulators (CPU only, as TF's).

Contract: an accumulator lives in its device's resource store under ``accumulator:<shared_name>``
(the node name when the shared name is empty), created by the first run of its
``ConditionalAccumulator`` op; a second op with the same name must ask for the same dtype, shape
and reduction type (`InvalidArgumentError`; TF does not check). The handle it gives is that key
(`resources.make_handle`).

Semantics (TF's ``ConditionalAccumulator``): the accumulator holds a sum of gradients, their
count and a global step, which starts at 0. ``AccumulatorApplyGradient`` adds its gradient only
when its ``local_step`` is not below the global step: a stale gradient is dropped without a word,
and without its shape being checked. A gradient whose shape differs from the accumulator's static
shape, or from the gradients already summed, is an `InvalidArgumentError` ("Shape mismatch: ...").
``AccumulatorTakeGradient(num_required)`` waits until at least `num_required` gradients are
summed, then gives their mean (``reduction_type="MEAN"``; integer means truncate toward zero, as
TF's integer division) or their sum, empties the accumulator and increments its global step;
takes complete in arrival order. The take kernel is async: a take that cannot complete leaves no
thread waiting, and one still waiting when its step aborts (deadline, an error elsewhere, a closed
session) is withdrawn and fails with the step's error, taking nothing (see
`tensorweave.plugins.kernels.data_flow_ops.watch_step_abort`). ``AccumulatorSetGlobalStep`` sets
the global step (a smaller value is logged as a warning and set all the same, as TF);
``AccumulatorNumAccumulated`` gives the count. Ops whose ``dtype`` differs from the accumulator's
fail with `InvalidArgumentError` ("Signature mismatch ...").
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from tensorweave import dtypes, errors
from tensorweave.kernel import KernelContext
from tensorweave.plugins.kernels.data_flow_ops import watch_step_abort
from tensorweave.plugins.kernels.resources import find, make_handle
from tensorweave.tensor_shape import TensorShape, format_dims

Done = Callable[[Any], None]

_log = logging.getLogger(__name__)


@attrs.define(eq=False)
class _Take:
    """One ``AccumulatorTakeGradient`` waiting for enough gradients."""

    ctx: KernelContext
    num_required: int
    done: Done
    result: Any = None
    finished: bool = False
    unwatch: Callable[[], Any] | None = None


class Accumulator:
    """One accumulator's sum, count, global step and waiting takes."""

    def __init__(self, name: str, dtype: dtypes.DType, shape: TensorShape,
                 reduction_type: str) -> None:
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.reduction_type = reduction_type
        self.lock = threading.Lock()
        self.total: Any = None  # the sum of the accepted gradients, None when count is 0
        self.count = 0
        self.global_step = 0
        self.takes: deque[_Take] = deque()

    def matches(self, dtype: dtypes.DType, shape: TensorShape, reduction_type: str
                ) -> str | None:
        """Why an accumulator op with these attrs cannot share this accumulator, or None."""
        if dtype != self.dtype:
            return (f"Shared accumulator '{self.name}' has dtype {self.dtype.name} but dtype "
                    f"{dtype.name} was requested")
        if _dims(shape) != _dims(self.shape):
            return (f"Shared accumulator '{self.name}' has shape {format_dims(self.shape)} but "
                    f"shape {format_dims(shape)} was requested")
        if reduction_type != self.reduction_type:
            return (f"Shared accumulator '{self.name}' has reduction type "
                    f"{self.reduction_type} but {reduction_type} was requested")
        return None

    # -- gradients ------------------------------------------------------------------------------

    def apply(self, ctx: KernelContext, local_step: int, grad: Any) -> None:
        with self.lock:
            if local_step < self.global_step:
                return  # stale: computed from variables older than the current step
            got = TensorShape(grad.shape)
            expected = TensorShape(self.total.shape) if self.count else self.shape
            if not expected.is_compatible_with(got):
                raise _invalid(ctx, f"Shape mismatch: expected {format_dims(expected)}, got "
                               f"{format_dims(got)}")
            if self.count:
                ctx.xp.add(self.total, grad, out=self.total)
            else:
                self.total = ctx.xp.array(grad, dtype=self.dtype.np_type, copy=True)
            self.count += 1
            finished = self._flush_locked()
        self._finish(finished)

    def set_global_step(self, step: int) -> None:
        with self.lock:
            if step < self.global_step:
                _log.warning("Attempt to set the global step of accumulator '%s' to %d, below "
                             "its current global step %d", self.name, step, self.global_step)
            self.global_step = step

    # -- takes ----------------------------------------------------------------------------------

    def submit(self, take: _Take, step: Any) -> None:
        """Queue `take`, complete what can complete, and let a step abort withdraw it."""
        with self.lock:
            self.takes.append(take)
            finished = self._flush_locked()
        self._finish(finished)
        if take.finished:
            return
        unwatch = watch_step_abort(step, take.ctx.device, lambda error: self._abort(take, error))
        with self.lock:
            take.unwatch = unwatch
            finished_now = take.finished
        if finished_now:  # completed while the watch was being set up
            unwatch()

    def _flush_locked(self) -> list[_Take]:
        finished = []
        while self.takes and self.count >= self.takes[0].num_required:
            take = self.takes.popleft()
            take.result = self._take_locked(take.ctx)
            take.finished = True
            finished.append(take)
        return finished

    def _take_locked(self, ctx: KernelContext) -> Any:
        xp, total, count = ctx.xp, self.total, self.count
        self.total, self.count = None, 0
        self.global_step += 1
        if self.reduction_type == "SUM":
            return total
        if self.dtype.is_floating:
            return (total / count).astype(self.dtype.np_type, copy=False)
        # TF divides in the integer type: the quotient truncates toward zero
        return (xp.sign(total) * (xp.abs(total) // count)).astype(self.dtype.np_type,
                                                                     copy=False)

    @staticmethod
    def _finish(finished: list[_Take]) -> None:
        for take in finished:
            if take.unwatch is not None:
                take.unwatch()
            take.done(take.result)

    def _abort(self, take: _Take, error: BaseException) -> None:
        with self.lock:
            if take.finished:
                return
            take.finished = True
            self.takes.remove(take)
            finished = self._flush_locked()  # the withdrawn take may have blocked those behind
        take.done(error)
        self._finish(finished)


def _dims(shape: TensorShape) -> list[int | None] | None:
    return None if shape.dims is None else shape.as_list()


def _invalid(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _scalar(ctx: KernelContext, value: Any, what: str) -> int:
    if value.ndim != 0:
        raise _invalid(ctx, f"Argument {what} must be scalar, but had bad shape "
                       f"{format_dims(TensorShape(value.shape))}")
    return int(value)


# -- kernels ------------------------------------------------------------------------------------

def accumulator_op(ctx: KernelContext) -> Any:
    a = ctx.attrs
    dtype, shape, reduction = a["dtype"], TensorShape(a["shape"]), a["reduction_type"]
    return make_handle(ctx, "accumulator",
                       lambda name: Accumulator(name, dtype, shape, reduction),
                       lambda accumulator: accumulator.matches(dtype, shape, reduction))


def _accumulator(ctx: KernelContext, handle: Any) -> Accumulator:
    return find(ctx, handle, Accumulator)


def _check_dtype(ctx: KernelContext, accumulator: Accumulator) -> None:
    wanted = ctx.attrs["dtype"]
    if wanted != accumulator.dtype:
        raise _invalid(ctx, f"Signature mismatch: the op's dtype is {wanted.name} but the "
                       f"accumulator '{accumulator.name}' holds {accumulator.dtype.name}")


def apply_gradient(ctx: KernelContext, handle: Any, local_step: Any, grad: Any) -> None:
    accumulator = _accumulator(ctx, handle)
    _check_dtype(ctx, accumulator)
    accumulator.apply(ctx, _scalar(ctx, local_step, "local_step"), grad)


def take_gradient(ctx: KernelContext, step: Any, done: Done, handle: Any,
                  num_required: Any) -> None:
    accumulator = _accumulator(ctx, handle)
    _check_dtype(ctx, accumulator)
    required = _scalar(ctx, num_required, "num_required")
    if required <= 0:
        raise _invalid(ctx, f"Argument num_required must be positive, but was {required}")
    accumulator.submit(_Take(ctx, required, done), step)


def num_accumulated(ctx: KernelContext, handle: Any) -> Any:
    accumulator = _accumulator(ctx, handle)
    with accumulator.lock:
        return ctx.xp.asarray(accumulator.count, dtype=np.int32)


def set_global_step(ctx: KernelContext, handle: Any, new_global_step: Any) -> None:
    accumulator = _accumulator(ctx, handle)
    accumulator.set_global_step(_scalar(ctx, new_global_step, "new_global_step"))


def register(registry: Any, device_type: str) -> None:
    if device_type != "CPU":  # TF keeps accumulators in host memory only
        return
    registry.add("ConditionalAccumulator", device_type, accumulator_op)
    registry.add("AccumulatorApplyGradient", device_type, apply_gradient)
    registry.add("AccumulatorTakeGradient", device_type, take_gradient, is_async=True)
    registry.add("AccumulatorNumAccumulated", device_type, num_accumulated)
    registry.add("AccumulatorSetGlobalStep", device_type, set_global_step)
