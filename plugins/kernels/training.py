"""Kernels of the fused optimizer updates, with TF1's update formulas (``training_ops.cc``).

Each kernel updates the variable and its slots through their refs and returns the variable's
new value. Like TF's fused kernels they change the stored arrays in place, through numpy's
in-place ufuncs and ``out=``, when no reader holds them (`VariableRef.updatable`; else a copy is
updated and stored), so that a step's update allocates no new variable or slot. The dense
updates evaluate TF's expressions in TF's order (results equal to the composed formulas) with at
most two scratch arrays of the variable's size (FTRL: six), where Eigen's fused expression
needs none. With ``use_locking`` the refs' locks are held for the whole update, in input order.

The ``SparseApply*`` kernels apply the dense formula to the rows at ``indices`` only, one
gradient row per index. A repeated index is updated once per occurrence, in order, as TF's
kernel loops over the indices (the optimizers pass deduplicated indices); the occurrences are
processed in rounds, each round a vectorized update of distinct rows. Indices outside the
variable raise `InvalidArgumentError` and leave it unchanged.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.runtime.variables_store import VariableRef
from tensorweave.plugins.standard_ops.training import GRADIENT_INPUTS, SPARSE_UPDATES, UPDATES


@contextlib.contextmanager
def _locked(ctx: KernelContext, *refs: VariableRef) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        if ctx.attrs.get("use_locking", False):
            for ref in refs:
                stack.enter_context(ref.lock)
        yield


def _check(ctx: KernelContext, var: VariableRef, *others: tuple[str, VariableRef | Any]) -> None:
    """TF's check that each slot and the gradient has the variable's shape. It keeps no
    reference to a stored value, so `VariableRef.updatable` can hand the array itself."""
    shape = var.read().shape
    for name, other in others:
        other_shape = (other.read() if isinstance(other, VariableRef) else other).shape
        if other_shape != shape:
            raise errors.InvalidArgumentError(
                ctx.node_name, ctx.op,
                f"var and {name} do not have the same shape{list(shape)} {list(other_shape)}")


def _updating(*refs: VariableRef) -> list[Any]:
    """The arrays to update in place, then `_store` (see `VariableRef.updatable`)."""
    return [ref.updatable() for ref in refs]


def _store(refs: tuple[VariableRef, ...], arrays: list[Any]) -> Any:
    """Store the updated arrays; returns the variable's (the first)."""
    for ref, array in zip(refs, arrays):
        ref.store(array)
    return arrays[0]


def _blend(xp: Any, slot: Any, target: Any, weight: Any, scratch: Any) -> None:
    """``slot += (target - slot) * weight`` (TF's form of a moving average), through
    `scratch`."""
    xp.subtract(target, slot, out=scratch)
    scratch *= weight
    slot += scratch


def apply_gradient_descent(ctx: KernelContext, var: VariableRef, alpha: Any, delta: Any) -> Any:
    with _locked(ctx, var):
        _check(ctx, var, ("delta", delta))
        (w,) = _updating(var)
        w -= ctx.xp.multiply(delta, alpha)
        return _store((var,), [w])


def apply_momentum(ctx: KernelContext, var: VariableRef, accum: VariableRef, lr: Any, grad: Any,
                   momentum: Any) -> Any:
    xp = ctx.xp
    with _locked(ctx, var, accum):
        _check(ctx, var, ("accum", accum), ("grad", grad))
        w, a = _updating(var, accum)
        a *= momentum
        a += grad
        if ctx.attrs.get("use_nesterov", False):
            step = xp.multiply(grad, lr)
            t = xp.multiply(a, momentum)
            t *= lr
            step += t
        else:
            step = xp.multiply(a, lr)
        w -= step
        return _store((var, accum), [w, a])


