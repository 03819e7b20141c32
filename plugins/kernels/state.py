"""Kernels for constants, placeholders, identity and variables.

Contract: `Assign` (with ``validate_shape``) of an initialized variable, `AssignAdd` and
`AssignSub` take a value of exactly the variable's shape, as TF's kernels do; any other shape
raises `InvalidArgumentError` naming the node, and the variable is left unchanged (numpy would
broadcast it and change the variable's shape).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.runtime.variables_store import VariableRef
from tensorweave.engine.tensor_shape import format_dims
from tensorweave.plugins.kernels.array import _fmt
from tensorweave.plugins.kernels.resources import get_or_create


def const(ctx: KernelContext) -> Any:
    value = ctx.state.get("value")
    if value is None:
        value = ctx.state["value"] = ctx.device.from_host(ctx.attrs["value"])
    return value


def placeholder(ctx: KernelContext) -> Any:
    raise errors.InvalidArgumentError(
        ctx.node_name, ctx.op,
        f"You must feed a value for placeholder tensor '{ctx.node_name}' with dtype "
        f"{ctx.attrs['dtype'].name} and shape {format_dims(ctx.output_shapes[0])}")


def identity(ctx: KernelContext, x: Any) -> Any:
    return x


def no_op(ctx: KernelContext) -> None:
    return None


def variable(ctx: KernelContext) -> VariableRef:
    ref = ctx.state.get("ref")
    key = ctx.attrs.get("shared_name") or ctx.node_name
    if ref is None or ref.name != key:  # (the state is the node name's, across graphs)
        ref = ctx.state["ref"] = get_or_create(ctx, key, lambda: VariableRef(key))
    return ref


def _bind_variable(ctx: KernelContext, input_dtypes: list[Any]) -> Callable[[], VariableRef]:
    """`variable` with the node's key and state found once."""
    state, key = ctx.state, ctx.attrs.get("shared_name") or ctx.node_name

    def ref_of() -> VariableRef:
        ref = state.get("ref")
        if ref is None or ref.name != key:
            ref = state["ref"] = get_or_create(ctx, key, lambda: VariableRef(key))
        return ref

    return ref_of


variable.bind = _bind_variable  # type: ignore[attr-defined]


def is_initialized(ctx: KernelContext, ref: VariableRef) -> Any:
    return ctx.xp.asarray(ref.value is not None)


def _check_shape(ctx: KernelContext, ref: VariableRef, value: Any) -> None:
    old = ref.value
    if old is not None and old.shape != value.shape:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op,
            f"Assign requires shapes of both tensors to match. lhs shape= {list(old.shape)} "
            f"rhs shape= {list(value.shape)}")


def assign(ctx: KernelContext, ref: VariableRef, value: Any) -> Any:
    if ctx.attrs.get("validate_shape", True):
        _check_shape(ctx, ref, value)
    with ref.lock:
        return ref.store(value)


def _check_update(ctx: KernelContext, old: Any, value: Any) -> None:
    if old.shape != value.shape:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op,
            f"Parameters and update must be the same size (shapes must be equal): variable "
            f"shape {_fmt(old.shape)}, update shape {_fmt(value.shape)}")


def assign_add(ctx: KernelContext, ref: VariableRef, value: Any) -> Any:
    with ref.lock:
        old = ref.read()
        _check_update(ctx, old, value)
        return ref.store(ctx.xp.add(old, value, dtype=old.dtype))


def assign_sub(ctx: KernelContext, ref: VariableRef, value: Any) -> Any:
    with ref.lock:
        old = ref.read()
        _check_update(ctx, old, value)
        return ref.store(ctx.xp.subtract(old, value, dtype=old.dtype))


def register(registry: Any, device_type: str) -> None:
    registry.add("Const", device_type, const)
    registry.add("Placeholder", device_type, placeholder)
    for name in ("Identity", "StopGradient", "PlaceholderWithDefault"):
        registry.add(name, device_type, identity)
    registry.add("NoOp", device_type, no_op)
    registry.add("VariableV2", device_type, variable)
    registry.add("IsVariableInitialized", device_type, is_initialized)
    registry.add("Assign", device_type, assign)
    registry.add("AssignAdd", device_type, assign_add)
    registry.add("AssignSub", device_type, assign_sub)
