"""Symbolic gradients: ``tw.gradients`` and ``tw.stop_gradient``, as in ``tf.compat.v1``.

Contract: `gradients(ys, xs)` builds, by reverse-mode construction over `Operation.inputs`, the
graph of ``sum(dy/dx)`` for each x and returns one tensor per x (``None`` where x does not reach
any y). Each op's gradient function is looked up by op type in the plugins' gradient registry
(``tensorweave_register_gradients``), then in the op's `OpDef.grad`. A gradient function is
called as ``fn(op, *grads)`` with one gradient per output (zeros for floating outputs that
received none) and returns one gradient or ``None`` per input. An op registered with gradient
``None`` (``Shape``, comparisons, ``StopGradient``, ...) is not differentiable and stops the flow;
an op that is on a gradient path but has no registration at all raises `LookupError`, as TF does.
Only floating tensors carry gradients. Gradients reaching a tensor along several paths are summed
with ``AddN``. A `Variable` in `xs` is differentiated through its ref, so every read of it counts.

Sparse gradients: a gradient may be an `IndexedSlices` (the gather gradient of its params is one),
and ``gradients`` then returns it as such, as TF does for a variable read by
``embedding_lookup``. Several gradients of one tensor that are all `IndexedSlices` are
concatenated (values and indices; int32 indices become int64 when mixed with int64), a mix with
dense ones is densified and summed (TF's ``_AggregateIndexedSlicesGradients``). A gradient
function receives `IndexedSlices` only if it is marked with `accepts_indexed_slices` (Identity's
passes them through); any other one gets them densified.
"""

from __future__ import annotations

import collections
import contextlib
import enum
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from tensorweave.api import array_ops, custom_gradient, math_ops
from tensorweave.api.control_flow_ops import tuple as _tuple
from tensorweave.api.indexed_slices import IndexedSlices, to_dense
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Graph, Operation, Tensor
from tensorweave.engine.graph.op_builder import apply

__all__ = ["AggregationMethod", "UnconnectedGradients", "gradients", "stop_gradient"]


class UnconnectedGradients(enum.Enum):
    """What `gradients` gives for an x that no y depends on: None, or zeros shaped as x."""

    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    """How gradients reaching one tensor along several paths are combined. All methods give the
    same sum here; the names are accepted for TF compatibility."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


_METHODS = (AggregationMethod.ADD_N, AggregationMethod.EXPERIMENTAL_TREE,
            AggregationMethod.EXPERIMENTAL_ACCUMULATE_N)


def stop_gradient(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The input, as a node through which no gradient flows."""
    return apply("StopGradient", [input], name=name or "StopGradient")


_zero_fills: weakref.WeakSet[Tensor] = weakref.WeakSet()

Gradient = Tensor | IndexedSlices


