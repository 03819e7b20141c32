"""Kernels of the resource variable ops.

Contract: a handle's value is the `ResourceVar` itself, a `VariableRef` held in its device's
resource store under ``var:<shared_name>`` (the node name when the shared name is empty), so
it never collides with a ref variable of the same name. ``VarHandleOp`` makes it on its first
run, empty: ``VarIsInitializedOp`` then says False and a read raises `FailedPreconditionError`;
``AssignVariableOp`` gives it its value (any shape, unless ``validate_shape``);
``DestroyResourceOp`` removes it (`NotFoundError` when it is gone, unless
``ignore_lookup_error``). Every op checks that its ``dtype`` is the variable's
(`InvalidArgumentError`). The updates are the ref variables' kernels (`state`, `scatter`,
`training`) run on the handle's `ResourceVar`, so their formulas, locking and in-place rules are
those; they output nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.runtime.variables_store import VariableRef
from tensorweave.plugins.kernels import scatter, state, training
from tensorweave.plugins.kernels.array import gather_v2
from tensorweave.plugins.kernels.resources import get_or_create
from tensorweave.plugins.standard_ops.training import SPARSE_UPDATES, UPDATES


class ResourceVar(VariableRef):
    """A resource variable's slot on a device: a `VariableRef` that knows its dtype."""

    __slots__ = ("dtype", "key")

    def __init__(self, name: str, dtype: dtypes.DType, key: str) -> None:
        super().__init__(name)
        self.dtype, self.key = dtype, key

    def read(self) -> Any:
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                None, None, f"Error while reading resource variable {self.name}. This could "
                f"mean that the variable was uninitialized.")
        return value


def _check(ctx: KernelContext, var: Any, dtype: Any) -> ResourceVar:
    if not isinstance(var, ResourceVar):
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                          f"Input 0 is not a resource variable handle: {var!r}")
    if dtype is not None and var.dtype != dtype:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"Trying to access variable {var.name} of dtype "
            f"{var.dtype.name} as {dtypes.as_dtype(dtype).name}")
    return var


def _as_ref_op(ctx: KernelContext, dtype: dtypes.DType) -> KernelContext:
    """`ctx` as the ref variables' kernels expect it: output 0 of the variable's dtype."""
    cached = ctx.state.get("ref_ctx")
    if cached is None or cached[0] is not ctx:
        cached = ctx.state["ref_ctx"] = (ctx, attrs.evolve(ctx, output_dtypes=[dtype]))
    return cached[1]


def var_handle(ctx: KernelContext) -> ResourceVar:
    name = ctx.attrs["shared_name"] or ctx.node_name
    key = f"var:{name}"
    cached = ctx.state.get("var")
    if cached is not None and cached.key == key and ctx.device.resources.get(key) is cached:
        var = cached
    else:
        var = get_or_create(ctx, key, lambda: ResourceVar(name, ctx.attrs["dtype"], key))
        ctx.state["var"] = var
    return _check(ctx, var, ctx.attrs["dtype"])


def read(ctx: KernelContext, var: Any) -> Any:
    return _check(ctx, var, ctx.attrs["dtype"]).read()


def assign(ctx: KernelContext, var: Any, value: Any) -> None:
    var = _check(ctx, var, ctx.attrs["dtype"])
    if ctx.attrs.get("validate_shape", False):
        state._check_shape(ctx, var, value)
    with var.lock:
        var.store(value)


def _assign_with(update: Callable[..., Any]) -> Callable[..., None]:
    def kernel(ctx: KernelContext, var: Any, value: Any) -> None:
        update(ctx, _check(ctx, var, ctx.attrs["dtype"]), value)

    kernel.__name__ = f"resource_{update.__name__}"
    return kernel


def is_initialized(ctx: KernelContext, var: Any) -> Any:
    return state.is_initialized(ctx, _check(ctx, var, None))


