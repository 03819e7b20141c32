"""``tw.TensorArray``: ``tf.compat.v1.TensorArray``'s interface, as a value.

Contract: TF1's TensorArray is a resource with a flow tensor; here (as TF2's TensorList inside
functions) the array *is* its flow: one tensor of shape ``[size, *element_shape]`` holding every
element. `write`, `scatter` and `unstack` return a new `TensorArray` (use the returned one, as in
TF); `while_loop` and `cond` carry a TensorArray as its flow (`flow`, `_with_flow`). Every
operation is built from differentiable ops (``TensorScatterUpdate``, ``SelectV2``, ``GatherV2``,
``ScatterNd``, ``BroadcastTo``, ``ConcatV2``), so gradients flow through writes and reads; a
read's gradient is dense, as TF's TensorArray gradients are (no IndexedSlices warning).

Until the element shape is known (no `element_shape`, nothing written yet) the flow is a scalar
zero of unknown static shape, which the first write broadcasts to the full buffer; `infer_shape`
then records the element shape on every array of the same lineage (TF1 shares it the same way),
so the stack of a loop's result has a static shape. With `dynamic_size` a write past the end
grows the buffer with zero rows. Reading or writing out of range (or reading an array never
written) raises `InvalidArgumentError` at run time. TF1's ``clear_after_read`` and
"written twice" checks are not made: a value has no read/write history.
"""

from __future__ import annotations

import functools
from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api.control_flow_ops import identity, no_op
from tensorweave.api.custom_gradient import RegisterGradient
from tensorweave.api.indexed_slices import to_dense
from tensorweave.api.scopes import name_scope
from tensorweave.api.state_ops import placeholder_with_default
from tensorweave.engine import dtypes, errors
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Operation, Tensor, constant_value
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.tensor_shape import TensorShape, as_shape

__all__ = ["TensorArray"]


class _Meta:
    """What every array of one lineage (one constructor call and the arrays derived from it)
    shares: the dtype, the constructor's size, growth, and the element shape inferred so far."""

    def __init__(self, dtype: dtypes.DType, size: Tensor, dynamic_size: bool,
                 infer_shape: bool, element_shape: TensorShape) -> None:
        self.dtype = dtype
        self.size = size
        self.dynamic_size = dynamic_size
        self.infer_shape = infer_shape
        self.element_shape = element_shape

    def static_size(self) -> int | None:
        value = constant_value(self.size)
        return None if value is None or self.dynamic_size else int(value)

    def buffer_shape(self) -> TensorShape:
        if self.element_shape.dims is None:
            return TensorShape(None)
        return TensorShape([self.static_size()]).concatenate(self.element_shape)

    def merge_element_shape(self, shape: TensorShape) -> None:
        if not self.infer_shape:
            return
        if not self.element_shape.is_compatible_with(shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected "
                             f"{self.element_shape} (and infer_shape=True)")
        self.element_shape = self.element_shape.merge_with(shape)