def accepts_indexed_slices(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark the gradient function `fn` as taking `IndexedSlices` gradients as they are (a
    function not marked receives them densified)."""
    fn.accepts_indexed_slices = True  # type: ignore[attr-defined]
    return fn


def gate(grads: Sequence[Gradient | None]) -> list[Gradient | None]:
    """``tw.tuple`` of gradients, `IndexedSlices` included (their parts are gated and the
    slices rebuilt): each is available only after all are computed."""
    parts: list[Tensor | None] = []
    for g in grads:
        if isinstance(g, IndexedSlices):
            parts += [g.values, g.indices, g.dense_shape]
        else:
            parts.append(g)
    gated = iter(_tuple(parts))
    return [IndexedSlices(next(gated), next(gated), next(gated))
            if isinstance(g, IndexedSlices) else next(gated) for g in grads]


def is_zero_fill(grad: Tensor | None) -> bool:
    """True for the zeros the sweep passes as the gradient of an output nothing
    differentiated (TF's ``_is_zeros_tensor``), so a gradient function can skip work on it."""
    return grad is not None and grad in _zero_fills


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _as_x(x: Any) -> Tensor:
    if hasattr(x, "_ref"):  # a Variable: differentiate through the ref, covering every read
        return x._ref()
    return convert_to_tensor(x)


def _trainable(t: Tensor) -> bool:
    return t.dtype.is_floating or t.dtype.is_complex


def _receives_gradient(t: Tensor) -> bool:
    """A gradient reaches a resource handle too: it is a resource variable's gradient."""
    return _trainable(t) or t.dtype == dtypes.resource


def gradient_function(op: Operation) -> Callable[..., Any] | None:
    """The gradient function of `op`'s type; ``None`` if it is registered as not
    differentiable; `LookupError` if it has none."""
    return custom_gradient.lookup(op)  # tw.RegisterGradient and overrides first


def _reached_from(from_ops: Sequence[Operation]) -> set[Operation]:
    reached: set[Operation] = set()
    queue = collections.deque(from_ops)
    while queue:
        op = queue.popleft()
        if op in reached:
            continue
        reached.add(op)
        for t in op.outputs:
            queue.extend(t.consumers())
    return reached


def _between(to_ops: Sequence[Operation], reached: set[Operation]) -> set[Operation]:
    """Ops on some path from an x to a y."""
    between: set[Operation] = set()
    queue = collections.deque(op for op in to_ops if op in reached)
    while queue:
        op = queue.popleft()
        if op in between:
            continue
        between.add(op)
        queue.extend(t.op for t in op.inputs if t.op in reached)
    return between


def _aggregate(grads: list[Gradient]) -> Gradient | None:
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    if not any(isinstance(g, IndexedSlices) for g in grads):
        return _multi_device_add_n(grads)
    if any(isinstance(g, Tensor) for g in grads):  # a dense sum anyway: no densify warning
        return math_ops.add_n([to_dense(g) for g in grads])
    return _concat_slices(grads)


def _multi_device_add_n(grads: list[Tensor]) -> Tensor:
    """The sum of `grads` as TF's ``_MultiDeviceAddN``: an ``AddN`` per device of the
    summands, colocated with the first summand there, then one over those partial sums."""
    by_device: dict[str, list[Tensor]] = {}
    for g in grads:
        by_device.setdefault(g.device, []).append(g)
    graph = grads[0].graph
    partial = []
    for device in sorted(by_device):
        with graph.colocate_with(by_device[device][0].op, ignore_existing=True):
            partial.append(math_ops.add_n(by_device[device]))
    return partial[0] if len(partial) == 1 else math_ops.add_n(partial)


def _concat_slices(grads: list[IndexedSlices]) -> IndexedSlices:
    """One `IndexedSlices` holding the rows of all (repeated indices are summed on use)."""
    if len({g.indices.dtype for g in grads}) > 1:
        grads = [g if g.indices.dtype == dtypes.int64 else
                 IndexedSlices(g.values, math_ops.cast(g.indices, dtypes.int64), g.dense_shape)
                 for g in grads]
    return IndexedSlices(array_ops.concat([g.values for g in grads], 0),
                         array_ops.concat([g.indices for g in grads], 0), grads[0].dense_shape)


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients",
              colocate_gradients_with_ops: bool = False, gate_gradients: bool = False,
              aggregation_method: int | None = None, stop_gradients: Any = None,
              unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
              ) -> list[Gradient | None]:
    """Symbolic derivatives of ``sum(ys)`` with respect to each of `xs`; see the module
    docstring. An x that no y depends on gets None, or with `unconnected_gradients` ``ZERO``
    (or ``"zero"``) zeros of its shape."""
    if aggregation_method is not None and aggregation_method not in _METHODS:
        raise ValueError(f"Invalid aggregation_method specified {aggregation_method}.")
    try:
        unconnected = UnconnectedGradients(unconnected_gradients)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: "
                         f"{unconnected_gradients!r}") from None
    ys = [convert_to_tensor(y) for y in _as_list(ys)]
    xs = [_as_x(x) for x in _as_list(xs)]
    grad_ys = [None] * len(ys) if grad_ys is None else _as_list(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    stops = {convert_to_tensor(t).op for t in _as_list(stop_gradients or [])}
    graph = ys[0].graph
    with graph.as_default(), graph.name_scope(name):
        grads = _Backprop(graph, xs, stops, colocate_gradients_with_ops,
                          gate_gradients).run(ys, grad_ys)
        if unconnected is UnconnectedGradients.ZERO:
            grads = [array_ops.zeros_like(x) if g is None else g for x, g in zip(xs, grads)]
        return grads


class _Backprop:
    """One reverse sweep: pending counts over the ops between xs and ys, then a queue."""

    def __init__(self, graph: Graph, xs: list[Tensor], stops: set[Operation], colocate: bool,
                 gate: bool) -> None:
        self.graph = graph
        self.xs = xs
        self.colocate = colocate
        self.gate = gate
        self.grads: dict[Operation, list[list[Gradient]]] = {}
        self.done: dict[Operation, list[Gradient | None]] = {}
        self.stop_ops = stops

    def _colocated(self, op: Operation) -> contextlib.AbstractContextManager[None]:
        """Colocation with `op` when asked for (``colocate_gradients_with_ops``)."""
        if not self.colocate:
            return contextlib.nullcontext()
        return self.graph.colocate_with(op, ignore_existing=True)

    def _default_grad_y(self, y: Tensor, i: int) -> Tensor:
        # TF 2.x compat.v1's: ones(shape(y), name="grad_ys_i"), a Fill named grad_ys_i of
        # grad_ys_i/Const (TF 1.15 named the constant grad_ys_i and the Fill "Fill")
        if y.dtype.is_complex:
            raise TypeError(f"Gradients of complex tensors must set grad_ys (y.dtype = "
                            f"{y.dtype!r})")
        with self._colocated(y.op):
            return array_ops.ones(array_ops.shape(y), y.dtype, name=f"grad_ys_{i}")

    def _add(self, t: Tensor, grad: Gradient) -> None:
        slots = self.grads.setdefault(t.op, [[] for _ in t.op.outputs])
        slots[t.value_index].append(grad)

    def run(self, ys: list[Tensor], grad_ys: list[Any]) -> list[Gradient | None]:
        for i, (y, gy) in enumerate(zip(ys, grad_ys)):
            if gy is None:
                gy = self._default_grad_y(y, i)
            else:  # a handle's gradient is its variable's, of the variable's dtype
                gy = convert_to_tensor(gy, None if y.dtype == dtypes.resource else y.dtype)
            self._add(y, gy)
        from_ops = [x.op for x in self.xs]
        between = _between([y.op for y in ys], _reached_from(from_ops))
        pending: dict[Operation, int] = collections.Counter()
        for op in between:
            for t in op.inputs:
                if t.op in between:
                    pending[t.op] += 1
        # An x's op is a leaf of the sweep unless another x lies upstream of it.
        leaves = {op for op in from_ops
                  if not any(pending.get(t.op, 0) for t in op.inputs if t.op in between)}
        leaves |= self.stop_ops
        queue = collections.deque(dict.fromkeys(y.op for y in ys if y.op in between
                                                and pending[y.op] == 0))
        while queue:
            op = queue.popleft()
            in_grads = self._backprop_op(op, op in leaves)
            for t, g in zip(op.inputs, in_grads):
                if g is not None and _receives_gradient(t):
                    self._add(t, g)
            for t in op.inputs:
                if t.op in between:
                    pending[t.op] -= 1
                    if pending[t.op] == 0:
                        queue.append(t.op)
        return [self._result(x) for x in self.xs]

    def _result(self, x: Tensor) -> Gradient | None:
        if x.op in self.done:
            return self.done[x.op][x.value_index]
        slots = self.grads.get(x.op)
        return None if slots is None else self._sum(slots[x.value_index], x)

    def _sum(self, grads: list[Gradient], t: Tensor) -> Gradient | None:
        with self._colocated(t.op):
            return _aggregate(grads)

    def _backprop_op(self, op: Operation, leaf: bool) -> list[Gradient | None]:
        slots = self.grads.get(op, [[] for _ in op.outputs])
        # As TF, the gradients reaching each output are summed before the op's _grad scope.
        out_grads = [self._sum(s, t) for s, t in zip(slots, op.outputs)]
        self.done[op] = list(out_grads)
        with self.graph.name_scope(f"{op.name}_grad"):
            if leaf or all(g is None for g in out_grads):
                return [None] * len(op.inputs)
            fn = gradient_function(op)
            if fn is None:
                return [None] * len(op.inputs)
            with self._colocated(op):
                if not getattr(fn, "accepts_indexed_slices", False):
                    out_grads = [convert_to_tensor(g) if isinstance(g, IndexedSlices) else g
                                 for g in out_grads]
                for i, t in enumerate(op.outputs):
                    if out_grads[i] is None and _trainable(t):
                        out_grads[i] = array_ops.zeros_like(t)
                        _zero_fills.add(out_grads[i])
                in_grads = list(fn(op, *out_grads))
                if len(in_grads) != len(op.inputs):
                    raise ValueError(
                        f"Num gradients {len(in_grads)} generated for op {op.name} ({op.type}) "
                        f"do not match num inputs {len(op.inputs)}")
                if self.gate and sum(g is not None for g in in_grads) > 1:
                    in_grads = gate(in_grads)
        for t, g in zip(op.inputs, in_grads):
            if isinstance(g, Tensor) and t.shape.ndims is not None \
                    and t.dtype != dtypes.resource:  # a handle's gradient has its variable's
                g.set_shape(t.shape)
        return in_grads
