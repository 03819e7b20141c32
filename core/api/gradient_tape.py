"""``tf.GradientTape`` in graph mode: gradients through the ops built while the tape records.

Contract: inside ``with GradientTape() as tape:`` every op added to the default graph is
recorded (not those built under `stop_recording`). `gradient(target, sources)` differentiates
`target` through recorded ops only, with respect to watched sources: tensors given to `watch`,
and variables, which are watched when given to `watch` or, with `watch_accessed_variables`
(the default), when trainable. Reads of a watched variable count as recorded wherever they
were built, since a variable's snapshot is made with the variable. An unwatched source, or
one the target does not reach through recorded ops, gets None (or zeros with
``unconnected_gradients=ZERO``). `target` and `sources` may be nested structures; the result
has the structure of `sources`. A tape that is not `persistent` gives one gradient (or one
jacobian), then raises `RuntimeError`.

`jacobian(target, sources)` gives, per source, the derivative of every element of `target`
with respect to every element of the source, shaped ``target.shape + source.shape`` (None for
an unconnected source unless ``unconnected_gradients=ZERO``). `batch_jacobian(target,
source)`, for a ``[b, y...]`` target whose row i depends on row i of a ``[b, x...]`` source
only, gives the ``[b, y..., x...]`` stack of per-row jacobians. Both differentiate once, with
the incoming gradient as a placeholder, then run that backward pass once per target element
(per element of a row) in a `while_loop` whose body copies the backward ops, the incoming
gradient a one-hot there: the graph does not grow with the target's size, which may be known
at run time only. TF's `parallel_iterations` is the loop's; `experimental_use_pfor` (TF's
vectorization) is accepted, and both of its values run the loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api.array_ops import zeros_like
from tensorweave.api.check_ops import assert_equal
from tensorweave.api.control_flow_ops import while_loop
from tensorweave.api.gradients import UnconnectedGradients, gradients
from tensorweave.api.indexed_slices import to_dense
from tensorweave.api.op_copy import copy_ops
from tensorweave.api.tensor_array import TensorArray
from tensorweave.api.variables import Variable, trainable_variables
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Graph, Operation, Tensor, get_default_graph
from tensorweave.python.util import nest

__all__ = ["GradientTape"]


class GradientTape:
    """Records the ops built in its context, for `gradient` (see the module docstring)."""

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._graph: Graph | None = None
        self._windows: list[list[int]] = []  # [first op index, end index] while recording
        self._watched: list[Any] = []
        self._recording = False
        self._used = False

    def __enter__(self) -> GradientTape:
        if self._recording:
            raise ValueError("Tape is already recording.")
        self._start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop()

    def _start(self) -> None:
        graph = get_default_graph()
        if self._graph is not None and graph is not self._graph:
            raise ValueError("A GradientTape records the ops of one graph only.")
        self._graph = graph
        self._windows.append([len(graph._ops), -1])
        self._recording = True

    def _stop(self) -> None:
        assert self._graph is not None
        self._windows[-1][1] = len(self._graph._ops)
        self._recording = False

    @contextlib.contextmanager
    def _ensure_recording(self) -> Iterator[None]:
        """Record the ops built here, whether or not the tape is recording (TF's)."""
        if self._recording:
            yield
            return
        self._start()
        try:
            yield
        finally:
            self._stop()

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Ops built in this context are not recorded."""
        if not self._recording:
            raise ValueError("Tape must be recording in order to stop recording.")
        self._stop()
        try:
            yield
        finally:
            self._start()

    def reset(self) -> None:
        """Forget every recorded op and watched source (recording goes on if it was)."""
        recording = self._recording
        self._windows, self._watched, self._recording = [], [], False
        if recording:
            self._start()

    def watch(self, tensor: Any) -> None:
        """Watch `tensor` (a tensor, a variable, or a nest of them)."""
        for item in nest.flatten(tensor):
            if not isinstance(item, (Tensor, Variable)):
                raise ValueError(f"Passed in object of type {type(item)}, not tf.Tensor")
            self._watched.append(item)

    def watched_variables(self) -> tuple[Variable, ...]:
        """The variables given to `watch`, and with `watch_accessed_variables` the trainable
        ones."""
        explicit = [v for v in self._watched if isinstance(v, Variable)]
        accessed = trainable_variables() if self._watch_accessed and self._graph else []
        return tuple(dict.fromkeys([*explicit, *accessed]))

    def _recorded(self) -> set[Operation]:
        assert self._graph is not None
        ops = self._graph._ops
        return {op for start, end in self._windows
                for op in ops[start:(len(ops) if end < 0 else end)]}

    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
                 ) -> Any:
        """d `target` / d each of `sources`, through the recorded ops."""
        if self._graph is None:
            raise ValueError("GradientTape.gradient called on a tape that never recorded.")
        if self._used and not self._persistent:
            raise RuntimeError("GradientTape.gradient can only be called once on "
                               "non-persistent tapes.")
        self._used = True
        unconnected = UnconnectedGradients(unconnected_gradients)
        flat_sources = nest.flatten(sources)
        watched_tensors = {id(t) for t in self._watched if isinstance(t, Tensor)}
        watched_vars = set(self.watched_variables())
        recorded = self._recorded()
        reads = set()
        for var in watched_vars:
            reads |= {op for op in self._graph._ops
                      if op.type == "Identity" and op.inputs and op.inputs[0] is var._ref()}
        # Gradients stop at ops the tape did not record, except sources and variable reads.
        keep = recorded | reads | {s._ref().op if isinstance(s, Variable) else s.op
                                   for s in flat_sources}
        stops = [op.outputs[0] for op in self._graph._ops if op not in keep and op.outputs]
        connected = [s for s in flat_sources
                     if (s in watched_vars if isinstance(s, Variable) else id(s) in
                         watched_tensors)]
        targets = nest.flatten(target)
        grads = {}
        if connected:
            found = gradients(targets, connected, grad_ys=None if output_gradients is None
                              else nest.flatten(output_gradients), stop_gradients=stops,
                              unconnected_gradients=unconnected)
            grads = {id(s): g for s, g in zip(connected, found)}
        results = []
        for source in flat_sources:
            grad = grads.get(id(source))
            if grad is None and unconnected is UnconnectedGradients.ZERO:
                grad = zeros_like(source._ref() if isinstance(source, Variable) else source)
            results.append(grad)
        return nest.pack_sequence_as(sources, results)

    def _check_reusable(self) -> None:
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")

    def jacobian(self, target: Any, sources: Any,
                 unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
                 parallel_iterations: int | None = None, experimental_use_pfor: bool = True,
                 ) -> Any:
        """d each element of `target` / d each element of each of `sources` (see the module
        docstring)."""
        del experimental_use_pfor  # both values run the loop (see the module docstring)
        self._check_reusable()
        flat_sources = nest.flatten(sources)
        target = convert_to_tensor(target)
        with self._ensure_recording():
            target_shape = array_ops.shape(target)
            flat = array_ops.reshape(target, [-1])
        size = flat.shape.dims[0] if flat.shape.dims[0] is not None else \
            array_ops.shape(flat)[0]
        rows = self._rows(flat, flat_sources, size,
                          lambda k: array_ops.one_hot(k, size, dtype=flat.dtype),
                          unconnected_gradients, parallel_iterations)
        out = []
        for source, row in zip(flat_sources, rows):
            if row is not None:
                row = array_ops.reshape(row, array_ops.concat(
                    [target_shape, array_ops.shape(row)[1:]], axis=0))
                row.set_shape(target.shape.concatenate(_shape_of(source)))
            out.append(row)
        return nest.pack_sequence_as(sources, out)

    def batch_jacobian(self, target: Any, source: Any,
                       unconnected_gradients: UnconnectedGradients | str =
                       UnconnectedGradients.NONE, parallel_iterations: int | None = None,
                       experimental_use_pfor: bool = True) -> Tensor:
        """The per-row jacobians of `target` ``[b, y...]`` with respect to `source` ``[b,
        x...]``, stacked: ``[b, y..., x...]`` (see the module docstring). `ValueError` unless
        both have rank 2 or more and the same static first dimension; a first dimension that differs
        at run time fails the run (TF's assertion)."""
        del experimental_use_pfor  # both values run the loop (see the module docstring)
        self._check_reusable()
        target = convert_to_tensor(target)
        source_static = _shape_of(source)
        static = target.shape
        for shape in (static, source_static):
            if shape.ndims is not None and shape.ndims < 2:
                raise ValueError(f"Shape {shape} must have rank at least 2")
        if static.ndims is not None and source_static.ndims is not None \
                and None not in (static.dims[0], source_static.dims[0]) \
                and static.dims[0] != source_static.dims[0]:
            raise ValueError(f"Need first dimension of target shape ({static}) and source "
                             f"shape ({source_static}) to match.")
        if static.is_fully_defined():
            batch = static.dims[0]
            row_size = static.num_elements() // batch if batch else 0
            target_shape: Any = static.as_list()
        else:
            target_shape = array_ops.shape(target)
            batch = target_shape[0]
            row_size = math_ops.floordiv(array_ops.size(target), batch)
        source_shape = array_ops.shape(_tensor_of(source))
        with self._ensure_recording():
            check = assert_equal(batch, source_shape[0])
            with get_default_graph().control_dependencies([check]):
                rows2d = array_ops.reshape(target, [batch, row_size])
        (row,) = self._rows(
            rows2d, [source], row_size,
            lambda k: array_ops.one_hot(array_ops.fill([batch], k), row_size,
                                        dtype=target.dtype),
            unconnected_gradients, parallel_iterations)
        new_shape = array_ops.concat([target_shape, source_shape[1:]], axis=0)
        if row is None:
            return array_ops.zeros(new_shape, target.dtype)
        out = array_ops.reshape(row, [row_size, batch, -1])
        out = array_ops.reshape(array_ops.transpose(out, [1, 0, 2]), new_shape)
        out.set_shape(static.concatenate(source_static[1:]))
        return out

    def _rows(self, target: Tensor, sources: list[Any], count: Any,
              seed: Any, unconnected_gradients: UnconnectedGradients | str,
              parallel_iterations: int | None) -> list[Tensor | None]:
        """Per source, the `count` gradients of `target` weighted by ``seed(k)`` for k in
        ``0..count-1``, stacked (None for an unconnected source): one backward pass with a
        stand-in incoming gradient, copied into a loop body that feeds it ``seed(k)``."""
        stand_in = zeros_like(target)
        grads = self.gradient(target, sources, output_gradients=stand_in,
                              unconnected_gradients=unconnected_gradients)
        grads = [None if g is None else convert_to_tensor(to_dense(g)) for g in grads]
        live = [g for g in grads if g is not None]
        if not live:
            return grads
        backward = _depending_on(self._graph, stand_in.op, live)

        def body(k: Tensor, *arrays: TensorArray) -> list[Any]:
            mapping = {stand_in: seed(k)}
            copy_ops(backward, mapping)
            return [k + 1, *[ta.write(k, mapping.get(g, g)) for ta, g in zip(arrays, live)]]

        arrays = [TensorArray(g.dtype, size=count, element_shape=g.shape) for g in live]
        _, *arrays = while_loop(lambda k, *_: k < count, body, [0, *arrays],
                                parallel_iterations=parallel_iterations or 10)
        stacked = iter(ta.stack() for ta in arrays)
        return [None if g is None else next(stacked) for g in grads]


def _shape_of(source: Any) -> Any:
    return _tensor_of(source).shape


def _tensor_of(source: Any) -> Tensor:
    return source._ref() if isinstance(source, Variable) else convert_to_tensor(source)


def _depending_on(graph: Graph, start: Operation, targets: list[Tensor]) -> list[Operation]:
    """The ops of `graph` that `targets` need and that depend on `start` (it included), in
    graph order."""
    ops = graph._ops
    reached = {start}
    for op in ops[ops.index(start) + 1:]:
        if any(t.op in reached for t in op.inputs) or any(c in reached for c in
                                                           op.control_inputs):
            reached.add(op)
    needed: set[Operation] = set()
    stack = [t.op for t in targets if t.op in reached]
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        stack.extend(t.op for t in op.inputs if t.op in reached)
        stack.extend(c for c in op.control_inputs if c in reached)
    return [op for op in ops if op in needed and op is not start]