class TensorArray:
    """A list of same-typed, same-shaped tensors, carried as one value; see the module
    docstring. `handle` (a TF1 resource) has no counterpart here: pass `flow` to wrap an
    existing buffer. `clear_after_read` and `colocate_with_first_write_call` are accepted and
    ignored."""

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: bool | None = None,
                 clear_after_read: bool | None = None, tensor_array_name: str | None = None,
                 handle: Any = None, flow: Any = None, infer_shape: bool = True,
                 element_shape: Any = None, colocate_with_first_write_call: bool = True,
                 name: str | None = None, _meta: _Meta | None = None) -> None:
        if _meta is not None:
            self._meta, self._flow = _meta, flow
            return
        if handle is not None:
            raise ValueError("tensorweave's TensorArray is a value and has no handle: pass "
                             "its flow tensor instead")
        if size is None and flow is None:
            raise ValueError("Size must be provided if handle is not provided")
        dtype = dtypes.as_dtype(dtype)
        element_shape = TensorShape(None) if element_shape is None else as_shape(element_shape)
        with name_scope(name, "TensorArray", [size, flow]) as scope:
            if flow is not None:
                flow = convert_to_tensor(flow, dtype=dtype, name="flow")
                if size is None:
                    size = array_ops.shape(flow)[0]
                if flow.shape.ndims is not None and flow.shape.ndims > 0:
                    element_shape = element_shape.merge_with(flow.shape[1:])
            size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
            if size.shape.ndims not in (None, 0):
                raise ValueError(f"Shape must be rank 0 but is rank {size.shape.ndims} for "
                                 "TensorArray's size")
            self._meta = _Meta(dtype, size, bool(dynamic_size), infer_shape, element_shape)
            if flow is None:
                flow = self._empty_buffer(tensor_array_name or scope.rstrip("/") or "flow")
            self._flow = flow

    def _empty_buffer(self, name: str) -> Tensor:
        meta = self._meta
        shape = meta.buffer_shape()
        if meta.element_shape.is_fully_defined():
            dims = [meta.size, *meta.element_shape.as_list()]
            zeros = array_ops.zeros(array_ops.stack(dims), dtype=meta.dtype)
        else:  # broadcast by the first write (module docstring)
            zeros, shape = array_ops.zeros([], dtype=meta.dtype), TensorShape(None)
        return placeholder_with_default(zeros, shape=shape, name=name)

    # -- composite protocol (control flow carries the flow) -----------------------------------

    @property
    def flow(self) -> Tensor:
        """The tensor holding every element: ``[size, *element_shape]``."""
        return self._flow

    def _with_flow(self, flow: Tensor) -> TensorArray:
        if flow.shape.ndims:
            self._meta.merge_element_shape(flow.shape[1:])
        return TensorArray(self._meta.dtype, flow=flow, _meta=self._meta)

    # -- properties ------------------------------------------------------------------------------

    @property
    def dtype(self) -> dtypes.DType:
        return self._meta.dtype

    @property
    def element_shape(self) -> TensorShape:
        return self._meta.element_shape

    @property
    def dynamic_size(self) -> bool:
        return self._meta.dynamic_size

    # -- size ------------------------------------------------------------------------------------

    def _length(self) -> Tensor:
        """The buffer's leading dimension; 0 for the scalar of an array never written."""
        if self._flow.shape.ndims is not None and self._flow.shape.ndims > 0:
            return array_ops.shape(self._flow)[0]
        return array_ops.concat([array_ops.shape(self._flow), [0]], 0)[0]

    def size(self, name: str | None = None) -> Tensor:
        """The number of elements (an int32 scalar)."""
        with name_scope(name, "TensorArraySize", [self._flow]):
            if not self._meta.dynamic_size:
                return identity(self._meta.size)
            return math_ops.maximum(self._meta.size, self._length())

    # -- writes ----------------------------------------------------------------------------------

    def _value(self, value: Any) -> Tensor:
        value = convert_to_tensor(value, preferred_dtype=self._meta.dtype, name="value")
        if value.dtype != self._meta.dtype:
            raise errors.InvalidArgumentError(
                None, None, f"TensorArray dtype is {self._meta.dtype.name} but Op is trying "
                f"to write dtype {value.dtype.name}")
        return value

    def _buffer(self, rows: Tensor, row_shape: TensorShape, new_size: Tensor) -> Tensor:
        """The buffer as ``[new_size, *row]`` for rows like `rows`: an array never written
        broadcast, a growing one padded with zero rows."""
        self._meta.merge_element_shape(row_shape)
        row = array_ops.shape(rows)[1:]
        length = self._length()
        old = array_ops.broadcast_to(self._flow, array_ops.concat([[length], row], 0))
        real = self._flow.shape.ndims is not None and row_shape.ndims is not None \
            and self._flow.shape.ndims == row_shape.ndims + 1
        if self._meta.dynamic_size or not real:
            pad = array_ops.zeros(array_ops.concat([[new_size - length], row], 0),
                                  dtype=self._meta.dtype)
            old = array_ops.concat([old, pad], 0)
        return old

    def _with_buffer(self, flow: Tensor) -> TensorArray:
        flow.set_shape(self._meta.buffer_shape())
        return TensorArray(self._meta.dtype, flow=flow, _meta=self._meta)

    def _updated(self, positions: Tensor, rows: Tensor, row_shape: TensorShape,
                 new_size: Tensor) -> TensorArray:
        """This array with the rows at `positions` (a bool vector over ``new_size`` entries)
        taken from `rows` (broadcastable to ``[new_size, *row]``)."""
        old = self._buffer(rows, row_shape, new_size)
        if row_shape.ndims is not None:
            mask_shape: Any = [-1] + [1] * row_shape.ndims
        else:
            mask_shape = array_ops.concat([[-1], array_ops.ones_like(array_ops.shape(rows)[1:])],
                                          0)
        mask = array_ops.reshape(positions, mask_shape)
        return self._with_buffer(array_ops.where_v2(mask, rows, old))

    def _new_size(self, largest: Tensor) -> Tensor:
        if not self._meta.dynamic_size:
            return self._meta.size
        return math_ops.maximum(self.size(), largest + 1)

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """A new array with element `index` set to `value`."""
        with name_scope(name, "TensorArrayWrite", [self._flow, index, value]):
            index = convert_to_tensor(index, dtype=dtypes.int32, name="index")
            value = self._value(value)
            row = array_ops.expand_dims(value, 0)
            old = self._buffer(row, value.shape, self._new_size(index))
            # one copy of the buffer with the row replaced; an index out of range is the
            # kernel's InvalidArgumentError
            return self._with_buffer(array_ops.tensor_scatter_update(
                old, array_ops.reshape(index, [1, 1]), row))

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        """A new array with element ``indices[i]`` set to ``value[i]`` for each i."""
        with name_scope(name, "TensorArrayScatter", [self._flow, indices, value]):
            indices = convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
            if indices.shape.ndims not in (None, 1):
                raise ValueError(f"Shape must be rank 1 but is rank {indices.shape.ndims} for "
                                 "TensorArrayScatter's indices")
            value = self._value(value)
            largest = math_ops.reduce_max(array_ops.concat([[-1], indices], 0))
            new_size = self._new_size(largest)
            positions = array_ops.range(new_size)
            indices = array_ops.gather(positions, indices, name="check_indices")
            hit = math_ops.equal(array_ops.expand_dims(positions, 1),
                                 array_ops.expand_dims(indices, 0))
            shape = array_ops.concat([[new_size], array_ops.shape(value)[1:]], 0)
            rows = array_ops.scatter_nd(array_ops.expand_dims(indices, 1), value, shape)
            row_shape = value.shape[1:] if value.shape.ndims is not None else TensorShape(None)
            return self._updated(math_ops.reduce_any(hit, 1), rows, row_shape, new_size)

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """A new array whose element i is ``value[i]``."""
        with name_scope(name, "TensorArrayUnstack", [self._flow, value]):
            value = self._value(value)
            return self.scatter(array_ops.range(array_ops.shape(value)[0]), value)

    # -- reads -----------------------------------------------------------------------------------

    def _shaped_flow(self) -> Tensor:
        """The flow with the static shape the lineage has inferred (a loop's result comes out
        with the loop's unknown shape), so reads and their gradients know its rank."""
        shape = self._meta.buffer_shape()
        if self._flow.shape.ndims is not None or shape.ndims is None:
            return self._flow
        flow = identity(self._flow)
        flow.set_shape(shape)
        return flow

    def read(self, index: Any, name: str | None = None) -> Tensor:
        """Element `index`."""
        with name_scope(name, "TensorArrayRead", [self._flow, index]):
            out = _dense_grad_gather(self._shaped_flow(),
                                     convert_to_tensor(index, dtype=dtypes.int32))
            out.set_shape(self._meta.element_shape)
            return out

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        """The elements at `indices`, stacked."""
        with name_scope(name, "TensorArrayGather", [self._flow, indices]):
            indices = convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
            out = array_ops.gather(self._shaped_flow(), indices)
            out.set_shape(TensorShape([indices.shape[0] if indices.shape.ndims else None])
                          .concatenate(self._meta.element_shape))
            return out

    def stack(self, name: str | None = None) -> Tensor:
        """All elements, stacked: ``[size, *element_shape]``."""
        with name_scope(name, "TensorArrayStack", [self._flow]):
            out = _dense_grad_gather(self._shaped_flow(), array_ops.range(self.size()))
            out.set_shape(TensorShape([self._meta.static_size()])
                          .concatenate(self._meta.element_shape))
            return out

    def concat(self, name: str | None = None) -> Tensor:
        """All elements concatenated along their first dimension."""
        with name_scope(name, "TensorArrayConcat", [self._flow]):
            stacked = self.stack()
            shape = self._meta.element_shape
            if shape.ndims == 0:
                raise ValueError("Concatenating scalars in a TensorArray is unsupported: its "
                                 "elements must be at least vectors")
            rest = array_ops.shape(stacked)[2:]
            return array_ops.reshape(stacked, array_ops.concat([[-1], rest], 0))

    # -- the rest --------------------------------------------------------------------------------

    def identity(self) -> TensorArray:
        """A new array with the same elements (an ``Identity`` of the flow)."""
        return TensorArray(self._meta.dtype, flow=identity(self._flow), _meta=self._meta)

    def close(self, name: str | None = None) -> Operation:
        """A no-op: a value holds no resource to release."""
        return no_op(name=name or "TensorArrayClose")

    def __repr__(self) -> str:
        return (f"<tw.TensorArray dtype={self._meta.dtype.name} "
                f"element_shape={self._meta.element_shape} flow={self._flow.name}>")


def _tensor_array_gather_grad(op: Operation, grad: Any) -> list[Any]:
    """A gather's gradient, densified without TF's warning: TF's TensorArray gradients are
    dense (they write into a gradient TensorArray)."""
    grads = get_registries().gradients.get("GatherV2")(op, grad)
    return [to_dense(grads[0]), *grads[1:]]


@functools.cache
def _gather_gradient_name() -> str:
    """The name `_tensor_array_gather_grad` is registered under; registered on first use, so
    importing tensorweave does not load the plugins."""
    RegisterGradient("TensorArrayGather")(_tensor_array_gather_grad)
    return "TensorArrayGather"


def _dense_grad_gather(flow: Tensor, indices: Tensor) -> Tensor:
    """``gather(flow, indices)`` (which checks the indices: -1 is no "last element") whose
    gradient with respect to `flow` is dense."""
    with flow.graph.gradient_override_map({"GatherV2": _gather_gradient_name()}):
        return array_ops.gather(flow, indices)
