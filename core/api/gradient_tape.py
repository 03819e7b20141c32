"""``tf.GradientTape`` in graph mode: gradients through the ops built while the tape records.

Contract: inside ``with GradientTape() as tape:`` every op added to the default graph is
recorded (not those built under `stop_recording`). `gradient(target, sources)` differentiates
`target` through recorded ops only, with respect to watched sources: tensors given to `watch`,
and variables, which are watched when given to `watch` or, with `watch_accessed_variables`
(the default), when trainable. Reads of a watched variable count as recorded wherever they
were built, since a variable's snapshot is made with the variable. An unwatched source, or
one the target does not reach through recorded ops, gets None (or zeros with
``unconnected_gradients=ZERO``). `target` and `sources` may be nested structures; the result
has the structure of `sources`. A tape that is not `persistent` gives one gradient, then
raises `RuntimeError`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from tensorweave.api.array_ops import zeros_like
from tensorweave.api.gradients import UnconnectedGradients, gradients
from tensorweave.api.variables import Variable, trainable_variables
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
