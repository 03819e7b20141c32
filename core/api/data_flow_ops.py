"""TF1 queues: ``tf.FIFOQueue``, ``tf.PaddingFIFOQueue``, ``tf.RandomShuffleQueue``,
``tf.PriorityQueue`` and their base ``tf.QueueBase`` (also under ``tf.queue``).

Contract: a queue object wraps the string handle its queue op gives (`queue_ref`); every method
builds one op on that handle (TF's V2 queue ops), which the placer keeps on the queue's device
(queues are host-only, as in TF). An element is a tuple of tensors with the queue's `dtypes`
(and `shapes`, when given): ``enqueue`` takes one element (a tensor, a list/tuple, or a dict keyed
by `names`), ``enqueue_many`` the same with an extra leading batch dim; values are converted to
the component dtypes (`TypeError`/`ValueError` as `convert_to_tensor`) and static shapes that
contradict the queue's raise `ValueError` here. ``dequeue`` gives one element, ``dequeue_many(n)``
and ``dequeue_up_to(n)`` a batch, as a single tensor, a list, or a dict when the queue has names,
with the static shapes the queue knows. A priority queue's elements lead with an int64
priority that its `types` leave out: its `dtypes` and `shapes` (and `names`, when given) count
it, and its dequeues give it first, least priority first. At run time a dequeue waits for
elements and an enqueue for room, until the step's deadline (`DeadlineExceededError`); see
`tensorweave.plugins.kernels.data_flow_ops` for close and error semantics.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from tensorweave.api.random_ops import get_seed
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes as _dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Operation, Tensor, constant_value, get_default_graph
from tensorweave.engine.graph.op_builder import make_op
from tensorweave.engine.tensor_shape import TensorShape, as_shape

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue"]


def _as_type_list(dtypes: Any) -> list[_dtypes.DType]:
    values = list(dtypes) if isinstance(dtypes, (list, tuple)) else [dtypes]
    return [_dtypes.as_dtype(t) for t in values]


def _as_shape_list(shapes: Any, unknown_dim_allowed: bool = False) -> list[TensorShape] | None:
    """TF's rules: one shape, or a list of them; fully defined unless partial shapes are
    allowed, and of known rank."""
    if unknown_dim_allowed and (not isinstance(shapes, (list, tuple)) or not shapes or any(
            s is None or isinstance(s, int) for s in shapes)):
        raise ValueError("When providing partial shapes, a list of shapes must be provided.")
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError("shapes must be a TensorShape or a list or tuple of TensorShapes.")
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]  # a single shape
    out = [as_shape(s) for s in shapes]
    if not unknown_dim_allowed and any(not s.is_fully_defined() for s in out):
        raise ValueError(f"All shapes must be fully defined: {out}")
    if any(s.dims is None for s in out):
        raise ValueError(f"All shapes must have a defined rank: {out}")
    return out


def _as_name_list(names: Any, dtypes: list[_dtypes.DType]) -> list[str] | None:
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError("List of names must have the same length as the list of dtypes")
    return list(names)


class QueueBase:
    """A queue of tuples of tensors, reached through its handle `queue_ref`."""

    def __init__(self, dtypes: Any, shapes: Any, names: Any, queue_ref: Tensor) -> None:
        self._dtypes = _as_type_list(dtypes)
        if shapes is not None:
            if len(shapes) != len(self._dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes")
            self._shapes = [TensorShape(s) for s in shapes]
        else:
            self._shapes = [TensorShape(None) for _ in self._dtypes]
        if names is not None:
            if len(names) != len(self._dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
            self._names: list[str] | None = list(names)
        else:
            self._names = None
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @property
    def queue_ref(self) -> Tensor:
        return self._queue_ref

    @property
    def name(self) -> str:
        return self._queue_ref.op.name

    @property
    def dtypes(self) -> list[_dtypes.DType]:
        return self._dtypes

    @property
    def shapes(self) -> list[TensorShape]:
        return self._shapes

    @property
    def names(self) -> list[str] | None:
        return self._names

    # -- enqueue --------------------------------------------------------------------------------

    def _check_enqueue_dtypes(self, vals: Any) -> list[Tensor]:
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names) != sorted(vals):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue.  "
                                 f"Dictionary: ({sorted(vals)}),Queue: ({sorted(self._names)})")
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} components for queue "
                             f"'{self.name}', got {len(vals)}")
        return [convert_to_tensor(v, dtype=t, name=f"component_{i}")
                for i, (v, t) in enumerate(zip(vals, self._dtypes))]

    @staticmethod
    def _scope_vals(vals: Any) -> list[Any]:
        if isinstance(vals, (list, tuple)):
            return list(vals)
        if isinstance(vals, dict):
            return list(vals.values())
        return [vals]

    def enqueue(self, vals: Any, name: str | None = None) -> Operation:
        """An op that adds one element; it waits while the queue is full."""
        with name_scope(name, f"{self._name}_enqueue", self._scope_vals(vals)) as scope:
            tensors = self._check_enqueue_dtypes(vals)
            for tensor, shape in zip(tensors, self._shapes):
                tensor.shape.assert_is_compatible_with(shape)
            return make_op("QueueEnqueueV2", [self._queue_ref, tensors],
                           {"Tcomponents": [t.dtype for t in tensors]}, name=scope)

    def enqueue_many(self, vals: Any, name: str | None = None) -> Operation:
        """An op that adds the slices of `vals` along dim 0 as elements, waiting for room."""
        with name_scope(name, f"{self._name}_EnqueueMany", self._scope_vals(vals)) as scope:
            tensors = self._check_enqueue_dtypes(vals)
            batch = None
            for tensor, shape in zip(tensors, self._shapes):
                if tensor.shape.ndims == 0:
                    raise ValueError(f"Shape {tensor.shape} must have rank at least 1")
                first = tensor.shape[0]
                if batch is not None and first is not None and first != batch:
                    raise ValueError(f"Dimensions {batch} and {first} are not compatible")
                batch = first if first is not None else batch
                tensor.shape[1:].assert_is_compatible_with(shape)
            return make_op("QueueEnqueueManyV2", [self._queue_ref, tensors],
                           {"Tcomponents": [t.dtype for t in tensors]}, name=scope)

    # -- dequeue --------------------------------------------------------------------------------

    def _dequeue_return_value(self, tensors: Sequence[Tensor]) -> Any:
        if self._names:
            return {n: tensors[i] for i, n in enumerate(self._names)}
        if len(tensors) == 1:
            return tensors[0]
        return list(tensors)

    def dequeue(self, name: str | None = None) -> Any:
        """One element; the op waits while the queue is empty."""
        op = make_op("QueueDequeueV2", [self._queue_ref], {"component_types": self._dtypes},
                     name=name or f"{self._name}_Dequeue")
        for output, shape in zip(op.outputs, self._shapes):
            output.set_shape(shape)
        return self._dequeue_return_value(op.outputs)

    def _dequeue_n(self, op_type: str, n: Any, name: str, batch_known: bool) -> Any:
        n = convert_to_tensor(n, dtype=_dtypes.int32, name="n")
        op = make_op(op_type, [self._queue_ref, n], {"component_types": self._dtypes},
                     name=name)
        value = constant_value(n) if batch_known else None
        batch = TensorShape([None if value is None else int(value)])
        for output, shape in zip(op.outputs, self._shapes):
            output.set_shape(batch.concatenate(shape))
        return self._dequeue_return_value(op.outputs)

    def dequeue_many(self, n: Any, name: str | None = None) -> Any:
        """`n` elements stacked along a new dim 0; waits until there are `n`."""
        return self._dequeue_n("QueueDequeueManyV2", n, name or f"{self._name}_DequeueMany",
                               True)

    def dequeue_up_to(self, n: Any, name: str | None = None) -> Any:
        """As `dequeue_many`, but a closed queue gives what is left (at least one)."""
        return self._dequeue_n("QueueDequeueUpToV2", n, name or f"{self._name}_DequeueUpTo",
                               False)

    # -- state ----------------------------------------------------------------------------------

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None) -> Operation:
        """An op that closes the queue; later enqueues fail, dequeues drain what is left."""
        return make_op("QueueCloseV2", [self._queue_ref],
                       {"cancel_pending_enqueues": bool(cancel_pending_enqueues)},
                       name=name or f"{self._name}_Close")

    def is_closed(self, name: str | None = None) -> Tensor:
        return make_op("QueueIsClosedV2", [self._queue_ref],
                       name=name or f"{self._name}_IsClosed").outputs[0]

    def size(self, name: str | None = None) -> Tensor:
        """The number of elements in the queue (int32)."""
        return make_op("QueueSizeV2", [self._queue_ref],
                       name=name or f"{self._name}_Size").outputs[0]


def _queue_ref(op_type: str, attrs: dict[str, Any], name: str) -> Tensor:
    graph = get_default_graph()
    with graph.control_dependencies(None):  # TF's init_scope: a queue depends on nothing
        return make_op(op_type, [], attrs, name=name).outputs[0]


def _queue_attrs(dtypes: list[_dtypes.DType], shapes: list[TensorShape] | None,
                 capacity: int, shared_name: str | None) -> dict[str, Any]:
    if shapes is not None and len(shapes) != len(dtypes):
        raise ValueError("Queue shapes must have the same length as dtypes")
    return {"component_types": dtypes, "shapes": shapes or [], "capacity": int(capacity),
            "shared_name": shared_name or ""}


class FIFOQueue(QueueBase):
    """A queue that gives its elements in first-in first-out order."""

    def __init__(self, capacity: int, dtypes: Any, shapes: Any = None, names: Any = None,
                 shared_name: str | None = None, name: str = "fifo_queue") -> None:
        types = _as_type_list(dtypes)
        shape_list = _as_shape_list(shapes)
        name_list = _as_name_list(names, types)
        ref = _queue_ref("FIFOQueueV2", _queue_attrs(types, shape_list, capacity, shared_name),
                         name)
        super().__init__(types, shape_list, name_list, ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose shapes may have unknown dims; ``dequeue_many`` pads each component
    with zeros to the largest element of the batch."""

    def __init__(self, capacity: int, dtypes: Any, shapes: Any, names: Any = None,
                 shared_name: str | None = None, name: str = "padding_fifo_queue") -> None:
        types = _as_type_list(dtypes)
        shape_list = _as_shape_list(shapes, unknown_dim_allowed=True) or []
        name_list = _as_name_list(names, types)
        if len(types) != len(shape_list):
            raise ValueError(f"Shapes must be provided for all components, but received "
                             f"{len(types)} dtypes and {len(shape_list)} shapes.")
        ref = _queue_ref("PaddingFIFOQueueV2",
                         _queue_attrs(types, shape_list, capacity, shared_name), name)
        super().__init__(types, shape_list, name_list, ref)


