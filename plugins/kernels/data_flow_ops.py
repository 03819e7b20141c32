"""Kernels of TF1 queues (CPU only, as TF's) and of ``CountUpTo``.

Contract: a queue lives in its device's resource store under ``queue:<shared_name>`` (the node
name when the shared name is empty, as variables are named here), created by the first run of
its queue op; a second queue op with the same name must ask for the same kind, capacity,
component types and shapes (`InvalidArgumentError`, TF's words). The handle it gives is that key
(`resources.make_handle`).

Every enqueue, dequeue and close is an *attempt* on one of two FIFO lists, as in TF's
``QueueBase``: after any change the queue runs the attempt at the head of each list until neither
progresses, so attempts complete in arrival order, and a dequeue of many elements (or an enqueue
of many) makes partial progress while it waits. The kernels are async: an attempt that cannot
complete at once leaves no thread waiting, and its kernel's ``done`` is called, outside the
queue's lock, by whichever run lets it complete. An attempt still waiting when its step aborts
(a deadline, an error elsewhere in the step, a cancelled step) is withdrawn and fails with the
step's error; a dequeue withdrawn with part of its elements puts them back at the front. The
abort reaches the queue through the step's rendezvous: the attempt waits there for a key that
is never sent, and `Rendezvous.start_abort` fails every such wait.

Semantics (TF's): enqueue on a closed queue -> `CancelledError` ("... is closed."); a dequeue that
a closed queue cannot satisfy -> `OutOfRangeError` ("... is closed and has insufficient elements
(requested n, current size s)"), while ``DequeueUpTo`` then takes what is left. Closing waits
behind pending enqueues; closing with ``cancel_pending_enqueues`` fails them at once
(`CancelledError`); closing a closed queue is a `CancelledError`. A random shuffle queue gives a
random element, and only while more than ``min_after_dequeue`` remain (until it is closed); a
padding queue pads each batch component to the largest element with zeros (empty strings). A
priority queue's component 0 is an int64 scalar priority (a vector for an enqueue of many; any
other shape is an `InvalidArgumentError`, TF's words): it gives the element of least priority
first (equal priorities in arrival order, where TF leaves the order open), and a dequeue of many
takes nothing until the whole batch is there, so the batch comes out sorted (as TF's).
Elements are copied on enqueue: a fed array mutated later does not change the queue.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.runtime.rendezvous import create_key
from tensorweave.engine.tensor_shape import TensorShape, format_dims
from tensorweave.plugins.kernels.resources import find, make_handle

Element = tuple[Any, ...]
Done = Callable[[Any], None]

NO_PROGRESS, PROGRESS, COMPLETE = 0, 1, 2
_abort_keys = itertools.count()


def watch_step_abort(step: Any, device: Any,
                     on_abort: Callable[[BaseException], None]) -> Callable[[], Any]:
    """Call ``on_abort(error)`` when `step` aborts (at once if it already has); returns the call
    that withdraws the watch. It waits in the step's rendezvous for a key that is never sent."""
    key = create_key(device.name, device.incarnation, device.name,
                     f"_abort_watch_{next(_abort_keys)}")
    rendezvous = step.rendezvous

    def on_value(error: BaseException | None, _value: Any) -> None:
        if error is not None:
            on_abort(error)

    rendezvous.recv_async(key, on_value)
    return lambda: rendezvous.cancel_recv(key, on_value)


