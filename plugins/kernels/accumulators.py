"""Kernels of TF1's conditional accumulators, dense and sparse (CPU only, as TF's).

Contract: an accumulator lives in its device's resource store under ``accumulator:<shared_name>``
(``sparse_accumulator:<shared_name>`` for a sparse one; the node name when the shared name is
empty), created by the first run of its accumulator op (``ConditionalAccumulator`` or
``SparseConditionalAccumulator``); a second op with the same name must ask for the same dtype,
shape and reduction type (`InvalidArgumentError`; TF does not check). The handle it gives is
that key (`resources.make_handle`). The ops that apply or take gradients find only their own
kind (`NotFoundError`); ``AccumulatorNumAccumulated`` and ``AccumulatorSetGlobalStep`` serve
both, as in TF.

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

A sparse accumulator (TF's ``SparseConditionalAccumulator``) sums rows: each gradient is
(indices, values) of the dense tensor whose row ``indices[i]`` is ``values[i]``, checked as TF's
(indices a vector, one row of values per index, indices below the static shape's first dim,
rows shaped as the static shape and as the rows already summed; with ``has_known_shape`` the
given dense shape matches the static one). Each row keeps its sum and the number of gradients
that touched it, and a ``MEAN`` take divides every row by its own count. The take gives the
touched indices in ascending order (int64), their rows, and the dense shape (int64: the static
first dim, -1 when unknown, then the rows' dims). Rows repeated within one gradient are summed
and touch their row once, where TF assumes indices sorted and unique; indices below 0 are an
`InvalidArgumentError`, which TF does not check.
"""

from __future__ import annotations

import abc
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

import attrs
import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.tensor_shape import TensorShape, format_dims
from tensorweave.plugins.kernels.data_flow_ops import watch_step_abort
from tensorweave.plugins.kernels.resources import find, make_handle

R = TypeVar("R", bound="Accumulator")

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


class Accumulator(abc.ABC):
    """One accumulator's count, global step and waiting takes; a subclass keeps the sum."""

    def __init__(self, name: str, dtype: dtypes.DType, shape: TensorShape,
                 reduction_type: str) -> None:
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.reduction_type = reduction_type
        self.lock = threading.Lock()
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
        """Add `grad` (checked by `_add_locked`) unless `local_step` makes it stale."""
        with self.lock:
            if local_step < self.global_step:
                return  # stale: computed from variables older than the current step
            self._add_locked(ctx, grad)
            self.count += 1
            finished = self._flush_locked()
        self._finish(finished)

    @abc.abstractmethod
    def _add_locked(self, ctx: KernelContext, grad: Any) -> None:
        """Check `grad` against the accumulator (`InvalidArgumentError`) and add it."""

    @abc.abstractmethod
    def _reduce_locked(self, ctx: KernelContext) -> Any:
        """The kernel outputs of a take (the mean or sum); empties the sum."""

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
            take.result = self._reduce_locked(take.ctx)
            self.count = 0
            self.global_step += 1
            take.finished = True
            finished.append(take)
        return finished

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


class DenseAccumulator(Accumulator):
    """Sums whole gradients of one shape."""

    def __init__(self, name: str, dtype: dtypes.DType, shape: TensorShape,
                 reduction_type: str) -> None:
        super().__init__(name, dtype, shape, reduction_type)
        self.total: Any = None  # the sum of the accepted gradients, None when count is 0

    def _add_locked(self, ctx: KernelContext, grad: Any) -> None:
        got = TensorShape(grad.shape)
        expected = TensorShape(self.total.shape) if self.count else self.shape
        if not expected.is_compatible_with(got):
            raise _invalid(ctx, f"Shape mismatch: expected {format_dims(expected)}, got "
                           f"{format_dims(got)}")
        if self.count:
            ctx.xp.add(self.total, grad, out=self.total)
        else:
            self.total = ctx.xp.array(grad, dtype=self.dtype.np_type, copy=True)

    def _reduce_locked(self, ctx: KernelContext) -> Any:
        total, self.total = self.total, None
        if self.reduction_type == "SUM":
            return total
        return _divide(ctx.xp, total, self.count, self.dtype)