def apply_adam(ctx: KernelContext, var: VariableRef, m: VariableRef, v: VariableRef,
               beta1_power: Any, beta2_power: Any, lr: Any, beta1: Any, beta2: Any,
               epsilon: Any, grad: Any) -> Any:
    xp = ctx.xp
    with _locked(ctx, var, m, v):
        _check(ctx, var, ("m", m), ("v", v), ("grad", grad))
        w, m_t, v_t = _updating(var, m, v)
        lr_t = lr * xp.sqrt(1 - beta2_power) / (1 - beta1_power)
        t = xp.empty_like(w)
        _blend(xp, m_t, grad, 1 - beta1, t)
        _blend(xp, v_t, xp.multiply(grad, grad, out=t), 1 - beta2, t)
        if ctx.attrs.get("use_nesterov", False):
            step = xp.multiply(m_t, beta1)
            step += xp.multiply(grad, 1 - beta1, out=t)
            step *= lr_t
        else:
            step = xp.multiply(m_t, lr_t)
        xp.sqrt(v_t, out=t)
        t += epsilon
        step /= t
        w -= step
        return _store((var, m, v), [w, m_t, v_t])


def apply_adagrad(ctx: KernelContext, var: VariableRef, accum: VariableRef, lr: Any,
                  grad: Any) -> Any:
    xp = ctx.xp
    with _locked(ctx, var, accum):
        _check(ctx, var, ("accum", accum), ("grad", grad))
        w, a = _updating(var, accum)
        t = xp.multiply(grad, grad)
        if ctx.attrs.get("update_slots", True):
            a += t
        step = xp.multiply(grad, lr)
        step /= xp.sqrt(a, out=t)
        w -= step
        return _store((var, accum), [w, a])


def apply_rms_prop(ctx: KernelContext, var: VariableRef, ms: VariableRef, mom: VariableRef,
                   lr: Any, rho: Any, momentum: Any, epsilon: Any, grad: Any) -> Any:
    xp = ctx.xp
    with _locked(ctx, var, ms, mom):
        _check(ctx, var, ("ms", ms), ("mom", mom), ("grad", grad))
        w, ms_t, mom_t = _updating(var, ms, mom)
        t = xp.multiply(grad, grad)
        _blend(xp, ms_t, t, 1 - rho, t)
        _momentum_step(xp, mom_t, momentum, lr, grad, xp.add(ms_t, epsilon, out=t))
        w -= mom_t
        return _store((var, ms, mom), [w, ms_t, mom_t])


def apply_centered_rms_prop(ctx: KernelContext, var: VariableRef, mg: VariableRef,
                            ms: VariableRef, mom: VariableRef, lr: Any, rho: Any, momentum: Any,
                            epsilon: Any, grad: Any) -> Any:
    xp = ctx.xp
    with _locked(ctx, var, mg, ms, mom):
        _check(ctx, var, ("mg", mg), ("ms", ms), ("mom", mom), ("grad", grad))
        w, mg_t, ms_t, mom_t = _updating(var, mg, ms, mom)
        t = xp.empty_like(w)
        _blend(xp, mg_t, grad, 1 - rho, t)
        _blend(xp, ms_t, xp.multiply(grad, grad, out=t), 1 - rho, t)
        denom = xp.multiply(mg_t, mg_t, out=t)
        xp.subtract(ms_t, denom, out=denom)
        denom += epsilon
        _momentum_step(xp, mom_t, momentum, lr, grad, denom)
        w -= mom_t
        return _store((var, mg, ms, mom), [w, mg_t, ms_t, mom_t])


def apply_adadelta(ctx: KernelContext, var: VariableRef, accum: VariableRef,
                   accum_update: VariableRef, lr: Any, rho: Any, epsilon: Any,
                   grad: Any) -> Any:
    xp = ctx.xp
    with _locked(ctx, var, accum, accum_update):
        _check(ctx, var, ("accum", accum), ("accum_update", accum_update), ("grad", grad))
        w, a, au = _updating(var, accum, accum_update)
        t = xp.multiply(grad, grad)
        _decay(a, rho, t)
        update = xp.add(au, epsilon)
        xp.sqrt(update, out=update)
        xp.add(a, epsilon, out=t)
        xp.sqrt(t, out=t)
        xp.reciprocal(t, out=t)  # TF's rsqrt
        update *= t
        update *= grad
        w -= xp.multiply(update, lr, out=t)
        _decay(au, rho, xp.multiply(update, update, out=t))
        return _store((var, accum, accum_update), [w, a, au])


