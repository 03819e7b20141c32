"""Queue-based input pipelines, as ``tf.compat.v1.train``: producers and batching.

Contract: `limit_epochs(tensor, n)` gives `tensor` `n` times, then `OutOfRangeError`; it counts
in a local variable (``epochs``), so ``local_variables_initializer()`` must run first.
`input_producer` puts the rows of a tensor into a FIFO queue (shuffled each epoch unless
``shuffle=False``, at most `num_epochs` times) through a `QueueRunner` added to
``QUEUE_RUNNERS``, and returns the queue; `string_input_producer`, `range_input_producer` and
`slice_input_producer` build on it. `batch` enqueues `tensors` (a list or dict, one element or,
with ``enqueue_many``, a batch of them) from `num_threads` runner threads into a FIFO queue
(padding with ``dynamic_pad``) and dequeues `batch_size` of them; ``allow_smaller_final_batch``
lets the last batch of a closed queue be smaller. `shuffle_batch` does the same through a
`RandomShuffleQueue` that keeps `min_after_dequeue` elements to mix. Each queue reports how full
it is as a scalar summary, as TF's. The result has the structure of `tensors` (a single tensor
for a list of one, as TF). `batch_join` / `shuffle_batch_join` take a list of such structures
(same dtypes, compatible shapes) and give each its own enqueuing thread into one shared queue.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.array_ops import gather, range, shape, size  # noqa: A004
from tensorweave.api.control_flow_ops import identity
from tensorweave.api.data_flow_ops import (
    FIFOQueue,
    PaddingFIFOQueue,
    QueueBase,
    RandomShuffleQueue,
)
from tensorweave.api.logging_ops import Assert
from tensorweave.api.math_ops import cast, greater, maximum
from tensorweave.api.random_ops import random_shuffle
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.api.summary_ops import scalar
from tensorweave.api.variables import Variable
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.graph import GraphKeys, Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.engine.tensor_shape import TensorShape, as_shape
from tensorweave.train.queue_runner import QueueRunner, add_queue_runner

__all__ = ["batch", "batch_join", "input_producer", "limit_epochs", "range_input_producer",
           "shuffle_batch", "shuffle_batch_join", "slice_input_producer",
           "string_input_producer"]


def limit_epochs(tensor: Any, num_epochs: int | None = None, name: str | None = None) -> Any:
    """`tensor`, readable `num_epochs` times (None: forever), then `OutOfRangeError`."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = constant(0, dtype=dtypes.int64)
        epochs = Variable(zero64, name="epochs", trainable=False,
                          collections=[GraphKeys.LOCAL_VARIABLES])
        counter = apply("CountUpTo", [epochs.op.outputs[0]], {"limit": int(num_epochs)},
                        name="CountUpTo")
        with control_dependencies([counter]):
            return identity(tensor, name=scope)


def input_producer(input_tensor: Any, element_shape: Any = None, num_epochs: int | None = None,
                   shuffle: bool = True, seed: int | None = None, capacity: int = 32,
                   shared_name: str | None = None, summary_name: str | None = None,
                   name: str | None = None, cancel_op: Operation | None = None) -> QueueBase:
    """A FIFO queue fed with the rows of `input_tensor` by a queue runner."""
    with name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(
            TensorShape(None) if element_shape is None else as_shape(element_shape))
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype],
                          shapes=[element_shape], shared_name=shared_name, name=name)
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            scalar(summary_name, cast(queue.size(), dtypes.float32) * (1.0 / capacity))
        return queue