class SparseAccumulator(Accumulator):
    """Sums gradients row by row, counting the gradients that touched each row."""

    def __init__(self, name: str, dtype: dtypes.DType, shape: TensorShape,
                 reduction_type: str) -> None:
        super().__init__(name, dtype, shape, reduction_type)
        self.indices: Any = None  # the touched rows, ascending (int64); None when count is 0
        self.values: Any = None  # their sums
        self.counts: Any = None  # how many gradients touched each

    def _add_locked(self, ctx: KernelContext, grad: Any) -> None:
        indices, values, dense_shape = grad
        self._check(ctx, indices, values, dense_shape)
        xp = ctx.xp
        values = values.astype(self.dtype.np_type, copy=False)
        if self.count:
            old_indices, old_values = self.indices, self.values
        else:
            old_indices = xp.zeros([0], dtype=np.int64)
            old_values = xp.zeros([0, *values.shape[1:]], dtype=self.dtype.np_type)
        self.indices, where = xp.unique(xp.concatenate([old_indices, indices]),
                                        return_inverse=True)
        where = where.reshape(-1)
        self.values = xp.zeros([len(self.indices), *values.shape[1:]], dtype=self.dtype.np_type)
        xp.add.at(self.values, where, xp.concatenate([old_values, values]))
        counts = xp.zeros(len(self.indices), dtype=np.int64)
        if self.count:
            xp.add.at(counts, where[:len(old_indices)], self.counts)
        # a row repeated within one gradient was touched by one gradient
        counts[xp.searchsorted(self.indices, xp.unique(indices))] += 1
        self.counts = counts

    def _check(self, ctx: KernelContext, indices: Any, values: Any,
               dense_shape: Any) -> None:
        """TF's checks of a sparse gradient, in TF's order and words."""
        if indices.ndim != 1:
            raise _invalid(ctx, f"Input indices should be vector but received shape: "
                           f"{format_dims(TensorShape(indices.shape))}")
        if values.ndim == 0:
            raise _invalid(ctx, "Values cannot be 0-dimensional.")
        if values.shape[0] != indices.shape[0]:
            raise _invalid(ctx, f"Expected {indices.shape[0]} non-empty input values, got "
                           f"{values.shape[0]}")
        dims = _dims(self.shape) or []
        if dense_shape is not None:
            if len(dims) > dense_shape.size:
                raise _invalid(ctx, f"Shape mismatch: expected shape rank at least {len(dims)}, "
                               f"got {dense_shape.size}")
            for i, dim in enumerate(dims):
                if dim is not None and dim != int(dense_shape[i]):
                    raise _invalid(ctx, f"Shape mismatch: expected shape dim {i} to be {dim}, "
                                   f"got {int(dense_shape[i])}")
        rows = dims[0] if dims else None
        if rows is not None and bool((indices >= rows).any()):
            i = int((indices >= rows).argmax())
            raise _invalid(ctx, f"Shape mismatch: index of slice {i} exceeded limits of shape; "
                           f"index is {int(indices[i])} exceeded {rows}")
        if bool((indices < 0).any()):
            i = int((indices < 0).argmax())
            raise _invalid(ctx, f"Index of slice {i} is negative: {int(indices[i])}")
        if self.count:
            expected: list[int | None] = list(self.values.shape)
            if len(expected) != values.ndim:
                raise _invalid(ctx, f"Shape mismatch: expected values rank {len(expected)}, "
                               f"got {values.ndim}")
        else:
            expected = dims
            if len(expected) > values.ndim:
                raise _invalid(ctx, f"Shape mismatch: expected values rank at least "
                               f"{len(expected)}, got {values.ndim}")
        for i in range(1, len(expected)):
            if expected[i] is not None and expected[i] != values.shape[i]:
                raise _invalid(ctx, f"Shape mismatch: expected values dim {i} to be "
                               f"{expected[i]}, got {values.shape[i]}")

    def _reduce_locked(self, ctx: KernelContext) -> Any:
        xp = ctx.xp
        indices, values, counts = self.indices, self.values, self.counts
        self.indices = self.values = self.counts = None
        if self.reduction_type == "MEAN":
            values = _divide(xp, values, counts.reshape(-1, *[1] * (values.ndim - 1)),
                             self.dtype)
        dims = _dims(self.shape)
        rows = dims[0] if dims and dims[0] is not None else -1
        dense_shape = xp.asarray([rows, *values.shape[1:]], dtype=np.int64)
        return indices.astype(np.int64, copy=False), values, dense_shape


