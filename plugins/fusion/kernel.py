"""The kernel of ``_FusedElementwise``: one compiled ufunc call for a whole region.

Contract: the node's ``expression`` attr is the region's scalar function (see
`program.scalar_source`), ``Tin`` its inputs' dtypes, ``T`` its result's and ``program`` the
user's nodes it computes. The kernel returns what those nodes return op by op, within float
tolerance, for inputs of any shapes that broadcast, empty and 0-d ones included (a 0-d result
is an array, not a numpy scalar).

A node's first `switches.compile_after()` calls run the region op by op through the registered
kernels of the user's ops, and only a later call compiles it (see `switches`). Any failure of
the compiled call is re-run op by op, so an error is the one the unfused graph raises: it names
the user's node, its op and the device.

The size cutoff, measured (``benchmarks/fusion_cutoff.py``): numba's ufunc loop vectorizes only
when every operand is contiguous and of the result's shape (rows and columns broadcast along an
axis count as such: numpy hands the loop contiguous rows). An operand of one element (a scalar
such as ``x / 2.0``) or a strided view sends it down a scalar loop, where a divide or square root
costs several times numpy's vectorized one: on float32, a region with such an operand whose
divides and square roots (`program.DIVIDING`) are at least a quarter of its steps crossed
numpy's op-by-op time between 4k and 8k elements (0.8-1.4x at 4k) and took 1.7-3x (up to 6x in
other runs) at 1e5, against 0.3-0.95x at 1-2k. Such a call with more than
`STRIDED_MAX_ELEMENTS` elements runs op by op (numpy's loops). With contiguous full-shape
operands the compiled loop took 0.1-0.5x numpy's time at every size and share measured, and
with an eighth of divides or fewer 0.2-0.96x.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from tensorweave.engine.kernel import KernelContext, bound
from tensorweave.engine.runtime.executor import node_error
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.fusion import backend
from tensorweave.plugins.fusion.program import DIVIDING, decode
from tensorweave.plugins.fusion.switches import compile_after

OP = "_FusedElementwise"
# Past this many elements a dividing region's call with a one-element or strided operand runs
# op by op (see the module docstring).
STRIDED_MAX_ELEMENTS = 4096
DIVIDING_SHARE = 0.25  # the share of divides and square roots that makes a region dividing


@attrs.define
class _Unfused:
    """One user node of the region, ready to run through its own kernel: `direct` is the
    kernel's bound form (`engine.kernel.bound`) or the kernel on its context."""

    fn: Callable[..., Any]
    ctx: KernelContext
    direct: Callable[..., Any]
    operands: tuple[int, ...]
    last_uses: tuple[int, ...] = ()  # the values this step reads for the last time


@attrs.define
class _State:
    steps: list[_Unfused]
    calls_left: int
    dividing: bool  # whether strided calls past STRIDED_MAX_ELEMENTS run op by op
    ufunc: np.ufunc | None = None


def _strided(inputs: tuple[Any, ...]) -> bool:
    """Whether a call on `inputs` is large and takes numba's scalar (strided) ufunc loop."""
    return max(a.size for a in inputs) > STRIDED_MAX_ELEMENTS \
        and any(a.size == 1 or not a.flags.c_contiguous for a in inputs)


def _state(ctx: KernelContext, kernels: Any) -> _State:
    state = ctx.state.get("fused")
    if state is not None:
        return state
    program = decode(ctx.attr("program"), len(ctx.attr("Tin")))
    types = list(ctx.attr("Tin")) + [step.dtype for step in program.steps]
    steps = []
    for step in program.steps:
        attrs_ = {"T": step.dtype}
        if step.op == "Cast":
            attrs_ = {"SrcT": types[step.operands[0]], "DstT": step.dtype, "Truncate": False}
        fn = kernels.lookup(step.op, ctx.device.device_type, step.dtype).fn
        unfused_ctx = KernelContext(step.name, step.op, attrs_, ctx.device, ctx.xp,
                                    [step.dtype], [TensorShape(None)])
        direct = bound(fn, unfused_ctx, [types[i] for i in step.operands]) \
            or functools.partial(fn, unfused_ctx)
        steps.append(_Unfused(fn, unfused_ctx, direct, step.operands))
    last_reader = {i: j for j, step in enumerate(steps) for i in step.operands}
    for j, step in enumerate(steps):
        step.last_uses = tuple(i for i in set(step.operands) if last_reader[i] == j)
    dividing = sum(step.op in DIVIDING for step in program.steps) \
        >= DIVIDING_SHARE * len(program.steps)
    state = ctx.state["fused"] = _State(steps, compile_after(), dividing)
    return state


def _op_by_op(ctx: KernelContext, state: _State, inputs: tuple[Any, ...]) -> Any:
    values = list(inputs)
    for step in state.steps:
        args = [values[i] for i in step.operands]
        try:
            value = step.direct(*args)
        except Exception:  # noqa: BLE001 - the kernel itself raises the user's node's error
            try:
                value = step.fn(step.ctx, *args)
            except BaseException as exc:  # noqa: BLE001 - the user's node failed: name it
                raise node_error(exc, step.ctx.node_name, step.ctx.op,
                                 ctx.device.name) from None
        for i in step.last_uses:  # as unfused, an intermediate lives until its last reader
            values[i] = None
        values.append(value)
    return values[-1]


def make_kernel(kernels: Any) -> Callable[..., Any]:
    """The fused kernel, running regions op by op through `kernels` (the kernel registry)."""

    def fused_elementwise(ctx: KernelContext, *inputs: Any) -> Any:
        state = _state(ctx, kernels)
        fn = state.ufunc
        if fn is None and state.calls_left > 0:
            state.calls_left -= 1
            return _op_by_op(ctx, state, inputs)
        if state.dividing and _strided(inputs):  # before compiling: it may never be needed
            return _op_by_op(ctx, state, inputs)
        if fn is None:
            fn = state.ufunc = backend.ufunc(ctx.attr("expression"), ctx.attr("Tin"),
                                             ctx.attr("T"))
        try:
            result = fn(*inputs)
        except Exception:  # noqa: BLE001 - op by op, the failing user node raises its error
            return _op_by_op(ctx, state, inputs)
        return result if isinstance(result, np.ndarray) else np.asarray(result)

    return fused_elementwise
