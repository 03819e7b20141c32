"""The executor: runs one partition for one step.

Contract: `ExecutorPlan.build` resolves every node's kernel and `KernelContext` once (a missing
kernel raises `NotFoundError` naming node, op, device and the device types that have the op). Per
step, `Executor.run_async(step, done)` runs the nodes from a precomputed pending-count plan: cheap
kernels inline, expensive ones on the inter-op pool when they have parallel branches, async ones
(``_Recv``) through callbacks. A partition with no async kernel and nothing to overlap runs as a
straight loop in topological order that drops each tensor after its last reader; once it has run
a few times it is compiled to straight-line Python (`compiled_plan`), with identical results.
The plan of a function (``function=True``: a loop's cond or body) also runs by `call(step,
args)`, which returns its results; compiled, it reads its arguments and returns its results
without a kernel call for either, so a loop pays no per-variable kernel per iteration.
numpy's floating-point warnings are off while a partition runs: TF yields inf/nan silently.

The first error aborts the step's rendezvous, so no peer waits forever, and `done` receives it as
an `OpError` naming the node, its op and its device. `done` is called exactly once, after no node
of the step is running.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor as ThreadPool
from typing import Any

import attrs

from tensorweave.engine import errors
from tensorweave.engine.graph.graph_def import GraphDef, parse_input
from tensorweave.engine.kernel import KernelContext, bound, type_key
from tensorweave.engine.runtime import float_errors
from tensorweave.engine.runtime.compiled_plan import MAX_NODES as MAX_COMPILED_NODES
from tensorweave.engine.runtime.compiled_plan import CompiledPlan, compile_plan
from tensorweave.engine.runtime.device import Device
from tensorweave.engine.runtime.rendezvous import Rendezvous
from tensorweave.engine.runtime.variables_store import deref

SYNC, STEP, ASYNC = 0, 1, 2
_MAX_OVERLAP_CHECK = 4096
COMPILE_AFTER = 2  # straight-line runs before a plan is compiled to Python


@attrs.define
class NodeStats:
    """One node's execution record (TF's NodeExecStats fields)."""

    node_name: str
    op: str
    all_start_micros: int
    all_end_rel_micros: int
    thread_id: int
    timeline_label: str = ""


@attrs.define
class StepContext:
    """What one step of one partition shares with its kernels."""

    step_id: int
    rendezvous: Rendezvous
    args: list[Any] = attrs.field(factory=list)
    retvals: list[Any] = attrs.field(factory=list)
    stats: list[NodeStats] | None = None
    copy_tensor: Callable[[str, Device, Any], Any] | None = None


@attrs.define
class NodeItem:
    """One node of the plan."""

    name: str
    op: str
    fn: Callable[..., Any]
    ctx: KernelContext
    mode: int
    expensive: bool
    inputs: list[int]  # slot of each data input
    out_base: int  # slot of output 0
    num_outputs: int
    successors: list[int]  # one entry per edge (data or control) leaving this node
    frees: list[int] = attrs.field(factory=list)  # slots dead once this node ran (in order)
    label: str = ""  # TF's timeline label: "name = Op(input, ...)"
    direct: Callable[..., Any] | None = None  # a SYNC kernel's bound form (`kernel.bound`)
    # the inputs (by position) that get a variable's value, not its ref: `fn` and `direct`
    # dereference them; `kernel` and `kernel_direct` are the same forms without doing so
    derefs: list[int] = attrs.field(factory=list)
    kernel: Callable[..., Any] | None = None
    kernel_direct: Callable[..., Any] | None = None


def node_error(exc: BaseException, name: str, op: str, device: str) -> errors.OpError:
    """`exc` as an `OpError` whose message names the node, op and device."""
    suffix = f"\n\t [[node {name} (op: {op}) on device {device}]]"
    if isinstance(exc, errors.OpError):
        if "[[node " in exc.message:  # already located, e.g. by the partition that failed first
            return exc
        return type(exc)(name, op, exc.message + suffix)
    if isinstance(exc, MemoryError):
        cls: type[errors.OpError] = errors.ResourceExhaustedError
    elif isinstance(exc, (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError,
                          FloatingPointError, OverflowError)):
        cls = errors.InvalidArgumentError
    else:
        cls = errors.InternalError
    return cls(name, op, f"{type(exc).__name__}: {exc}{suffix}")


class ExecutorPlan:
    """A partition compiled for repeated execution on one device."""

    def __init__(self, nodes: list[NodeItem], order: list[int], pending: list[int],
                 num_slots: int, device: Device, straight_line: bool) -> None:
        self.nodes = nodes
        self.order = order
        self.pending = pending
        self.roots = [i for i, p in enumerate(pending) if p == 0]
        self.num_slots = num_slots
        self.device = device
        self.straight_line = straight_line
        # how many inputs read each slot: the general path drops a value when the last has run
        self.readers = [0] * num_slots
        for node in nodes:
            for slot in node.inputs:
                self.readers[slot] += 1
        if straight_line:
            _plan_frees(nodes, order)
            # Consts run once: their values seed each step's slots.
            self.consts = [i for i in order if nodes[i].op == "Const" and not nodes[i].inputs
                           and nodes[i].mode == SYNC]
            seeded = set(self.consts)
            self.records = [_record_of(i, nodes[i], num_slots)
                            for i in order if i not in seeded]
            self.seed_slots: list[Any] | None = None  # made by the first untraced run

    @classmethod
    def build(cls, graph_def: GraphDef, device: Device, registries: Any,
              parallel: bool = True) -> ExecutorPlan:
        kernels, ops = registries.kernels, registries.ops
        index = {n.name: i for i, n in enumerate(graph_def.node)}
        nodes: list[NodeItem] = []
        op_defs = [ops.get(nd.op) for nd in graph_def.node]
        slot = 0
        for nd, op_def in zip(graph_def.node, op_defs):
            out_types = nd.output_types
            kernel = kernels.lookup(nd.op, device.device_type, type_key(nd.attr, out_types))
            if kernel is None:
                raise missing_kernel_error(nd.name, nd.op, device, kernels,
                                           type_key(nd.attr, out_types))
            # A stateful kernel's state (a variable ref, a random generator) outlives the plan:
            # TF keeps such kernels per session and node, whatever the step signature.
            shared = op_def is not None and op_def.stateful and not nd.op.startswith("_")
            ctx = KernelContext(
                node_name=nd.name, op=nd.op,
                attrs={k: v for k, v in nd.attr.items() if not k.startswith("_output")},
                device=device, xp=device.xp, output_dtypes=list(out_types),
                output_shapes=list(nd.output_shapes),
                state=device.kernel_state(nd.name) if shared else {},
            )
            mode = ASYNC if kernel.is_async else STEP if kernel.needs_step else SYNC
            label = f"{nd.name} = {nd.op}({', '.join(nd.input)})"
            nodes.append(NodeItem(nd.name, nd.op, kernel.fn, ctx, mode, kernel.expensive, [],
                                  slot, len(out_types), [], label=label))
            slot += len(out_types)
        pending = [0] * len(nodes)
        for i, (nd, op_def) in enumerate(zip(graph_def.node, op_defs)):
            derefs = []
            input_types = []
            for text in nd.input:
                src, out = parse_input(text)
                if src not in index:
                    raise errors.InvalidArgumentError(
                        nd.name, nd.op, f"Node '{nd.name}' has an input from unknown node '{src}'")
                j = index[src]
                if out >= 0:
                    input_types.append(graph_def.node[j].output_types[out])
                    src_def = op_defs[j]
                    position = len(nodes[i].inputs)
                    if src_def is not None and src_def.ref_output and (
                            op_def is None or position not in op_def.ref_inputs):
                        derefs.append(position)
                    nodes[i].inputs.append(nodes[j].out_base + out)
                nodes[j].successors.append(i)
                pending[i] += 1
            item = nodes[i]
            item.kernel, item.derefs = item.fn, derefs
            if item.mode != ASYNC:
                item.kernel_direct = bound(item.fn, item.ctx, input_types)
            if item.mode == SYNC:
                item.direct = item.kernel_direct if item.kernel_direct is None or not derefs \
                    else _dereferencing(item.kernel_direct, 0, derefs)
            if derefs:
                item.fn = _dereferencing(item.fn, _KERNEL_ARGS[item.mode], derefs)
        order = _topological_order(nodes, pending)
        has_async = any(n.mode == ASYNC for n in nodes)
        overlap = parallel and _expensive_nodes_can_overlap(nodes, order)
        return cls(nodes, order, pending, slot, device, not has_async and not overlap)


# The untraced straight-line loop's records: ``(kind, fn, a, b, out, free1, free2, node)``, one
# flat tuple per node, so the commonest nodes (one or two inputs, one output, at most two slots
# to drop) cost no attribute look-up, no argument list and no inner loop per step. For them `fn`
# takes the inputs alone (the kernel's bound form, or the kernel with its context); a missing
# input or free is the spare slot past the plan's own. Any other node is GENERAL: the loop reads
# it from the plan.
GENERAL, UNARY, BINARY = 0, 1, 2


def _record_of(i: int, item: NodeItem, spare: int) -> tuple[Any, ...]:
    arity = len(item.inputs)
    if item.mode != SYNC or item.num_outputs != 1 or not 0 < arity <= 2 or len(item.frees) > 2:
        return (GENERAL, None, spare, spare, spare, spare, spare, i)
    fn = item.direct if item.direct is not None else functools.partial(item.fn, item.ctx)
    a, b = (*item.inputs, spare)[:2]
    free1, free2 = (*item.frees, spare, spare)[:2]
    return (arity, fn, a, b, item.out_base, free1, free2, i)


_KERNEL_ARGS = {SYNC: 1, STEP: 2, ASYNC: 3}  # what a kernel takes before its inputs


def _dereferencing(fn: Callable[..., Any], skip: int,
                   positions: list[int]) -> Callable[..., Any]:
    """Wrap a kernel (whose inputs follow `skip` other arguments) so the inputs at `positions`
    get the variable's value, not its ref."""

    def wrapped(*args: Any) -> Any:
        args = list(args)
        for p in positions:
            args[skip + p] = deref(args[skip + p])
        return fn(*args)

    return wrapped