def _decay(slot: Any, rho: Any, square: Any) -> None:
    """``slot = slot * rho + square * (1 - rho)``, overwriting `square`."""
    slot *= rho
    square *= 1 - rho
    slot += square


def apply_ftrl(ctx: KernelContext, var: VariableRef, accum: VariableRef, linear: VariableRef,
               grad: Any, lr: Any, l1: Any, l2: Any, *rest: Any) -> Any:
    """``ApplyFtrl`` (`rest` = lr_power) and ``ApplyFtrlV2`` (l2_shrinkage, lr_power)."""
    with _locked(ctx, var, accum, linear):
        _check(ctx, var, ("accum", accum), ("linear", linear), ("grad", grad))
        arrays = _updating(var, accum, linear)
        _ftrl(ctx.xp, *arrays, grad, lr, l1, l2, *_ftrl_power(rest))
        return _store((var, accum, linear), arrays)


def _ftrl_power(rest: tuple[Any, ...]) -> tuple[Any, Any]:
    """(l2_shrinkage or None, lr_power) from the inputs after l2."""
    return (None, rest[0]) if len(rest) == 1 else (rest[0], rest[1])


def _ftrl(xp: Any, w: Any, a: Any, lin: Any, grad: Any, lr: Any, l1: Any, l2: Any,
          shrinkage: Any, lr_power: Any) -> None:
    """TF's FTRL step on `w`, `a` (accum) and `lin` (linear), in place."""
    g2 = xp.multiply(grad, grad)
    new_a = xp.add(a, g2)
    if lr_power == -0.5:  # TF's special case: square roots, not powers
        scale, old = xp.sqrt(new_a), xp.sqrt(a)
    else:
        scale, old = xp.power(new_a, -lr_power), xp.power(a, -lr_power)
    old -= scale
    old /= lr
    old *= w  # -(new_scale - old_scale) / lr * var
    if shrinkage is None:
        old += grad
    else:
        old += grad + 2 * shrinkage * w
    lin += old
    scale /= lr
    scale += 2 * l2  # the quadratic term
    x = xp.sign(lin)
    x *= l1
    x -= lin
    x /= scale
    xp.copyto(w, xp.where(xp.abs(lin) > l1, x, 0))
    a += g2


def _momentum_step(xp: Any, mom: Any, momentum: Any, lr: Any, grad: Any, denom: Any) -> None:
    """``mom = mom * momentum + lr * grad / sqrt(denom)``, overwriting `denom`."""
    xp.sqrt(denom, out=denom)
    step = xp.multiply(grad, lr)
    step /= denom
    mom *= momentum
    mom += step


# -- sparse updates -------------------------------------------------------------------------------

# (ctx, rows of var and its slots at the indices, gradient rows, hyper-parameters by name)
# -> the new rows
RowUpdate = Callable[..., list[Any]]