class RandomShuffleQueue(QueueBase):
    """A queue that gives a random element, keeping at least `min_after_dequeue` until it is
    closed."""

    def __init__(self, capacity: int, min_after_dequeue: int, dtypes: Any, shapes: Any = None,
                 names: Any = None, seed: int | None = None, shared_name: str | None = None,
                 name: str = "random_shuffle_queue") -> None:
        types = _as_type_list(dtypes)
        shape_list = _as_shape_list(shapes)
        name_list = _as_name_list(names, types)
        seed1, seed2 = get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            # TF: queues shared by name draw the same order in every graph that shares them
            digest = hashlib.md5((str(seed1) + shared_name).encode("utf-8")).hexdigest()
            seed2 = int(digest[:8], 16) & 0x7FFFFFFF
        attrs = {**_queue_attrs(types, shape_list, capacity, shared_name),
                 "min_after_dequeue": int(min_after_dequeue), "seed": seed1 or 0,
                 "seed2": seed2 or 0}
        super().__init__(types, shape_list, name_list,
                         _queue_ref("RandomShuffleQueueV2", attrs, name))


class PriorityQueue(QueueBase):
    """A queue whose elements lead with an int64 scalar priority (not in `types`): dequeues give
    the element of least priority first, the priority as its first component."""

    def __init__(self, capacity: int, types: Any, shapes: Any = None, names: Any = None,
                 shared_name: str | None = None, name: str = "priority_queue") -> None:
        type_list = _as_type_list(types)
        shape_list = _as_shape_list(shapes)
        ref = _queue_ref("PriorityQueueV2",
                         _queue_attrs(type_list, shape_list, capacity, shared_name), name)
        priority_shapes = [TensorShape([]), *shape_list] if shape_list else None
        super().__init__([_dtypes.int64, *type_list], priority_shapes, names, ref)
