"""Kernels of the device-side utility ops: ``CheckNumerics`` (TF's error text: ``<message> :
Tensor had NaN values``, ``Inf`` or ``Inf and NaN``), ``IdentityN`` and ``GuaranteeConst``."""

from __future__ import annotations

from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext


def check_numerics(ctx: KernelContext, tensor: Any) -> Any:
    xp = ctx.xp
    has_nan = bool(xp.isnan(tensor).any())
    has_inf = bool(xp.isinf(tensor).any())
    if has_nan or has_inf:
        what = "Inf and NaN" if has_nan and has_inf else "NaN" if has_nan else "Inf"
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"{ctx.attrs['message']} : Tensor had {what} values")
    return tensor


def identity_n(ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
    return inputs


def identity(ctx: KernelContext, x: Any) -> Any:
    return x


def register(registry: Any, device_type: str) -> None:
    registry.add("CheckNumerics", device_type, check_numerics)
    registry.add("IdentityN", device_type, identity_n)
    registry.add("GuaranteeConst", device_type, identity)
