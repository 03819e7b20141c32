"""Straight-line Python for a partition: the fast path of the executor.

Contract: `compile_plan(plan)` turns a plan that runs in one topological order (no async kernel,
nothing to overlap) into one generated Python function ``run(step)`` that calls each node's
kernel in order, keeps tensors in local variables and deletes each one after its last use;
Consts whose values the plan has already computed (`ExecutorPlan.seed_slots`) are read from the
function's globals instead of being run; a node whose kernel has a bound form
(`kernel.bound`) calls that; an input that is a variable's ref where the kernel wants its
value is read in the line itself. The results are exactly those of the interpreted loop; only the
bookkeeping between kernels goes away. When a kernel raises, `failed_node` maps the traceback
back to the node and `slot_values` gives the tensors that were alive.

The plan of a function (``function=True``) calls neither ``_Arg`` nor ``_FunctionRetval``
kernels: each ``_Arg`` is ``step.args[index]`` and ``run(step)`` returns the results as a list in
index order (a variable's ref read, as the retval kernel does), where a loop would otherwise pay
one kernel call per loop variable and iteration in each of its cond and body.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

import attrs

from tensorweave.engine.graph.func_graph import RETVAL_OP
from tensorweave.engine.runtime.variables_store import VariableRef

if TYPE_CHECKING:
    from tensorweave.engine.runtime.executor import ExecutorPlan

# Larger partitions stay interpreted: compiling costs some 25 us a node once and saves under
# 0.1 us a node per step over the interpreted records, so a 7.5k-node plan's compile (0.2 s)
# would stall its third step for what 2000 steps give back.
MAX_NODES = 4096


@attrs.frozen
class CompiledPlan:
    """A generated ``run(step)`` and the map from its source lines to plan nodes."""

    run: Callable[[Any], None]
    line_to_node: dict[int, int]

    def _frame(self, tb: TracebackType | None) -> TracebackType | None:
        """The traceback entry of the generated run's frame."""
        code = self.run.__code__
        found = None
        while tb is not None:
            if tb.tb_frame.f_code is code:
                found = tb
            tb = tb.tb_next
        return found

    def failed_node(self, tb: TracebackType | None) -> int | None:
        """The index of the node whose kernel raised, from the exception's traceback."""
        entry = self._frame(tb)
        return None if entry is None else self.line_to_node.get(entry.tb_lineno)

    def slot_values(self, tb: TracebackType | None) -> dict[int, Any]:
        """Slot -> tensor, of the slots alive (or seeded) when the run raised."""
        entry = self._frame(tb)
        names = {**self.run.__globals__, **(entry.tb_frame.f_locals if entry else {})}
        return {int(name[1:]): value for name, value in names.items()
                if name[:1] in "kv" and name[1:].isdigit()}


def compile_plan(plan: ExecutorPlan, function: bool = False) -> CompiledPlan:
    from tensorweave.engine.runtime.executor import STEP, SYNC

    namespace: dict[str, Any] = {}
    lines = ["def run(step):"]
    if function:
        lines.append("    args = step.args")
    results: dict[int, str] = {}
    line_to_node: dict[int, int] = {}
    seeds = plan.seed_slots
    skipped = set(plan.consts) if seeds is not None else set()
    seeded = {plan.nodes[i].out_base for i in skipped}
    for slot in seeded:
        namespace[f"k{slot}"] = seeds[slot]

    def name(slot: int) -> str:
        return f"k{slot}" if slot in seeded else f"v{slot}"

    def value_of(slot: int) -> str:  # a ref input's value, without a call when it is none
        return f"({name(slot)}.read() if type({name(slot)}) is VariableRef else {name(slot)})"

    namespace["VariableRef"] = VariableRef
    for i in plan.order:
        item = plan.nodes[i]
        if item.mode not in (SYNC, STEP):
            raise ValueError(f"node {item.name} is asynchronous; it cannot run straight-line")
        if i in skipped:
            continue
        if function and item.op == "_Arg":
            lines.append(f"    v{item.out_base} = args[{item.ctx.attrs['index']}]")
        elif function and item.op == RETVAL_OP:
            index = item.ctx.attrs["index"]
            results[index] = f"r{index}"
            lines.append(f"    r{index} = {value_of(item.inputs[0])}")
        else:
            lines.append(_call_line(namespace, i, item, name, value_of, STEP))
        line_to_node[len(lines)] = i
        frees = [f"v{s}" for s in item.frees if s not in seeded]
        if frees:
            lines.append(f"    del {', '.join(frees)}")
    if function:
        lines.append(f"    return [{', '.join(results[k] for k in range(len(results)))}]")
    elif len(lines) == 1:
        lines.append("    pass")
    exec(compile("\n".join(lines), f"<tensorweave plan {plan.device.name}>", "exec"), namespace)
    return CompiledPlan(namespace["run"], line_to_node)


def _call_line(namespace: dict[str, Any], i: int, item: Any, name: Callable[[int], str],
               value_of: Callable[[int], str], step_mode: int) -> str:
    """The line that calls node `i`'s kernel (its kernel and context added to `namespace`)."""
    if item.kernel_direct is not None:
        namespace[f"f{i}"] = item.kernel_direct
        args = ["step"] if item.mode == step_mode else []
    else:
        namespace[f"f{i}"] = item.kernel
        namespace[f"c{i}"] = item.ctx
        args = [f"c{i}"] + (["step"] if item.mode == step_mode else [])
    args += [value_of(s) if k in item.derefs else name(s) for k, s in enumerate(item.inputs)]
    outputs = [f"v{item.out_base + k}" for k in range(item.num_outputs)]
    target = f"{', '.join(outputs)} = " if outputs else ""
    return f"    {target}f{i}({', '.join(args)})"