class _ByPriority:
    """A priority queue's elements, least priority first and equal ones in arrival order; the
    deque operations `Queue` uses, where ``extendleft`` puts elements back ahead of their
    equals."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Element]] = []
        self._arrivals = itertools.count()
        self._returns = itertools.count(-1, -1)

    def __len__(self) -> int:
        return len(self._heap)

    def append(self, element: Element) -> None:
        heapq.heappush(self._heap, (int(element[0]), next(self._arrivals), element))

    def popleft(self) -> Element:
        return heapq.heappop(self._heap)[2]

    def extendleft(self, elements: Iterable[Element]) -> None:
        for element in elements:  # as deque.extendleft: the last one given comes out first
            heapq.heappush(self._heap, (int(element[0]), next(self._returns), element))


@attrs.define(eq=False)
class _Attempt:
    """One enqueue, dequeue or close waiting on a queue."""

    ctx: KernelContext
    run: Callable[[_Attempt], int]  # under the queue's lock
    done: Done
    enqueue: bool
    pending: deque[Element] = attrs.field(factory=deque)  # elements still to enqueue
    wanted: int = 0  # elements a dequeue asks for
    allow_small: bool = False  # DequeueUpTo
    taken: list[Element] = attrs.field(factory=list)  # what a dequeue holds so far
    result: Any = None  # outputs, or the error to fail with
    finished: bool = False
    unwatch: Callable[[], Any] | None = None


class Queue:
    """One queue's elements, attempts and settings."""

    def __init__(self, kind: str, name: str, component_types: list[dtypes.DType],
                 shapes: list[TensorShape], capacity: int, min_after_dequeue: int = 0,
                 seeds: tuple[int, int] = (0, 0)) -> None:
        self.kind = kind  # FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue or PriorityQueue
        self.name = name
        self.component_types = component_types
        self.shapes = shapes
        self.capacity = capacity  # -1: unbounded
        self.min_after_dequeue = min_after_dequeue
        # TF: seeds (0, 0) draw a random seed; any other pair gives a reproducible order.
        self.rng = np.random.default_rng(None if seeds == (0, 0) else list(seeds))
        self.lock = threading.Lock()
        self.elements: deque[Element] | _ByPriority = \
            _ByPriority() if kind == "PriorityQueue" else deque()
        self.closed = False
        self.enqueues: deque[_Attempt] = deque()
        self.dequeues: deque[_Attempt] = deque()

    # -- attempts -------------------------------------------------------------------------------

    def submit(self, attempt: _Attempt, step: Any) -> None:
        """Queue `attempt`, run what can run, and arrange for a step abort to withdraw it."""
        with self.lock:
            (self.enqueues if attempt.enqueue else self.dequeues).append(attempt)
            finished = self._flush_locked()
        self._finish(finished)
        if not attempt.finished:
            self._watch_abort(attempt, step)

    def close_and_cancel(self) -> None:
        """Close, failing every pending enqueue (and a waiting close) at once."""
        with self.lock:
            self.closed = True
            cancelled = list(self.enqueues)
            self.enqueues.clear()
            for attempt in cancelled:
                attempt.finished = True
                attempt.result = errors.CancelledError(
                    attempt.ctx.node_name, attempt.ctx.op, "Enqueue operation was cancelled")
            finished = cancelled + self._flush_locked()
        self._finish(finished)

    def _flush_locked(self) -> list[_Attempt]:
        finished: list[_Attempt] = []
        changed = True
        while changed:
            changed = self._try_locked(self.enqueues, finished)
            changed = self._try_locked(self.dequeues, finished) or changed
        return finished

    @staticmethod
    def _try_locked(attempts: deque[_Attempt], finished: list[_Attempt]) -> bool:
        progress = False
        while attempts:
            attempt = attempts[0]
            status = attempt.run(attempt)
            if status == NO_PROGRESS:
                break
            progress = True
            if status == PROGRESS:
                break
            attempts.popleft()
            attempt.finished = True
            finished.append(attempt)
        return progress

    @staticmethod
    def _finish(finished: list[_Attempt]) -> None:
        for attempt in finished:
            if attempt.unwatch is not None:
                attempt.unwatch()
            attempt.done(attempt.result)

    def _watch_abort(self, attempt: _Attempt, step: Any) -> None:
        unwatch = watch_step_abort(step, attempt.ctx.device,
                                   lambda error: self._abort(attempt, error))
        with self.lock:
            attempt.unwatch = unwatch
            finished = attempt.finished
        if finished:  # completed while the watch was being set up
            unwatch()

    def _abort(self, attempt: _Attempt, error: BaseException) -> None:
        with self.lock:
            if attempt.finished:
                return
            attempt.finished = True
            (self.enqueues if attempt.enqueue else self.dequeues).remove(attempt)
            self._restore_locked(attempt)
            finished = self._flush_locked()  # the attempt may have blocked those behind it
        attempt.done(error)
        self._finish(finished)

    def _restore_locked(self, attempt: _Attempt) -> None:
        """Put a dequeue's partial elements back at the front, in their order."""
        self.elements.extendleft(reversed(attempt.taken))
        attempt.wanted += len(attempt.taken)
        attempt.taken = []

    # -- what attempts do (under the lock) ------------------------------------------------------

    def run_enqueue(self, attempt: _Attempt) -> int:
        if self.closed:
            attempt.result = errors.CancelledError(
                attempt.ctx.node_name, attempt.ctx.op, f"{self.kind} '{self.name}' is closed.")
            return COMPLETE
        status = NO_PROGRESS
        while attempt.pending and (self.capacity < 0 or len(self.elements) < self.capacity):
            self.elements.append(attempt.pending.popleft())
            status = PROGRESS
        return COMPLETE if not attempt.pending else status

    def run_close(self, attempt: _Attempt) -> int:
        if self.closed:
            attempt.result = errors.CancelledError(
                attempt.ctx.node_name, attempt.ctx.op, f"Queue '{self.name}' is already closed.")
        self.closed = True
        return COMPLETE

    def run_dequeue(self, attempt: _Attempt) -> int:
        if self.closed and len(self.elements) < attempt.wanted:
            self._restore_locked(attempt)
            if attempt.allow_small and self.elements:
                attempt.wanted = len(self.elements)
            else:
                attempt.result = errors.OutOfRangeError(
                    attempt.ctx.node_name, attempt.ctx.op,
                    f"{self.kind} '{self.name}' is closed and has insufficient elements "
                    f"(requested {attempt.wanted}, current size {len(self.elements)})")
                return COMPLETE
        if self.kind == "PriorityQueue" and not self.closed and \
                len(self.elements) < attempt.wanted:
            return NO_PROGRESS  # a batch taken piecemeal would not come out sorted
        status = NO_PROGRESS
        floor = 0 if self.closed else self.min_after_dequeue
        while attempt.wanted and len(self.elements) > floor:
            attempt.taken.append(self._take_locked())
            attempt.wanted -= 1
            status = PROGRESS
        if attempt.wanted:
            return status
        attempt.result = attempt.taken
        return COMPLETE

    def _take_locked(self) -> Element:
        if self.kind != "RandomShuffleQueue":
            return self.elements.popleft()
        i = int(self.rng.integers(len(self.elements)))
        self.elements[i], self.elements[-1] = self.elements[-1], self.elements[i]
        return self.elements.pop()

    # -- elements -------------------------------------------------------------------------------

    def matches(self, kind: str, attrs_: dict[str, Any]) -> str | None:
        """Why a queue op with `attrs_` cannot share this queue, or None."""
        types, shapes = _components(kind, attrs_)
        if kind != self.kind:
            return f"Shared queue '{self.name}' has type '{self.kind}' but a {kind} was requested"
        if attrs_["capacity"] != self.capacity:
            return (f"Shared queue '{self.name}' has capacity {self.capacity} but requested "
                    f"capacity was {attrs_['capacity']}")
        if types != self.component_types:
            return (f"Shared queue '{self.name}' has component types "
                    f"{_type_names(self.component_types)} but requested component types were "
                    f"{_type_names(types)}")
        if [s.as_list() if s.dims is not None else None for s in shapes] != \
                [s.as_list() if s.dims is not None else None for s in self.shapes]:
            return (f"Shared queue '{self.name}' has component shapes {_shape_names(self.shapes)}"
                    f" but requested component shapes were {_shape_names(shapes)}")
        return None

    def check_components(self, ctx: KernelContext, values: tuple[Any, ...], many: bool) -> None:
        """TF's ValidateTuple / ValidateManyTuple."""
        if len(values) != len(self.component_types):
            raise _invalid(ctx, f"Wrong number of components in tuple. Expected "
                           f"{len(self.component_types)}, got {len(values)}")
        for i, (value, dtype) in enumerate(zip(values, self.component_types)):
            if value.dtype != dtype.np_type:
                raise _invalid(ctx, f"Type mismatch in tuple component {i}. Expected "
                               f"{dtype.name}, got {dtypes.as_dtype(value.dtype).name}")
        if many:
            if any(v.ndim == 0 for v in values):
                raise _invalid(ctx, "Shape must be at least rank 1 for every component of an "
                               "enqueue of many elements")
            batch = values[0].shape[0]
            for i, value in enumerate(values[1:], 1):
                if value.shape[0] != batch:
                    raise _invalid(ctx, f"All input tensors must have the same size in the 0th "
                                   f"dimension. Component {i} has {value.shape[0]}, and should "
                                   f"have {batch}")
        if self.kind == "PriorityQueue" and values[0].ndim != int(many):
            got = TensorShape(values[0].shape[int(many):])
            raise _invalid(ctx, f"Expected the priority element to be a scalar, but received "
                           f"shape: {format_dims(got)}")
        for i, (value, shape) in enumerate(zip(values, self.shapes)):
            expected = TensorShape([value.shape[0]]).concatenate(shape) if many else shape
            got = TensorShape(value.shape)
            fits = expected.is_compatible_with(got) if self.kind == "PaddingFIFOQueue" \
                else expected.as_list() == got.as_list()
            if not fits:
                raise _invalid(ctx, f"Shape mismatch in tuple component {i}. Expected "
                               f"{format_dims(expected)}, got {format_dims(got)}")

    def batch(self, ctx: KernelContext, elements: list[Element]) -> tuple[Any, ...]:
        """The dequeued elements stacked (padded, for a padding queue) along a new dim 0."""
        xp, out = ctx.xp, []
        for c, (dtype, shape) in enumerate(zip(self.component_types, self.shapes)):
            values = [element[c] for element in elements]
            if self.kind != "PaddingFIFOQueue":
                out.append(xp.stack(values) if values else
                           xp.empty([0, *shape.as_list()], dtype=dtype.np_type))
                continue
            dims = [d if d is not None else max((v.shape[k] for v in values), default=0)
                    for k, d in enumerate(shape.as_list())]
            padded = xp.full([len(values), *dims], b"" if dtype.is_string else 0,
                             dtype=dtype.np_type)
            for i, v in enumerate(values):
                padded[(i, *(slice(0, n) for n in v.shape))] = v
            out.append(padded)
        return tuple(out)

    def specified_shapes(self) -> bool:
        return bool(self.shapes)