def missing_kernel_error(name: str, op: str, device: Device, kernels: Any,
                         dtype: Any) -> errors.NotFoundError:
    others = kernels.device_types_for(op)
    have = ", ".join(others) if others else "none"
    dt = f" with dtype {dtype.name}" if dtype is not None else ""
    return errors.NotFoundError(
        name, op,
        f"No kernel for op {op} on device type {device.device_type}{dt} (node '{name}', device "
        f"{device.name}). Device types with a kernel for {op}: {have}."
    )


def _plan_frees(nodes: list[NodeItem], order: list[int]) -> None:
    """Record on each node the slots whose last reader it is, so a straight-line run drops
    every tensor as soon as nothing needs it (TF frees a tensor when its last consumer ran)."""
    last: dict[int, int] = {}
    for i in order:
        for s in nodes[i].inputs:
            last[s] = i
        for k in range(nodes[i].num_outputs):
            last.setdefault(nodes[i].out_base + k, i)  # an output nobody reads dies at once
    for slot, i in sorted(last.items()):
        nodes[i].frees.append(slot)


def _topological_order(nodes: list[NodeItem], pending: list[int]) -> list[int]:
    counts = list(pending)
    ready = deque(i for i, c in enumerate(counts) if c == 0)
    order = []
    while ready:
        i = ready.popleft()
        order.append(i)
        for s in nodes[i].successors:
            counts[s] -= 1
            if counts[s] == 0:
                ready.append(s)
    if len(order) != len(nodes):
        stuck = [nodes[i].name for i, c in enumerate(counts) if c > 0][:5]
        raise errors.InvalidArgumentError(None, None, f"Graph has a cycle through {stuck}")
    return order


