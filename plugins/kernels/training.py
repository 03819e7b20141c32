"""Kernels of the fused optimizer updates, with TF1's update formulas (``training_ops.cc``).

Each kernel reads the variable and its slots through their refs, stores new arrays (values are
never changed in place, see `tensorweave.runtime.variables_store`) and returns the variable's new
value. With ``use_locking`` the refs' locks are held for the whole update, in input order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from tensorweave import errors
from tensorweave.kernel import KernelContext
from tensorweave.runtime.variables_store import VariableRef


@contextlib.contextmanager
def _locked(ctx: KernelContext, *refs: VariableRef) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        if ctx.attrs.get("use_locking", False):
            for ref in refs:
                stack.enter_context(ref.lock)
        yield


def _read(ctx: KernelContext, var: VariableRef, *others: tuple[str, VariableRef | Any]) -> Any:
    """The variable's value, after checking that each slot or gradient has its shape."""
    value = var.read()
    for name, other in others:
        shape = (other.read() if isinstance(other, VariableRef) else other).shape
        if shape != value.shape:
            raise errors.InvalidArgumentError(
                ctx.node_name, ctx.op,
                f"var and {name} do not have the same shape{list(value.shape)} {list(shape)}")
    return value


def _store(ctx: KernelContext, ref: VariableRef, value: Any) -> Any:
    return ref.store(value.astype(ctx.out_np, copy=False))


def apply_gradient_descent(ctx: KernelContext, var: VariableRef, alpha: Any, delta: Any) -> Any:
    with _locked(ctx, var):
        value = _read(ctx, var, ("delta", delta))
        return _store(ctx, var, value - alpha * delta)


def apply_momentum(ctx: KernelContext, var: VariableRef, accum: VariableRef, lr: Any, grad: Any,
                   momentum: Any) -> Any:
    with _locked(ctx, var, accum):
        value = _read(ctx, var, ("accum", accum), ("grad", grad))
        a = _store(ctx, accum, accum.read() * momentum + grad)
        if ctx.attrs.get("use_nesterov", False):
            return _store(ctx, var, value - (grad * lr + a * momentum * lr))
        return _store(ctx, var, value - lr * a)


def apply_adam(ctx: KernelContext, var: VariableRef, m: VariableRef, v: VariableRef,
               beta1_power: Any, beta2_power: Any, lr: Any, beta1: Any, beta2: Any,
               epsilon: Any, grad: Any) -> Any:
    xp = ctx.xp
    with _locked(ctx, var, m, v):
        value = _read(ctx, var, ("m", m), ("v", v), ("grad", grad))
        lr_t = lr * xp.sqrt(1 - beta2_power) / (1 - beta1_power)
        m_t = _store(ctx, m, m.read() + (grad - m.read()) * (1 - beta1))
        v_t = _store(ctx, v, v.read() + (grad * grad - v.read()) * (1 - beta2))
        if ctx.attrs.get("use_nesterov", False):
            step = (m_t * beta1 + (1 - beta1) * grad) * lr_t / (xp.sqrt(v_t) + epsilon)
        else:
            step = m_t * lr_t / (xp.sqrt(v_t) + epsilon)
        return _store(ctx, var, value - step)


def apply_adagrad(ctx: KernelContext, var: VariableRef, accum: VariableRef, lr: Any,
                  grad: Any) -> Any:
    xp = ctx.xp
    with _locked(ctx, var, accum):
        value = _read(ctx, var, ("accum", accum), ("grad", grad))
        a = accum.read()
        if ctx.attrs.get("update_slots", True):
            a = _store(ctx, accum, a + grad * grad)
        return _store(ctx, var, value - lr * grad / xp.sqrt(a))


def apply_rms_prop(ctx: KernelContext, var: VariableRef, ms: VariableRef, mom: VariableRef,
                   lr: Any, rho: Any, momentum: Any, epsilon: Any, grad: Any) -> Any:
    xp = ctx.xp
    with _locked(ctx, var, ms, mom):
        value = _read(ctx, var, ("ms", ms), ("mom", mom), ("grad", grad))
        ms_t = _store(ctx, ms, ms.read() + (grad * grad - ms.read()) * (1 - rho))
        mom_t = _store(ctx, mom, mom.read() * momentum + lr * grad / xp.sqrt(ms_t + epsilon))
        return _store(ctx, var, value - mom_t)


def apply_centered_rms_prop(ctx: KernelContext, var: VariableRef, mg: VariableRef,
                            ms: VariableRef, mom: VariableRef, lr: Any, rho: Any, momentum: Any,
                            epsilon: Any, grad: Any) -> Any:
    xp = ctx.xp
    with _locked(ctx, var, mg, ms, mom):
        value = _read(ctx, var, ("mg", mg), ("ms", ms), ("mom", mom), ("grad", grad))
        mg_t = _store(ctx, mg, mg.read() + (grad - mg.read()) * (1 - rho))
        ms_t = _store(ctx, ms, ms.read() + (grad * grad - ms.read()) * (1 - rho))
        denom = ms_t - mg_t * mg_t + epsilon
        mom_t = _store(ctx, mom, mom.read() * momentum + lr * grad / xp.sqrt(denom))
        return _store(ctx, var, value - mom_t)


KERNELS = {
    "ApplyGradientDescent": apply_gradient_descent,
    "ApplyMomentum": apply_momentum,
    "ApplyAdam": apply_adam,
    "ApplyAdagrad": apply_adagrad,
    "ApplyRMSProp": apply_rms_prop,
    "ApplyCenteredRMSProp": apply_centered_rms_prop,
}


def register(registry: Any, device_type: str) -> None:
    for op, fn in KERNELS.items():
        registry.add(op, device_type, fn)