def _type_names(types: list[dtypes.DType]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def _shape_names(shapes: list[TensorShape]) -> str:
    return "[" + ", ".join(format_dims(s) for s in shapes) + "]"


def _invalid(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


# -- kernels ------------------------------------------------------------------------------------

_KINDS = {"FIFOQueueV2": "FIFOQueue", "PaddingFIFOQueueV2": "PaddingFIFOQueue",
          "RandomShuffleQueueV2": "RandomShuffleQueue", "PriorityQueueV2": "PriorityQueue"}


def _components(kind: str, attrs_: dict[str, Any]) -> tuple[list[dtypes.DType],
                                                              list[TensorShape]]:
    """The component types and shapes of a queue op's elements: a priority queue's attrs leave
    out the int64 scalar priority that leads each element (as TF's)."""
    types = list(attrs_["component_types"])
    shapes = [TensorShape(s) for s in attrs_["shapes"]]
    if kind != "PriorityQueue":
        return types, shapes
    return [dtypes.int64, *types], [TensorShape([]), *shapes] if shapes else []


def _new_queue(ctx: KernelContext, kind: str, name: str) -> Queue:
    a = ctx.attrs
    types, shapes = _components(kind, a)
    capacity = int(a["capacity"])
    if kind == "PaddingFIFOQueue" and len(shapes) != len(types):
        raise _invalid(ctx, f"Shapes must be provided for all components, but received "
                       f"{len(types)} dtypes and {len(shapes)} shapes.")
    if kind != "PaddingFIFOQueue" and any(not s.is_fully_defined() for s in shapes):
        raise _invalid(ctx, f"All shapes must be fully defined: {_shape_names(shapes)}")
    if kind != "RandomShuffleQueue":
        return Queue(kind, name, types, shapes, capacity)
    least = int(a["min_after_dequeue"])
    if least < 0:
        raise _invalid(ctx, f"min_after_dequeue {least} must be >= 0")
    if 0 <= capacity <= least:
        raise _invalid(ctx, f"min_after_dequeue {least} must be < capacity {capacity}")
    return Queue(kind, name, types, shapes, capacity, least, (int(a["seed"]), int(a["seed2"])))


def queue_op(ctx: KernelContext) -> Any:
    kind = _KINDS[ctx.op]
    return make_handle(ctx, "queue", lambda name: _new_queue(ctx, kind, name),
                       lambda queue: queue.matches(kind, ctx.attrs))


def _queue(ctx: KernelContext, handle: Any) -> Queue:
    return find(ctx, handle, Queue)


def enqueue(ctx: KernelContext, step: Any, done: Done, handle: Any, *components: Any) -> None:
    queue = _queue(ctx, handle)
    queue.check_components(ctx, components, many=False)
    element = tuple(ctx.xp.array(c, copy=True) for c in components)
    attempt = _Attempt(ctx, queue.run_enqueue, done, True, deque([element]))
    queue.submit(attempt, step)


def enqueue_many(ctx: KernelContext, step: Any, done: Done, handle: Any,
                 *components: Any) -> None:
    queue = _queue(ctx, handle)
    queue.check_components(ctx, components, many=True)
    if components[0].shape[0] == 0:  # TF: nothing to enqueue completes even on a closed queue
        done(None)
        return
    batches = [ctx.xp.array(c, copy=True) for c in components]
    pending = deque(tuple(b[i, ...] for b in batches) for i in range(batches[0].shape[0]))
    queue.submit(_Attempt(ctx, queue.run_enqueue, done, True, pending), step)


def _check_types(ctx: KernelContext, queue: Queue) -> None:
    wanted = list(ctx.attrs["component_types"])
    if wanted != queue.component_types:
        raise _invalid(ctx, f"Dequeue of component types {_type_names(wanted)} from queue "
                       f"'{queue.name}' of component types {_type_names(queue.component_types)}")


def _outputs(values: tuple[Any, ...]) -> Any:
    return values[0] if len(values) == 1 else values


def dequeue(ctx: KernelContext, step: Any, done: Done, handle: Any) -> None:
    queue = _queue(ctx, handle)
    _check_types(ctx, queue)

    def finished(result: Any) -> None:
        done(result if isinstance(result, BaseException) else _outputs(result[0]))

    queue.submit(_Attempt(ctx, queue.run_dequeue, finished, False, wanted=1), step)


def dequeue_for(ctx: KernelContext, step: Any, queue: Queue, done: Done) -> None:
    """Dequeue one element for another kernel (a reader's next work item): `done` gets the
    element's tuple of components, or the error."""
    def finished(result: Any) -> None:
        done(result if isinstance(result, BaseException) else result[0])

    queue.submit(_Attempt(ctx, queue.run_dequeue, finished, False, wanted=1), step)


def _dequeue_n(ctx: KernelContext, step: Any, done: Done, handle: Any, n: Any,
               allow_small: bool) -> None:
    queue = _queue(ctx, handle)
    _check_types(ctx, queue)
    if queue.kind != "PaddingFIFOQueue" and not queue.specified_shapes():
        raise _invalid(ctx, f"{queue.kind}'s DequeueMany and DequeueUpTo require the components to "
                       "have specified shapes.")
    count = int(n)
    if count < 0:
        raise _invalid(ctx, f"{ctx.op} requested {count} < 0 elements")

    def finished(result: Any) -> None:
        if isinstance(result, BaseException):
            done(result)
            return
        try:
            done(_outputs(queue.batch(ctx, result)))
        except Exception as exc:  # noqa: BLE001 - a kernel failure fails the step
            done(exc)

    attempt = _Attempt(ctx, queue.run_dequeue, finished, False, wanted=count,
                       allow_small=allow_small)
    queue.submit(attempt, step)


def dequeue_many(ctx: KernelContext, step: Any, done: Done, handle: Any, n: Any) -> None:
    _dequeue_n(ctx, step, done, handle, n, allow_small=False)


def dequeue_up_to(ctx: KernelContext, step: Any, done: Done, handle: Any, n: Any) -> None:
    _dequeue_n(ctx, step, done, handle, n, allow_small=True)


def close(ctx: KernelContext, step: Any, done: Done, handle: Any) -> None:
    queue = _queue(ctx, handle)
    if ctx.attrs["cancel_pending_enqueues"]:
        queue.close_and_cancel()
        done(None)
        return
    queue.submit(_Attempt(ctx, queue.run_close, done, True), step)


def size(ctx: KernelContext, handle: Any) -> Any:
    queue = _queue(ctx, handle)
    with queue.lock:
        return ctx.xp.asarray(len(queue.elements), dtype=np.int32)


def is_closed(ctx: KernelContext, handle: Any) -> Any:
    queue = _queue(ctx, handle)
    with queue.lock:
        return ctx.xp.asarray(queue.closed)


def count_up_to(ctx: KernelContext, ref: Any) -> Any:
    limit = int(ctx.attrs["limit"])
    with ref.lock:
        old = ref.read()
        if old >= limit:
            raise errors.OutOfRangeError(ctx.node_name, ctx.op, f"Reached limit of {limit}")
        ref.store(ctx.xp.asarray(old + 1, dtype=old.dtype))
    return old


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    if device_type != "CPU":  # TF keeps queues in host memory only
        return
    for op in _KINDS:
        registry.add(op, device_type, queue_op)
    for op, fn in (("QueueEnqueueV2", enqueue), ("QueueEnqueueManyV2", enqueue_many),
                   ("QueueDequeueV2", dequeue), ("QueueDequeueManyV2", dequeue_many),
                   ("QueueDequeueUpToV2", dequeue_up_to), ("QueueCloseV2", close)):
        registry.add(op, device_type, fn, is_async=True)
    registry.add("QueueSizeV2", device_type, size)
    registry.add("QueueIsClosedV2", device_type, is_closed)
    registry.add("CountUpTo", device_type, count_up_to)
