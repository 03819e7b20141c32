"""Kernels of the TensorList ops (``EmptyTensorList``, ``TensorListPushBack``,
``TensorListPopBack``; see `tensorweave.plugins.standard_ops.list_ops`).

Contract: a list's value is a `TensorList`, a persistent singly linked list: pushing makes a
new cell on top of the old list and popping returns the cell below, so both are O(1), copy no
element and leave the input list valid (two consumers of one list each see it whole). The
elements are the tensors pushed, kept by reference on the device that pushed them. A list fed
back to a later step (a partial run keeps values as numpy arrays) arrives as a 0-d object
array and is unwrapped. Errors are TF's: popping an empty list, pushing an element of another
dtype or of a shape the list does not allow, popping one that `element_shape` does not allow
(`InvalidArgumentError` naming the node).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import KernelContext


@attrs.frozen(eq=False)
class TensorList:
    """A list of tensors: `last` on top of `rest` (both None for the empty list)."""

    element_dtype: dtypes.DType
    element_shape: tuple[int, ...] | None  # None: any rank; -1: any size in that dim
    length: int = 0
    last: Any = None
    rest: TensorList | None = None


def _shape_of(ctx: KernelContext, value: Any) -> tuple[int, ...] | None:
    value = np.asarray(ctx.device.to_host(value))  # a small int input, read on the host
    return None if value.ndim == 0 else tuple(int(d) for d in value.tolist())


def _dims(value: Any) -> tuple[int, ...]:
    """A tensor's shape; a list (a `variant` scalar, an element of a list of lists) has ``()``."""
    return () if isinstance(value, TensorList) else tuple(value.shape)


def _allows(shape: tuple[int, ...] | None, actual: tuple[int, ...]) -> bool:
    return shape is None or (len(shape) == len(actual)
                             and all(d < 0 or d == a for d, a in zip(shape, actual)))


def _list(ctx: KernelContext, value: Any) -> TensorList:
    if isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 0:
        value = value.item()
    if not isinstance(value, TensorList):
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                          f"Input handle is not a list: {type(value).__name__}")
    return value


def empty_tensor_list(ctx: KernelContext, element_shape: Any, max_num_elements: Any) -> Any:
    return TensorList(ctx.attrs["element_dtype"], _shape_of(ctx, element_shape))


def push_back(ctx: KernelContext, handle: Any, tensor: Any) -> Any:
    items = _list(ctx, handle)
    if items.element_dtype != ctx.attrs["element_dtype"]:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"Invalid data types; list elements "
            f"{items.element_dtype.name} but tried to append {ctx.attrs['element_dtype'].name}")
    if not _allows(items.element_shape, _dims(tensor)):
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"Tried to append a tensor with incompatible shape to a "
            f"list. Op element shape: {list(items.element_shape or [])} list shape: "
            f"{list(_dims(tensor))}")
    return TensorList(items.element_dtype, items.element_shape, items.length + 1, tensor, items)


def pop_back(ctx: KernelContext, handle: Any, element_shape: Any) -> Any:
    items = _list(ctx, handle)
    if items.rest is None:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                          "Trying to pop from an empty list.")
    if not _allows(_shape_of(ctx, element_shape), _dims(items.last)):
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"Incompatible shapes: element shape "
            f"{list(_shape_of(ctx, element_shape) or [])} but the element is "
            f"{list(_dims(items.last))}")
    return items.rest, items.last


def register(registry: Any, device_type: str) -> None:
    registry.add("EmptyTensorList", device_type, empty_tensor_list)
    registry.add("TensorListPushBack", device_type, push_back)
    registry.add("TensorListPopBack", device_type, pop_back)
