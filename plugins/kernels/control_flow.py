"""Kernels of the functional control-flow ops: ``If``/``Case``/``While`` (and their
``Stateless`` variants) run their function attrs on their own device, inside the same step.

Contract: a function runs as a nested partition: its `FunctionDef` is compiled once per node
(kept in ``ctx.state``, rebuilt only when the node's function changes) into an `ExecutorPlan`
on the node's device, after the passes a partition gets once partitioned (``post_partition``:
fusion), whose nodes are named ``<node>/<attr>/<inner node>``
(``<node>/<attr>/<i>/<inner node>`` for item i of a list attr: ``Case``'s ``branches``) so that
stateful inner kernels keep their own state. Each call runs it on the calling thread with a
`StepContext` of the same step (same step id and rendezvous: variables and every step-scoped
resource are the outer step's), the arguments as its ``_Arg`` values, and returns when the
function has finished (an inner kernel that waits, such as a dequeue, holds the caller until it
is satisfied or the step aborts); a loop resolves its cond and body once and calls both with
one such context (`Executor.call`: once compiled, no kernel call per argument or result). An
error inside names the inner node, its op and the device.
``If``, ``Case`` and ``While`` are async kernels (they call back once the function returns, on
the calling thread), so their partitions run under the step's deadline, which releases a wait
inside; ``While`` checks the step's rendezvous between iterations, so an aborted step
(deadline, a peer's failure) stops a loop that would never end.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

import attrs

from tensorweave.engine import errors
from tensorweave.engine.graph.func_graph import RETVAL_OP, FunctionDef
from tensorweave.engine.graph.graph_def import GraphDef, parse_input, tensor_input
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.executor import Executor, ExecutorPlan, StepContext
from tensorweave.engine.runtime.passes import PassContext, run_phase
from tensorweave.engine.runtime.variables_store import deref


def _renamed(fn: FunctionDef, prefix: str, device: str) -> GraphDef:
    def rename(text: str) -> str:
        src, index = parse_input(text)
        return tensor_input(f"{prefix}/{src}", index)

    return GraphDef(node=[n.copy(name=f"{prefix}/{n.name}", input=[rename(t) for t in n.input],
                                 device=device) for n in fn.nodes])


_STEP_IO = frozenset({"_Send", "_Recv", "_Retval"})  # a partition's own, never a function's


def _function(ctx: KernelContext, attr: str) -> FunctionDef:
    """The function attr `attr`, or item i of a list attr for ``<attr>/<i>``."""
    name, _, index = attr.partition("/")
    fn = ctx.attrs[name]
    return fn[int(index)] if index else fn


@attrs.frozen
class _Callable:
    """One function attr of one node, compiled for calls on the node's device."""

    fn: FunctionDef
    executor: Executor

    def __call__(self, inner: StepContext, args: list[Any]) -> list[Any]:
        """The function's results on `args`, run in `inner` (a context of the caller's step,
        reused across calls); raises the error of the node that failed."""
        executor = self.executor
        if executor.plan.straight_line:  # (a loop body's usual case: no wait, no event to set)
            return executor.call(inner, args)
        inner.args, inner.retvals = args, {}
        error = _run_and_wait(executor, inner)
        if error is not None:
            raise error
        return [inner.retvals[i] for i in range(len(inner.retvals))]


def _callable(ctx: KernelContext, attr: str) -> _Callable:
    fn = _function(ctx, attr)
    cached = ctx.state.get(attr)
    if cached is None or cached.fn is not fn:
        foreign = sorted({n.op for n in fn.nodes} & _STEP_IO)
        if foreign:
            raise errors.InvalidArgumentError(
                ctx.node_name, ctx.op, f"Function {fn.name} ({attr}) of node {ctx.node_name} "
                f"holds {foreign} nodes; a function runs within one device and one call")
        registries = get_registries()
        graph_def = _renamed(fn, f"{ctx.node_name}/{attr}", ctx.device.name)
        # A function's nodes get the passes a partition gets after partitioning (fusion): its
        # plan is the partition it runs as, and its `_Arg`s and retvals are its feeds and fetches.
        keep = frozenset(n.name for n in graph_def.node if n.op in ("_Arg", RETVAL_OP))
        graph_def, _ = run_phase(graph_def, registries.passes, "post_partition",
                                 PassContext(registries, keep))
        plan = ExecutorPlan.build(graph_def, ctx.device, registries, parallel=False)
        cached = ctx.state[attr] = _Callable(fn, Executor(plan, None, function=True))
    return cached