def string_input_producer(string_tensor: Any, num_epochs: int | None = None,
                          shuffle: bool = True, seed: int | None = None, capacity: int = 32,
                          shared_name: str | None = None, name: str | None = None,
                          cancel_op: Operation | None = None) -> QueueBase:
    """A queue of the strings of a 1-D `string_tensor` (file names, usually)."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, Tensor) and not len(string_tensor):
        raise ValueError(not_null_err)
    with name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        with control_dependencies([Assert(greater(size(string_tensor), 0), [not_null_err])]):
            string_tensor = identity(string_tensor)
        return input_producer(string_tensor, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                              capacity=capacity, shared_name=shared_name, name=scope,
                              summary_name=f"fraction_of_{capacity}_full", cancel_op=cancel_op)


def range_input_producer(limit: Any, num_epochs: int | None = None, shuffle: bool = True,
                         seed: int | None = None, capacity: int = 32,
                         shared_name: str | None = None, name: str | None = None) -> QueueBase:
    """A queue of the integers ``0 .. limit - 1`` (int32)."""
    with name_scope(name, "input_producer", [limit]) as scope:
        return input_producer(range(limit), [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full", scope)


def slice_input_producer(tensor_list: list[Any], num_epochs: int | None = None,
                         shuffle: bool = True, seed: int | None = None, capacity: int = 32,
                         shared_name: str | None = None, name: str | None = None) -> list[Any]:
    """One row of every tensor of `tensor_list` at a time (the same row of each)."""
    with name_scope(name, "input_producer", tensor_list):
        tensors = [convert_to_tensor(t) for t in tensor_list]
        if not tensors:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        queue = range_input_producer(shape(tensors[0])[0], num_epochs=num_epochs,
                                     shuffle=shuffle, seed=seed, capacity=capacity,
                                     shared_name=shared_name)
        index = queue.dequeue()
        return [gather(t, index) for t in tensors]


# -- batching -----------------------------------------------------------------------------------

def _as_tensor_list(tensors: Any) -> list[Any]:
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    return list(tensors)


def _as_original_type(original: Any, dequeued: Any) -> Any:
    if isinstance(original, dict):
        if len(original) == 1:  # a queue of one component gives a single tensor
            dequeued = [dequeued]
        return {k: dequeued[i] for i, k in enumerate(sorted(original, key=str))}
    return dequeued


def _validate(tensor_list: list[Any], caller: str) -> list[Tensor]:
    if not tensor_list:
        raise ValueError(f"Expected at least one tensor in {caller}().")
    return [convert_to_tensor(t) for t in tensor_list]


def _shapes(tensors: list[Tensor], shapes: Any, enqueue_many: bool) -> list[TensorShape]:
    if shapes is not None:
        return [as_shape(s) for s in shapes]
    out = []
    for t in tensors:
        if t.shape.ndims is None:
            raise ValueError(f"Cannot infer Tensor's rank: {t}")
        if enqueue_many:
            if t.shape.ndims < 1:
                raise ValueError(f"Shape {t.shape} must have rank at least 1")
            out.append(t.shape[1:])
        else:
            out.append(t.shape)
    return out


def _enqueue(queue: QueueBase, tensors: list[Tensor], threads: int, enqueue_many: bool) -> None:
    enqueue = queue.enqueue_many(tensors) if enqueue_many else queue.enqueue(tensors)
    add_queue_runner(QueueRunner(queue, [enqueue] * threads))


def _dequeue(queue: QueueBase, batch_size: int, allow_smaller_final_batch: bool,
             name: str) -> Any:
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def batch(tensors: Any, batch_size: int, num_threads: int = 1, capacity: int = 32,
          enqueue_many: bool = False, shapes: Any = None, dynamic_pad: bool = False,
          allow_smaller_final_batch: bool = False, shared_name: str | None = None,
          name: str | None = None) -> Any:
    """Batches of `batch_size` elements of `tensors`, filled by `num_threads` threads."""
    tensor_list = _as_tensor_list(tensors)
    with name_scope(name, "batch", [t for t in tensor_list if isinstance(t, Tensor)]) as scope:
        tensor_list = _validate(tensor_list, "batch")
        types = [t.dtype for t in tensor_list]
        queue_shapes = _shapes(tensor_list, shapes, enqueue_many)
        queue_type = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        queue = queue_type(capacity=capacity, dtypes=types, shapes=queue_shapes,
                           shared_name=shared_name)
        _enqueue(queue, tensor_list, num_threads, enqueue_many)
        scalar(f"fraction_of_{capacity}_full",
               cast(queue.size(), dtypes.float32) * (1.0 / capacity))
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors, dequeued)


def shuffle_batch(tensors: Any, batch_size: int, capacity: int, min_after_dequeue: int,
                  num_threads: int = 1, seed: int | None = None, enqueue_many: bool = False,
                  shapes: Any = None, allow_smaller_final_batch: bool = False,
                  shared_name: str | None = None, name: str | None = None) -> Any:
    """Batches of `batch_size` elements drawn at random from a buffer of at least
    `min_after_dequeue` (until the input ends)."""
    tensor_list = _as_tensor_list(tensors)
    with name_scope(name, "shuffle_batch",
                    [t for t in tensor_list if isinstance(t, Tensor)]) as scope:
        if capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue "
                             f"{min_after_dequeue}.")
        tensor_list = _validate(tensor_list, "shuffle_batch")
        types = [t.dtype for t in tensor_list]
        queue_shapes = _shapes(tensor_list, shapes, enqueue_many)
        queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue,
                                   seed=seed, dtypes=types, shapes=queue_shapes,
                                   shared_name=shared_name)
        _enqueue(queue, tensor_list, num_threads, enqueue_many)
        full = cast(maximum(0, queue.size() - min_after_dequeue), dtypes.float32) * \
            (1.0 / (capacity - min_after_dequeue))
        scalar(f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full",
               full)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors, dequeued)


# -- joins: several producers, one queue ----------------------------------------------------------

def _validate_join(tensors_list: list[Any], caller: str) -> list[list[Tensor]]:
    if not tensors_list:
        raise ValueError(f"Expected at least one input in {caller}().")
    lists = [_validate(_as_tensor_list(t), caller) for t in tensors_list]
    types = [t.dtype for t in lists[0]]
    for other in lists[1:]:
        if [t.dtype for t in other] != types:
            raise TypeError(f"Expected types to be consistent: {types} vs. "
                            f"{[t.dtype for t in other]}.")
    return lists


def _join_shapes(lists: list[list[Tensor]], shapes: Any,
                 enqueue_many: bool) -> list[TensorShape]:
    if shapes is not None:
        return [as_shape(s) for s in shapes]
    merged = _shapes(lists[0], None, enqueue_many)
    for other in lists[1:]:
        for i, candidate in enumerate(_shapes(other, None, enqueue_many)):
            if not merged[i].is_compatible_with(candidate):
                raise ValueError(f"Incompatible shapes at component {i} between "
                                 f"{merged[i]} and {candidate}")
            merged[i] = merged[i].merge_with(candidate)
    return merged


def _enqueue_join(queue: QueueBase, lists: list[list[Tensor]], enqueue_many: bool) -> None:
    ops = [queue.enqueue_many(t) if enqueue_many else queue.enqueue(t) for t in lists]
    add_queue_runner(QueueRunner(queue, ops))


def batch_join(tensors_list: list[Any], batch_size: int, capacity: int = 32,
               enqueue_many: bool = False, shapes: Any = None, dynamic_pad: bool = False,
               allow_smaller_final_batch: bool = False, shared_name: str | None = None,
               name: str | None = None) -> Any:
    """`batch` over several inputs (one enqueuing thread each) sharing one FIFO queue."""
    with name_scope(name, "batch_join") as scope:
        lists = _validate_join(tensors_list, "batch_join")
        queue_type = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        queue = queue_type(capacity=capacity, dtypes=[t.dtype for t in lists[0]],
                           shapes=_join_shapes(lists, shapes, enqueue_many),
                           shared_name=shared_name)
        _enqueue_join(queue, lists, enqueue_many)
        scalar(f"fraction_of_{capacity}_full",
               cast(queue.size(), dtypes.float32) * (1.0 / capacity))
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors_list[0], dequeued)


def shuffle_batch_join(tensors_list: list[Any], batch_size: int, capacity: int,
                       min_after_dequeue: int, seed: int | None = None,
                       enqueue_many: bool = False, shapes: Any = None,
                       allow_smaller_final_batch: bool = False,
                       shared_name: str | None = None, name: str | None = None) -> Any:
    """`shuffle_batch` over several inputs (one enqueuing thread each) sharing one queue."""
    with name_scope(name, "shuffle_batch_join") as scope:
        if capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue "
                             f"{min_after_dequeue}.")
        lists = _validate_join(tensors_list, "shuffle_batch_join")
        queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue,
                                   seed=seed, dtypes=[t.dtype for t in lists[0]],
                                   shapes=_join_shapes(lists, shapes, enqueue_many),
                                   shared_name=shared_name)
        _enqueue_join(queue, lists, enqueue_many)
        full = cast(maximum(0, queue.size() - min_after_dequeue), dtypes.float32) * \
            (1.0 / (capacity - min_after_dequeue))
        scalar(f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full",
               full)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors_list[0], dequeued)