def _expensive_nodes_can_overlap(nodes: list[NodeItem], order: list[int]) -> bool:
    """True if two expensive nodes exist with neither an ancestor of the other."""
    expensive = [i for i in order if nodes[i].expensive]
    if len(expensive) < 2:
        return False
    if len(nodes) > _MAX_OVERLAP_CHECK:
        return True
    bit = {n: 1 << k for k, n in enumerate(expensive)}
    ancestors = [0] * len(nodes)  # bitset of the expensive nodes upstream of each node
    for i in order:
        mine = ancestors[i] | bit.get(i, 0)
        for s in nodes[i].successors:
            ancestors[s] |= mine
    # In topological order only earlier expensive nodes can be ancestors of the k-th one; it can
    # overlap with any of them that is not.
    return any(ancestors[n] != (1 << k) - 1 for k, n in enumerate(expensive))


class Executor:
    """Runs an `ExecutorPlan` for any number of steps, possibly concurrently."""

    def __init__(self, plan: ExecutorPlan, pool: ThreadPool | None,
                 compile_after: int | None = COMPILE_AFTER, function: bool = False) -> None:
        self.plan = plan
        self.pool = pool
        self.function = function  # the plan of a function: see `call`
        self._compiled: CompiledPlan | None = None
        self._straight_runs = 0
        self._compile_after = compile_after
        if compile_after is None or len(plan.nodes) > MAX_COMPILED_NODES:
            self._compile_after = None

    def run_async(self, step: StepContext, done: Callable[[BaseException | None], None]) -> None:
        if not self.plan.straight_line:
            _Run(self, step, done).start()
            return
        done(self.run_straight_line(step))

    def run_straight_line(self, step: StepContext) -> BaseException | None:
        """Run a straight-line plan's step to its end on this thread (what `run_async` does
        before calling back); the step's error, or None."""
        token = float_errors.silence()
        try:
            if step.stats is None and self._compile_ready():
                return self._run_compiled(step)
            return self._run_straight(step)
        finally:
            float_errors.restore(token)

    def _compile_ready(self) -> bool:
        """Compile the plan once it has run a few times, so one-off steps never pay for it."""
        if self._compiled is not None:
            return True
        if self._compile_after is None:
            return False
        self._straight_runs += 1
        if self._straight_runs <= self._compile_after:
            return False
        self._compiled = compile_plan(self.plan, self.function)
        return True

    def call(self, step: StepContext, args: list[Any]) -> list[Any]:
        """Run a straight-line function plan (``function=True``) on `args` in `step` and return
        its results in index order; raise the step's error (its rendezvous aborted). `step`'s
        args and retvals are replaced, so one context serves a loop's every call. Once compiled
        it runs in the caller's floating-point state: a function's caller is a kernel, which its
        partition runs silenced."""
        step.args = args
        if step.stats is None and self._compile_ready():
            try:
                return self._compiled.run(step)
            except BaseException as exc:  # noqa: BLE001 - every kernel failure fails the step
                error = self._compiled_error(exc)
            step.rendezvous.start_abort(error)
            raise error
        step.retvals = {}
        token = float_errors.silence()
        try:
            failed = self._run_straight(step)
        finally:
            float_errors.restore(token)
        if failed is not None:
            raise failed
        retvals = step.retvals
        return [retvals[i] for i in range(len(retvals))]

    def _compiled_error(self, exc: BaseException) -> errors.OpError:
        compiled = self._compiled
        i = compiled.failed_node(exc.__traceback__)
        if i is None:
            return node_error(exc, "?", "?", self.plan.device.name)
        return self._located(exc, self.plan.nodes[i], compiled.slot_values(exc.__traceback__))

    def _run_compiled(self, step: StepContext) -> BaseException | None:
        try:
            results = self._compiled.run(step)
        except BaseException as exc:  # noqa: BLE001 - every kernel failure fails the step
            error = self._compiled_error(exc)
            step.rendezvous.start_abort(error)
            return error
        if self.function:
            step.retvals = results
        return None

    def _run_straight(self, step: StepContext) -> BaseException | None:
        if step.stats is None:
            return self._run_records(step)
        return self._run_traced(step)

    def _seed_slots(self) -> list[Any]:
        """The slots a step starts from: every Const's value in place (computed once; its
        kernel returns the same array each step)."""
        plan = self.plan
        if plan.seed_slots is None:
            seeded: list[Any] = [None] * plan.num_slots
            for i in plan.consts:
                item = plan.nodes[i]
                try:
                    seeded[item.out_base] = item.fn(item.ctx)
                except BaseException as exc:  # noqa: BLE001 - the step fails at that node
                    raise node_error(exc, item.name, item.op, plan.device.name) from None
            plan.seed_slots = seeded
        return plan.seed_slots

    def _run_records(self, step: StepContext) -> BaseException | None:
        """The straight-line loop over the plan's records, untraced."""
        nodes = self.plan.nodes
        i = None
        try:
            slots = [*self._seed_slots(), None]  # the records' spare slot last
            for kind, fn, a, b, out, free1, free2, i in self.plan.records:
                if kind == BINARY:
                    slots[out] = fn(slots[a], slots[b])
                elif kind == UNARY:
                    slots[out] = fn(slots[a])
                else:
                    item = nodes[i]
                    args = [slots[s] for s in item.inputs]
                    value = item.fn(item.ctx, *args) if item.mode == SYNC \
                        else item.fn(item.ctx, step, *args)
                    n = item.num_outputs
                    if n == 1:
                        slots[item.out_base] = value
                    elif n:
                        slots[item.out_base:item.out_base + n] = value
                    for s in item.frees:
                        slots[s] = None
                    continue
                slots[free1] = None
                slots[free2] = None
        except BaseException as exc:  # noqa: BLE001 - every kernel failure fails the step
            error = exc if i is None else self._located(exc, nodes[i], slots)
            step.rendezvous.start_abort(error)
            return error
        return None

    def _located(self, exc: BaseException, item: NodeItem,
                 slots: list[Any] | dict[int, Any]) -> errors.OpError:
        """The step's error for node `item` failing with `exc`; a bound form's failure is the
        kernel's own, so the kernel runs again on the same inputs to raise it."""
        if item.direct is not None:
            try:
                item.fn(item.ctx, *[slots[s] for s in item.inputs])
            except BaseException as kernel_exc:  # noqa: BLE001 - the kernel's own error
                exc = kernel_exc
        return node_error(exc, item.name, item.op, self.plan.device.name)

    def _run_traced(self, step: StepContext) -> BaseException | None:
        nodes = self.plan.nodes
        slots: list[Any] = [None] * self.plan.num_slots
        stats = step.stats
        for i in self.plan.order:
            item = nodes[i]
            args = [slots[s] for s in item.inputs]
            start = time.time() if stats is not None else 0.0
            try:
                if item.mode == SYNC:
                    out = item.fn(item.ctx, *args)
                else:
                    out = item.fn(item.ctx, step, *args)
            except BaseException as exc:  # noqa: BLE001 - every kernel failure fails the step
                error = node_error(exc, item.name, item.op, self.plan.device.name)
                step.rendezvous.start_abort(error)
                return error
            if stats is not None:
                _record(stats, item, start)
            n = item.num_outputs
            if n == 1:
                slots[item.out_base] = out
            elif n:
                slots[item.out_base:item.out_base + n] = out
            for s in item.frees:
                slots[s] = None
        return None