# A nested function call runs inside its caller's kernel, about ten Python frames a level:
# Python's default limit of 1000 would stop conditionals nested about 100 deep, where TF has no
# limit. Python-to-Python calls take no C stack from CPython 3.11 on, so there a higher limit
# cannot overflow a thread's stack (on 3.10 the default stays).
NESTED_CALL_RECURSION_LIMIT = 10_000
if sys.version_info >= (3, 11) and sys.getrecursionlimit() < NESTED_CALL_RECURSION_LIMIT:
    sys.setrecursionlimit(NESTED_CALL_RECURSION_LIMIT)


def call_function(ctx: KernelContext, step: Any, attr: str, args: list[Any]) -> list[Any]:
    """Run the function attr `attr` of the node (``<attr>/<i>``: item i of a list attr) on
    `args` in `step`; its results."""
    return _callable(ctx, attr)(_inner(step), args)


def _inner(step: Any) -> StepContext:
    """A context for function calls within `step`: the same step id, rendezvous, stats and
    copies (variables and every step-scoped resource are the outer step's)."""
    return StepContext(step.step_id, step.rendezvous, [], {}, step.stats, step.copy_tensor)


def _run_and_wait(executor: Executor, inner: StepContext) -> BaseException | None:
    """Run a function with async kernels; wait for it to finish."""
    outcome: list[BaseException | None] = []
    finished = threading.Event()

    def done(error: BaseException | None) -> None:
        outcome.append(error)
        finished.set()

    executor.run_async(inner, done)
    # Nodes run inline, so the call has usually finished here. An async kernel that waits (a
    # dequeue from an empty queue) finishes it from the thread that satisfies it, or with the
    # step's error when the step aborts (deadline, a peer's failure, the session closing).
    finished.wait()
    return outcome[0]


def _truthy(value: Any) -> bool:
    """TF's reading of a tensor as a condition: a scalar's value, else whether it has
    elements."""
    return bool(value) if value.ndim == 0 else value.size > 0


def _results(values: list[Any]) -> Any:
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def _finish(done: Callable[[Any], None], compute: Callable[[], Any]) -> None:
    """Report what `compute` returns, or its error, to `done`."""
    try:
        result = compute()
    except Exception as exc:  # noqa: BLE001 - reported as the node's error
        done(exc)
        return
    done(result)


def if_kernel(ctx: KernelContext, step: Any, done: Callable[[Any], None], pred: Any,
              *inputs: Any) -> None:
    attr = "then_branch" if _truthy(pred) else "else_branch"
    _finish(done, lambda: _results(call_function(ctx, step, attr, list(inputs))))


def case_kernel(ctx: KernelContext, step: Any, done: Callable[[Any], None], branch_index: Any,
                *inputs: Any) -> None:
    def run() -> Any:
        if branch_index.ndim != 0:
            raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                              "branch_index must be scalar")
        count = len(ctx.attrs["branches"])
        index = int(branch_index)
        if not 0 <= index < count:  # out of range: the last branch, the default
            index = count - 1
        return _results(call_function(ctx, step, f"branches/{index}", list(inputs)))

    _finish(done, run)


def _loop(ctx: KernelContext, step: Any, values: list[Any]) -> Any:
    # cond and body resolved once per loop, and one context for all their calls
    cond, body, inner = _callable(ctx, "cond"), _callable(ctx, "body"), _inner(step)
    rendezvous = step.rendezvous
    iterations = 0
    while True:
        (go,) = cond(inner, values)
        if not _truthy(go):
            return _results(values)
        status = rendezvous.status
        if status is not None:  # the step's own error type (a deadline stays a deadline)
            kind = type(status) if isinstance(status, errors.OpError) else errors.CancelledError
            raise kind(ctx.node_name, ctx.op, f"Loop {ctx.node_name} stopped after "
                       f"{iterations} iterations: {getattr(status, 'message', status)}")
        values = body(inner, values)
        iterations += 1


def while_kernel(ctx: KernelContext, step: Any, done: Callable[[Any], None],
                 *inputs: Any) -> None:
    _finish(done, lambda: _loop(ctx, step, list(inputs)))


def function_retval(ctx: KernelContext, step: Any, value: Any) -> None:
    step.retvals[ctx.attrs["index"]] = deref(value)  # a function returns values, never refs


def register(registry: Any, device_type: str) -> None:
    for name in ("If", "StatelessIf"):
        registry.add(name, device_type, if_kernel, needs_step=True, is_async=True)
    for name in ("Case", "StatelessCase"):
        registry.add(name, device_type, case_kernel, needs_step=True, is_async=True)
    for name in ("While", "StatelessWhile"):
        registry.add(name, device_type, while_kernel, needs_step=True, is_async=True)
    registry.add(RETVAL_OP, device_type, function_retval, needs_step=True)