def _divide(xp: Any, total: Any, count: Any, dtype: dtypes.DType) -> Any:
    """`total / count` in `dtype`: TF divides integers in their type, truncating toward zero."""
    if dtype.is_floating:
        return (total / count).astype(dtype.np_type, copy=False)
    return (xp.sign(total) * (xp.abs(total) // count)).astype(dtype.np_type, copy=False)


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

_KINDS: dict[str, tuple[str, type[Accumulator]]] = {
    "ConditionalAccumulator": ("accumulator", DenseAccumulator),
    "SparseConditionalAccumulator": ("sparse_accumulator", SparseAccumulator),
}


def accumulator_op(ctx: KernelContext) -> Any:
    a = ctx.attrs
    dtype, shape, reduction = a["dtype"], TensorShape(a["shape"]), a["reduction_type"]
    kind, cls = _KINDS[ctx.op]
    return make_handle(ctx, kind, lambda name: cls(name, dtype, shape, reduction),
                       lambda accumulator: accumulator.matches(dtype, shape, reduction))


def _accumulator(ctx: KernelContext, handle: Any, cls: type[R] = Accumulator) -> R:
    accumulator = find(ctx, handle, cls)
    if "dtype" in ctx.attrs and ctx.attrs["dtype"] != accumulator.dtype:
        raise _invalid(ctx, f"Signature mismatch: the op's dtype is {ctx.attrs['dtype'].name} "
                       f"but the accumulator '{accumulator.name}' holds "
                       f"{accumulator.dtype.name}")
    return accumulator


def apply_gradient(ctx: KernelContext, handle: Any, local_step: Any, grad: Any) -> None:
    accumulator = _accumulator(ctx, handle, DenseAccumulator)
    accumulator.apply(ctx, _scalar(ctx, local_step, "local_step"), grad)


def sparse_apply_gradient(ctx: KernelContext, handle: Any, local_step: Any, indices: Any,
                          values: Any, dense_shape: Any) -> None:
    accumulator = _accumulator(ctx, handle, SparseAccumulator)
    known = dense_shape if ctx.attrs["has_known_shape"] else None
    accumulator.apply(ctx, _scalar(ctx, local_step, "local_step"), (indices, values, known))


def _take(cls: type[Accumulator]) -> Callable[..., None]:
    def take_gradient(ctx: KernelContext, step: Any, done: Done, handle: Any,
                      num_required: Any) -> None:
        accumulator = _accumulator(ctx, handle, cls)
        required = _scalar(ctx, num_required, "num_required")
        if required <= 0:
            raise _invalid(ctx, f"Argument num_required must be positive, but was {required}")
        accumulator.submit(_Take(ctx, required, done), step)

    return take_gradient


def num_accumulated(ctx: KernelContext, handle: Any) -> Any:
    accumulator = _accumulator(ctx, handle)
    with accumulator.lock:
        return ctx.xp.asarray(accumulator.count, dtype=np.int32)


def set_global_step(ctx: KernelContext, handle: Any, new_global_step: Any) -> None:
    accumulator = _accumulator(ctx, handle)
    accumulator.set_global_step(_scalar(ctx, new_global_step, "new_global_step"))


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    if device_type != "CPU":  # TF keeps accumulators in host memory only
        return
    for op in _KINDS:
        registry.add(op, device_type, accumulator_op)
    registry.add("AccumulatorApplyGradient", device_type, apply_gradient)
    registry.add("SparseAccumulatorApplyGradient", device_type, sparse_apply_gradient)
    registry.add("AccumulatorTakeGradient", device_type, _take(DenseAccumulator),
                 is_async=True)
    registry.add("SparseAccumulatorTakeGradient", device_type, _take(SparseAccumulator),
                 is_async=True)
    registry.add("AccumulatorNumAccumulated", device_type, num_accumulated)
    registry.add("AccumulatorSetGlobalStep", device_type, set_global_step)