def _record(stats: list[NodeStats], item: NodeItem, start: float) -> None:
    end = time.time()
    stats.append(NodeStats(item.name, item.op, int(start * 1e6), int((end - start) * 1e6),
                           threading.get_ident(), item.label))


class _Run:
    """The state of one step of one executor in the general (parallel/async) path."""

    def __init__(self, executor: Executor, step: StepContext,
                 done: Callable[[BaseException | None], None]) -> None:
        plan = executor.plan
        self.plan = plan
        self.pool = executor.pool
        self.step = step
        self.done = done
        self.pending = list(plan.pending)
        self.readers = list(plan.readers)
        self.slots: list[Any] = [None] * plan.num_slots
        self.lock = threading.Lock()
        self.inflight = len(plan.roots)
        self.error: BaseException | None = None

    def start(self) -> None:
        if not self.plan.roots:
            self.done(None)
            return
        self._process(deque(self.plan.roots))

    def _process(self, ready: deque[int]) -> None:
        """Run ready nodes inline until none is left; hands expensive ones to the pool."""
        token = float_errors.silence()  # per thread, as in the straight-line path
        try:
            self._process_ready(ready)
        finally:
            float_errors.restore(token)

    def _process_ready(self, ready: deque[int]) -> None:
        nodes = self.plan.nodes
        while ready:
            i = ready.popleft()
            item = nodes[i]
            if item.expensive and ready and self.pool is not None:
                self.pool.submit(self._process, deque([i]))
                continue
            if self.error is not None:
                self._finish_node(None)
                continue
            args = [self.slots[s] for s in item.inputs]
            if item.mode == ASYNC:
                self._start_async(item, i, args)
                continue
            start = time.time() if self.step.stats is not None else 0.0
            try:
                out = item.fn(item.ctx, *args) if item.mode == SYNC \
                    else item.fn(item.ctx, self.step, *args)
            except BaseException as exc:  # noqa: BLE001
                self._fail(exc, item)
                self._finish_node(None)
                continue
            if self.step.stats is not None:
                _record(self.step.stats, item, start)
            self._store(item, out)
            self._finish_node(i, ready)

    def _start_async(self, item: NodeItem, i: int, args: list[Any]) -> None:
        start = time.time() if self.step.stats is not None else 0.0

        def callback(result: Any) -> None:
            if isinstance(result, BaseException):
                self._fail(result, item)
                self._finish_node(None)
                return
            if self.step.stats is not None:
                _record(self.step.stats, item, start)
            self._store(item, result)
            more: deque[int] = deque()
            self._finish_node(i, more)
            if more:
                self._process(more)

        try:
            item.fn(item.ctx, self.step, callback, *args)
        except BaseException as exc:  # noqa: BLE001
            self._fail(exc, item)
            self._finish_node(None)

    def _store(self, item: NodeItem, out: Any) -> None:
        n = item.num_outputs
        if n == 1:
            self.slots[item.out_base] = out
        elif n:
            self.slots[item.out_base:item.out_base + n] = out

    def _fail(self, exc: BaseException, item: NodeItem) -> None:
        error = node_error(exc, item.name, item.op, self.plan.device.name)
        with self.lock:
            first = self.error is None
            if first:
                self.error = error
        if first:
            self.step.rendezvous.start_abort(error)

    def _finish_node(self, i: int | None, ready: deque[int] | None = None) -> None:
        """Account for one finished node; queue its newly ready successors onto `ready`."""
        nodes = self.plan.nodes
        with self.lock:
            if i is not None and self.error is None:
                item = nodes[i]
                for s in item.successors:
                    self.pending[s] -= 1
                    if self.pending[s] == 0:
                        self.inflight += 1
                        ready.append(s)
                # drop what nothing will read any more (TF frees a tensor after its last
                # consumer): a variable's value read here can then be updated in place
                for slot in item.inputs:
                    self.readers[slot] -= 1
                    if not self.readers[slot]:
                        self.slots[slot] = None
                for slot in range(item.out_base, item.out_base + item.num_outputs):
                    if not self.readers[slot]:
                        self.slots[slot] = None
            self.inflight -= 1
            finished = self.inflight == 0
        if finished:
            self.done(self.error)
