"""TF's strided-slice canonicalization (``ValidateStridedSliceOp``), shared by the StridedSlice
shape function and its kernels.

Contract: `strided_slice_spec` takes an input shape (dims may be ``None``), the sparse
``begin``/``end``/``strides`` of a slice (``begin``/``end`` may be ``None`` when unknown) and
TF's five masks. It expands the ellipsis (an implicit one is appended when absent), applies the
masks and clamps indices exactly as TF does, and returns a `StridedSliceSpec`: the dense
per-dimension shape before new axes and shrinks (`processing_shape`), the result shape
(`final_shape`), and, when the values and dims are known, the canonical start/stride/size of
every dense dimension. Invalid slices raise `SliceError` (a `ValueError`) with TF's message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

_NEW_AXIS = -1
_SHRINK_AXIS = -2


class SliceError(ValueError):
    """A strided slice that TF rejects."""


@attrs.frozen
class StridedSliceSpec:
    """The dense form of one strided slice."""

    processing_shape: tuple[int | None, ...]
    final_shape: tuple[int | None, ...]
    # Per dense dimension, when known: first index, step, element count, and whether it shrinks.
    starts: tuple[int, ...] | None
    strides: tuple[int, ...]
    shrink: tuple[bool, ...]

    def index(self) -> tuple[Any, ...]:
        """The basic-indexing key selecting this slice of an array (needs known `starts`)."""
        key: list[Any] = []
        for start, stride, size, shrink in zip(self.starts, self.strides,
                                               self.processing_shape, self.shrink):
            if shrink:
                key.append(start)
            elif size == 0:
                key.append(slice(0, 0))
            else:
                stop = start + size * stride
                key.append(slice(start, stop if stop >= 0 else None, stride))
        return tuple(key)


@attrs.define
class _Dense:
    begin: list[int]
    end: list[int]
    strides: list[int]
    begin_mask: int = 0
    end_mask: int = 0
    shrink_mask: int = 0
    gather: list[int] = attrs.field(factory=list)


def _bit(mask: int, i: int) -> bool:
    return bool(mask & (1 << i))


def _build_dense(rank: int, begin: Sequence[int] | None, end: Sequence[int] | None,
                 strides: Sequence[int], begin_mask: int, end_mask: int, ellipsis_mask: int,
                 new_axis_mask: int, shrink_axis_mask: int) -> _Dense:
    sparse_dims = len(strides)
    if ellipsis_mask & (ellipsis_mask - 1):
        raise SliceError("Multiple ellipses in slice spec not allowed")
    ellipsis_seen = False
    new_axes_after_ellipsis = 0
    for i in range(sparse_dims):
        if ellipsis_seen and _bit(new_axis_mask, i):
            new_axes_after_ellipsis += 1
        if _bit(ellipsis_mask, i):
            ellipsis_seen = True
    if not ellipsis_seen:  # an implicit trailing ellipsis covers the remaining dimensions
        ellipsis_mask |= 1 << sparse_dims
        sparse_dims += 1
    dense = _Dense([0] * rank, [0] * rank, [1] * rank)
    full = 0
    for i in range(sparse_dims):
        if _bit(ellipsis_mask, i):
            stop = min(rank - (sparse_dims - i) + 1 + new_axes_after_ellipsis, rank)
            while full < stop:
                dense.begin_mask |= 1 << full
                dense.end_mask |= 1 << full
                dense.gather.append(full)
                full += 1
        elif _bit(new_axis_mask, i):
            dense.gather.append(_NEW_AXIS)
        else:
            if full == rank:
                raise SliceError(
                    f"Index out of range using input dim {full}; input has only {rank} dims")
            if begin is not None and end is not None:
                dense.begin[full] = int(begin[i])
                dense.end[full] = int(end[i])
            dense.strides[full] = int(strides[i])
            if _bit(begin_mask, i):
                dense.begin_mask |= 1 << full
            if _bit(end_mask, i):
                dense.end_mask |= 1 << full
            if _bit(shrink_axis_mask, i):
                dense.shrink_mask |= 1 << full
                dense.gather.append(_SHRINK_AXIS)
            else:
                dense.gather.append(full)
            full += 1
    return dense


def _canonical(x: int, masked: bool, is_end: bool, stride: int, dim: int) -> int:
    lo, hi = (0, dim) if stride > 0 else (-1, dim - 1)
    if masked:
        # begin masked -> the first element in stride order; end masked -> one past the last
        return (hi if is_end else lo) if stride > 0 else (lo if is_end else hi)
    x = dim + x if x < 0 else x
    return max(lo, min(hi, x))


def strided_slice_spec(shape: Sequence[int | None], begin: Sequence[int] | None,
                       end: Sequence[int] | None, strides: Sequence[int], begin_mask: int = 0,
                       end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                       shrink_axis_mask: int = 0) -> StridedSliceSpec:
    """Canonicalize one strided slice of a tensor of (possibly partial) `shape`."""
    if begin is not None and end is not None and not len(begin) == len(end) == len(strides):
        raise SliceError(
            "Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
            f"[{len(begin)}], [{len(end)}], and [{len(strides)}] instead.")
    dense = _build_dense(len(shape), begin, end, strides, begin_mask, end_mask, ellipsis_mask,
                         new_axis_mask, shrink_axis_mask)
    known = begin is not None and end is not None
    complete = known  # every dense start is computable (values and dims known)
    processing: list[int | None] = []
    starts: list[int] = []
    steps: list[int] = []
    shrinks: list[bool] = []
    for i, dim in enumerate(shape):
        stride = dense.strides[i]
        if stride == 0:
            raise SliceError(f"strides[{i}] must be non-zero")
        shrink = _bit(dense.shrink_mask, i)
        shrinks.append(shrink)
        if dim is None:
            processing.append(1 if shrink else None)
            complete = False
            steps.append(stride)
            continue
        b_masked, e_masked = _bit(dense.begin_mask, i), _bit(dense.end_mask, i)
        size: int | None = None
        if known:
            if shrink:
                b = dense.begin[i]
                start = dim + b if b < 0 else b
                if not 0 <= start < dim:
                    raise SliceError(f"slice index {b} of dimension {i} out of bounds.")
                stride, size = 1, 1  # a shrunk dimension takes one element whatever the step
            else:
                start = _canonical(dense.begin[i], b_masked, False, stride, dim)
                stop = _canonical(dense.end[i], e_masked, True, stride, dim)
                size = _count(stop - start, stride)
            starts.append(start)
        elif shrink:
            size = 1
        elif b_masked and e_masked:
            size = dim
        steps.append(stride)
        processing.append(size)
    final: list[int | None] = []
    for g in dense.gather:
        if g >= 0:
            final.append(processing[g])
        elif g == _NEW_AXIS:
            final.append(1)
    return StridedSliceSpec(tuple(processing), tuple(final), tuple(starts) if complete else None,
                            tuple(steps), tuple(shrinks))


def _count(interval: int, stride: int) -> int:
    if interval == 0 or (interval < 0) != (stride < 0):
        return 0
    return (abs(interval) + abs(stride) - 1) // abs(stride)