def variable_shape(ctx: KernelContext, var: Any) -> Any:
    shape = _check(ctx, var, None).read().shape
    return ctx.xp.asarray(shape, dtype=ctx.attrs["out_type"].np_type)


def gather(ctx: KernelContext, var: Any, indices: Any) -> Any:
    params = _check(ctx, var, ctx.attrs["dtype"]).read()
    return gather_v2(ctx, params, indices, np.int32(0))


def _scatter_with(kernel: Callable[..., Any]) -> Callable[..., None]:
    def resource_kernel(ctx: KernelContext, var: Any, indices: Any, updates: Any) -> None:
        var = _check(ctx, var, ctx.attrs["dtype"])
        kernel(_as_ref_op(ctx, var.dtype), var, indices, updates)

    resource_kernel.__name__ = f"resource_{kernel.__name__}"
    return resource_kernel


def _scatter_nd_with(kernel: Callable[..., Any]) -> Callable[..., None]:
    def resource_kernel(ctx: KernelContext, var: Any, indices: Any, updates: Any) -> None:
        var = _check(ctx, var, ctx.attrs["T"])
        kernel(_as_ref_op(ctx, var.dtype), var, indices, updates)

    resource_kernel.__name__ = f"resource_{kernel.__name__}"
    return resource_kernel


def _apply_with(kernel: Callable[..., Any], refs: int) -> Callable[..., None]:
    """The fused update `kernel` on the variables behind the first `refs` inputs."""

    def resource_kernel(ctx: KernelContext, *inputs: Any) -> None:
        dtype = ctx.attrs["T"]
        slots = [_check(ctx, v, dtype) for v in inputs[:refs]]
        kernel(_as_ref_op(ctx, dtype), *slots, *inputs[refs:])

    resource_kernel.__name__ = f"resource_{kernel.__name__}"
    return resource_kernel


def destroy(ctx: KernelContext, var: Any) -> None:
    var = _check(ctx, var, None)
    with ctx.device.lock:
        if ctx.device.resources.get(var.key) is var:
            del ctx.device.resources[var.key]
        elif not ctx.attrs.get("ignore_lookup_error", True):
            raise errors.NotFoundError(ctx.node_name, ctx.op,
                                       f"Resource {var.key} does not exist on {ctx.device.name}")


# the ref kernel behind each resource scatter, and the number of handle inputs of each update
_SCATTERS = {"ResourceScatterUpdate": "ScatterUpdate", "ResourceScatterAdd": "ScatterAdd",
             "ResourceScatterSub": "ScatterSub", "ResourceScatterMul": "ScatterMul",
             "ResourceScatterDiv": "ScatterDiv", "ResourceScatterMin": "ScatterMin",
             "ResourceScatterMax": "ScatterMax"}
# every fused update and how many of its leading inputs are variables (the op defs' tables)
_SLOTS = {name: refs for name, (_, refs, _) in {**UPDATES, **SPARSE_UPDATES}.items()}

KERNELS: dict[str, Callable[..., Any]] = {
    "VarHandleOp": var_handle, "ReadVariableOp": read, "AssignVariableOp": assign,
    "AssignAddVariableOp": _assign_with(state.assign_add),
    "AssignSubVariableOp": _assign_with(state.assign_sub),
    "VarIsInitializedOp": is_initialized, "VariableShape": variable_shape,
    "ResourceGather": gather, "DestroyResourceOp": destroy,
    **{name: _scatter_with(scatter.KERNELS[ref]) for name, ref in _SCATTERS.items()},
    **{f"ResourceScatterNd{kind}": _scatter_nd_with(scatter.KERNELS[f"ScatterNd{kind}"])
       for kind in ("Update", "Add", "Sub")},
    **{f"Resource{name}": _apply_with(training.checked_kernel(name), refs)
       for name, refs in _SLOTS.items()},
}


def register(registry: Any, device_type: str) -> None:
    for op, fn in KERNELS.items():
        registry.add(op, device_type, fn)