def _check_sparse(ctx: KernelContext, names: tuple[str, ...], values: list[Any], grad: Any,
                  indices: Any) -> None:
    """TF's checks of a sparse update's inputs, with its wording."""
    var = values[0]
    for name, value in zip(names[1:], values[1:]):
        if value.shape != var.shape:
            raise _invalid(ctx, f"var and {name} do not have the same shape"
                                f"{list(var.shape)} {list(value.shape)}")
    if var.ndim < 1:
        raise _invalid(ctx, "var must be at least 1 dimensional")
    if indices.ndim != 1:
        raise _invalid(ctx, "indices must be one-dimensional")
    if grad.ndim != var.ndim:
        raise _invalid(ctx, "var and grad must have the same rank")
    for d in range(1, var.ndim):
        if var.shape[d] != grad.shape[d]:
            raise _invalid(ctx, f"var and grad must match in dimension {d}")
    if grad.shape[0] != indices.shape[0]:
        raise _invalid(ctx, "grad must be the same size as indices in the first dimension.")
    bad = (indices < 0) | (indices >= var.shape[0])
    if bad.any():
        i = int(ctx.xp.argmax(bad))
        raise _invalid(ctx, f"Index {int(indices[i])} at offset {i} in indices is out of range")


def _invalid(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _rounds(xp: Any, indices: Any) -> Iterator[Any]:
    """Positions into `indices`, grouped so that round k holds the k-th occurrence of each
    index: the rounds, in order, replay a sequential loop over the indices."""
    n = indices.shape[0]
    order = xp.argsort(indices, kind="stable")
    ordered = indices[order]
    occurrence = xp.empty(n, dtype=xp.int64)
    occurrence[order] = xp.arange(n) - xp.searchsorted(ordered, ordered, side="left")
    rounds = int(occurrence.max()) + 1 if n else 0
    if rounds == 1:
        yield xp.arange(n)
        return
    for k in range(rounds):
        yield xp.nonzero(occurrence == k)[0]


def _sparse_apply(names: tuple[str, ...], operands: tuple[str, ...],
                  rows: RowUpdate) -> Callable[..., Any]:
    """The kernel applying `rows` to the variable and its slots (the refs `names`) at
    ``indices``; `operands` names the other inputs (gradient, indices, scalars) in the op's
    order."""
    refs = len(names)

    def kernel(ctx: KernelContext, *inputs: Any) -> Any:
        slots: tuple[VariableRef, ...] = inputs[:refs]
        hyper = dict(zip(operands, inputs[refs:]))
        grad, indices = hyper.pop("grad"), hyper.pop("indices")
        with _locked(ctx, *slots):
            _check_sparse(ctx, names, [ref.read() for ref in slots], grad, indices)
            out = [ref.updatable() for ref in slots]
            for positions in _rounds(ctx.xp, indices):
                index = indices[positions]
                for o, new in zip(out, rows(ctx, *(o[index] for o in out), grad[positions],
                                            **hyper)):
                    o[index] = new
            for ref, o in zip(slots, out):
                ref.store(o)
            return out[0]

    kernel.__name__ = f"sparse_apply_{rows.__name__.strip('_')}"
    return kernel


def _momentum_rows(ctx: KernelContext, var: Any, accum: Any, grad: Any, lr: Any,
                   momentum: Any) -> list[Any]:
    accum = accum * momentum + grad
    if ctx.attrs.get("use_nesterov", False):
        return [var - (grad * lr + accum * momentum * lr), accum]
    return [var - lr * accum, accum]


def _adagrad_rows(ctx: KernelContext, var: Any, accum: Any, grad: Any, lr: Any) -> list[Any]:
    if ctx.attrs.get("update_slots", True):
        accum = accum + grad * grad
    return [var - lr * grad / ctx.xp.sqrt(accum), accum]


def _rms_prop_rows(ctx: KernelContext, var: Any, ms: Any, mom: Any, grad: Any, lr: Any,
                   rho: Any, momentum: Any, epsilon: Any) -> list[Any]:
    ms = ms + (grad * grad - ms) * (1 - rho)
    mom = mom * momentum + lr * grad / ctx.xp.sqrt(ms + epsilon)
    return [var - mom, ms, mom]


def _centered_rms_prop_rows(ctx: KernelContext, var: Any, mg: Any, ms: Any, mom: Any,
                            grad: Any, lr: Any, rho: Any, momentum: Any,
                            epsilon: Any) -> list[Any]:
    mg = mg + (grad - mg) * (1 - rho)
    ms = ms + (grad * grad - ms) * (1 - rho)
    mom = mom * momentum + lr * grad / ctx.xp.sqrt(ms - mg * mg + epsilon)
    return [var - mom, mg, ms, mom]


def _adadelta_rows(ctx: KernelContext, var: Any, accum: Any, accum_update: Any, grad: Any,
                   lr: Any, rho: Any, epsilon: Any) -> list[Any]:
    xp = ctx.xp
    accum = accum * rho + grad * grad * (1 - rho)
    update = xp.sqrt(accum_update + epsilon) * xp.reciprocal(xp.sqrt(accum + epsilon)) * grad
    accum_update = accum_update * rho + update * update * (1 - rho)
    return [var - update * lr, accum, accum_update]


def _ftrl_rows(ctx: KernelContext, var: Any, accum: Any, linear: Any, grad: Any, lr: Any,
               l1: Any, l2: Any, lr_power: Any, l2_shrinkage: Any = None) -> list[Any]:
    _ftrl(ctx.xp, var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power)
    return [var, accum, linear]  # (the gathered rows, updated in place)


KERNELS = {
    "SparseApplyAdadelta": _sparse_apply(
        ("var", "accum", "accum_update"), ("lr", "rho", "epsilon", "grad", "indices"),
        _adadelta_rows),
    "SparseApplyFtrl": _sparse_apply(
        ("var", "accum", "linear"), ("grad", "indices", "lr", "l1", "l2", "lr_power"),
        _ftrl_rows),
    "SparseApplyFtrlV2": _sparse_apply(
        ("var", "accum", "linear"),
        ("grad", "indices", "lr", "l1", "l2", "l2_shrinkage", "lr_power"), _ftrl_rows),
    "ApplyAdadelta": apply_adadelta,
    "ApplyFtrl": apply_ftrl,
    "ApplyFtrlV2": apply_ftrl,
    "SparseApplyMomentum": _sparse_apply(
        ("var", "accum"), ("lr", "grad", "indices", "momentum"), _momentum_rows),
    "SparseApplyAdagrad": _sparse_apply(
        ("var", "accum"), ("lr", "grad", "indices"), _adagrad_rows),
    "SparseApplyRMSProp": _sparse_apply(
        ("var", "ms", "mom"), ("lr", "rho", "momentum", "epsilon", "grad", "indices"),
        _rms_prop_rows),
    "SparseApplyCenteredRMSProp": _sparse_apply(
        ("var", "mg", "ms", "mom"), ("lr", "rho", "momentum", "epsilon", "grad", "indices"),
        _centered_rms_prop_rows),
    "ApplyGradientDescent": apply_gradient_descent,
    "ApplyMomentum": apply_momentum,
    "ApplyAdam": apply_adam,
    "ApplyAdagrad": apply_adagrad,
    "ApplyRMSProp": apply_rms_prop,
    "ApplyCenteredRMSProp": apply_centered_rms_prop,
}


def checked_kernel(op: str) -> Callable[..., Any]:
    """The kernel of `op` after TF's run-time check that each hyper-parameter input is a scalar
    (``lr is not a scalar: [3]``), for inputs whose rank was unknown when the graph was built."""
    fn = KERNELS[op]
    inputs, refs, _ = {**UPDATES, **SPARSE_UPDATES}[op]
    scalars = [(i, name) for i, name in enumerate(inputs)
               if i >= refs and name not in (*GRADIENT_INPUTS, "indices")]

    def kernel(ctx: KernelContext, *args: Any) -> Any:
        for i, name in scalars:
            if args[i].ndim != 0:
                raise _invalid(ctx, f"{name} is not a scalar: {list(args[i].shape)}")
        return fn(ctx, *args)

    return kernel


def register(registry: Any, device_type: str) -> None:
    for op in KERNELS:
        registry.add(op, device_type, checked_kernel(op))
