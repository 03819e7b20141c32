"""One-pass numba kernels for the dense float updates of GradientDescent, Momentum, Adam,
Adagrad, RMSProp (plain and centered), Adadelta and Ftrl (``ApplyFtrl`` and ``ApplyFtrlV2``).

Contract: each kernel computes exactly the formula of its `tensorweave.plugins.kernels.training`
twin, in the same order of operations, so results are equal to it (numba compiles without
fast-math, so nothing is contracted into FMAs), but in one loop over the variable that updates
the variable and its slots in place and allocates no temporaries, where numpy's form makes up
to a dozen passes. The scalars the twin derives with numpy (``1 - rho``, ``2 * l2``,
``-lr_power``) are derived the same way and passed in the variable's dtype, since numba would
widen a float32 mixed with a Python number to float64. Locking, shape and scalar checks and the
in-place rules (`VariableRef.updatable`) are the twin's. A node's first
`switches.compile_after()` calls run the twin (compiling costs seconds once per process), and
all of them with the plugin switched off (`switches.enabled`); a variable that is not
C-contiguous is updated as a contiguous copy that is then stored. Registered for float32 and
float64 at a higher priority than the twins, ref and resource forms alike.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.runtime.variables_store import VariableRef
from tensorweave.plugins.fusion.switches import compile_after, enabled
from tensorweave.plugins.kernels import training
from tensorweave.plugins.kernels.resource_variables import _apply_with
from tensorweave.plugins.standard_ops.training import GRADIENT_INPUTS, UPDATES

DTYPES = (dtypes.float32, dtypes.float64)
PRIORITY = 1  # above the numpy twins (priority 0)


@functools.cache
def _loops() -> dict[str, Callable[..., None]]:
    """The compiled loops, built on first use (numba's import and compile take seconds)."""
    import numba

    # numpy's error model: a float divided by zero is inf/NaN as in the twins, and without
    # Python's zero check per element the loops vectorize (2-4x faster, measured)
    jit = numba.njit(nogil=True, error_model="numpy")

    @jit
    def gradient_descent(w: Any, delta: Any, alpha: Any) -> None:
        for i in range(w.size):
            w[i] -= delta[i] * alpha

    @jit
    def momentum(w: Any, a: Any, g: Any, lr: Any, mu: Any, nesterov: bool) -> None:
        if nesterov:
            for i in range(w.size):
                a[i] = a[i] * mu + g[i]
                w[i] -= g[i] * lr + a[i] * mu * lr
        else:
            for i in range(w.size):
                a[i] = a[i] * mu + g[i]
                w[i] -= a[i] * lr

    @jit
    def adam(w: Any, m: Any, v: Any, g: Any, lr_t: Any, beta1: Any, one_minus_beta1: Any,
             one_minus_beta2: Any, epsilon: Any, nesterov: bool) -> None:
        if nesterov:
            for i in range(w.size):
                gi = g[i]
                m[i] += (gi - m[i]) * one_minus_beta1
                v[i] += (gi * gi - v[i]) * one_minus_beta2
                w[i] -= (m[i] * beta1 + gi * one_minus_beta1) * lr_t / (np.sqrt(v[i]) + epsilon)
        else:
            for i in range(w.size):
                gi = g[i]
                m[i] += (gi - m[i]) * one_minus_beta1
                v[i] += (gi * gi - v[i]) * one_minus_beta2
                w[i] -= m[i] * lr_t / (np.sqrt(v[i]) + epsilon)

    @jit
    def adagrad(w: Any, a: Any, g: Any, lr: Any, update_slots: bool) -> None:
        if update_slots:
            for i in range(w.size):
                gi = g[i]
                a[i] += gi * gi
                w[i] -= gi * lr / np.sqrt(a[i])
        else:
            for i in range(w.size):
                w[i] -= g[i] * lr / np.sqrt(a[i])

    @jit
    def rms_prop(w: Any, ms: Any, mom: Any, g: Any, lr: Any, one_minus_rho: Any, momentum: Any,
                 epsilon: Any) -> None:
        for i in range(w.size):
            gi = g[i]
            ms[i] += (gi * gi - ms[i]) * one_minus_rho
            mom[i] = mom[i] * momentum + gi * lr / np.sqrt(ms[i] + epsilon)
            w[i] -= mom[i]

    @jit
    def centered_rms_prop(w: Any, mg: Any, ms: Any, mom: Any, g: Any, lr: Any,
                          one_minus_rho: Any, momentum: Any, epsilon: Any) -> None:
        for i in range(w.size):
            gi = g[i]
            mg[i] += (gi - mg[i]) * one_minus_rho
            ms[i] += (gi * gi - ms[i]) * one_minus_rho
            mom[i] = mom[i] * momentum + gi * lr / np.sqrt(ms[i] - mg[i] * mg[i] + epsilon)
            w[i] -= mom[i]

    @jit
    def adadelta(w: Any, a: Any, au: Any, g: Any, lr: Any, rho: Any, one_minus_rho: Any,
                 epsilon: Any, one: Any) -> None:
        for i in range(w.size):
            gi = g[i]
            a[i] = a[i] * rho + gi * gi * one_minus_rho
            update = np.sqrt(au[i] + epsilon) * (one / np.sqrt(a[i] + epsilon)) * gi
            w[i] -= update * lr
            au[i] = au[i] * rho + update * update * one_minus_rho

    @jit
    def ftrl(w: Any, a: Any, lin: Any, g: Any, lr: Any, l1: Any, two_l2: Any,
             two_shrinkage: Any, shrinks: bool, sqrt_power: bool, neg_power: Any,
             zero: Any) -> None:
        for i in range(w.size):
            gi, ai, wi = g[i], a[i], w[i]
            new_a = ai + gi * gi
            if sqrt_power:  # TF's special case, as the twin's
                scale, old = np.sqrt(new_a), np.sqrt(ai)
            else:
                scale, old = new_a ** neg_power, ai ** neg_power
            old = (old - scale) / lr * wi
            if shrinks:
                old += gi + two_shrinkage * wi
            else:
                old += gi
            lin[i] += old
            li = lin[i]
            x = (np.sign(li) * l1 - li) / (scale / lr + two_l2)
            w[i] = x if abs(li) > l1 else zero
            a[i] = new_a

    return {"gradient_descent": gradient_descent, "momentum": momentum, "adam": adam,
            "adagrad": adagrad, "rms_prop": rms_prop, "centered_rms_prop": centered_rms_prop,
            "adadelta": adadelta, "ftrl": ftrl}


def _flat(arrays: list[Any]) -> list[Any]:
    return [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in arrays]


def _scalar(x: Any, dtype: Any) -> Any:
    return dtype.type(x)  # a numpy scalar of the variable's dtype: the loop's arithmetic type


def apply_gradient_descent(ctx: KernelContext, var: VariableRef, alpha: Any, delta: Any) -> Any:
    with training._locked(ctx, var):
        training._check(ctx, var, ("delta", delta))
        (w,) = _flat(training._updating(var))
        d = np.ascontiguousarray(delta, w.dtype)
        _loops()["gradient_descent"](w.reshape(-1), d.reshape(-1), _scalar(alpha, w.dtype))
        return training._store((var,), [w])


def apply_momentum(ctx: KernelContext, var: VariableRef, accum: VariableRef, lr: Any, grad: Any,
                   momentum: Any) -> Any:
    with training._locked(ctx, var, accum):
        training._check(ctx, var, ("accum", accum), ("grad", grad))
        w, a = _flat(training._updating(var, accum))
        g = np.ascontiguousarray(grad, w.dtype)
        _loops()["momentum"](w.reshape(-1), a.reshape(-1), g.reshape(-1),
                             _scalar(lr, w.dtype), _scalar(momentum, w.dtype),
                             bool(ctx.attrs.get("use_nesterov", False)))
        return training._store((var, accum), [w, a])


def apply_adam(ctx: KernelContext, var: VariableRef, m: VariableRef, v: VariableRef,
               beta1_power: Any, beta2_power: Any, lr: Any, beta1: Any, beta2: Any,
               epsilon: Any, grad: Any) -> Any:
    xp = ctx.xp
    with training._locked(ctx, var, m, v):
        training._check(ctx, var, ("m", m), ("v", v), ("grad", grad))
        w, m_t, v_t = _flat(training._updating(var, m, v))
        t = w.dtype
        lr_t = lr * xp.sqrt(1 - beta2_power) / (1 - beta1_power)  # the twin's, in numpy
        g = np.ascontiguousarray(grad, t)
        _loops()["adam"](w.reshape(-1), m_t.reshape(-1), v_t.reshape(-1), g.reshape(-1),
                         _scalar(lr_t, t), _scalar(beta1, t), _scalar(1 - beta1, t),
                         _scalar(1 - beta2, t), _scalar(epsilon, t),
                         bool(ctx.attrs.get("use_nesterov", False)))
        return training._store((var, m, v), [w, m_t, v_t])


def apply_adagrad(ctx: KernelContext, var: VariableRef, accum: VariableRef, lr: Any,
                  grad: Any) -> Any:
    with training._locked(ctx, var, accum):
        training._check(ctx, var, ("accum", accum), ("grad", grad))
        w, a = _flat(training._updating(var, accum))
        g = np.ascontiguousarray(grad, w.dtype)
        _loops()["adagrad"](w.reshape(-1), a.reshape(-1), g.reshape(-1), _scalar(lr, w.dtype),
                            bool(ctx.attrs.get("update_slots", True)))
        return training._store((var, accum), [w, a])


def apply_rms_prop(ctx: KernelContext, var: VariableRef, ms: VariableRef, mom: VariableRef,
                   lr: Any, rho: Any, momentum: Any, epsilon: Any, grad: Any) -> Any:
    with training._locked(ctx, var, ms, mom):
        training._check(ctx, var, ("ms", ms), ("mom", mom), ("grad", grad))
        w, ms_t, mom_t = _flat(training._updating(var, ms, mom))
        t = w.dtype
        g = np.ascontiguousarray(grad, t)
        _loops()["rms_prop"](w.reshape(-1), ms_t.reshape(-1), mom_t.reshape(-1), g.reshape(-1),
                             _scalar(lr, t), _scalar(1 - rho, t), _scalar(momentum, t),
                             _scalar(epsilon, t))
        return training._store((var, ms, mom), [w, ms_t, mom_t])


def apply_centered_rms_prop(ctx: KernelContext, var: VariableRef, mg: VariableRef,
                            ms: VariableRef, mom: VariableRef, lr: Any, rho: Any, momentum: Any,
                            epsilon: Any, grad: Any) -> Any:
    with training._locked(ctx, var, mg, ms, mom):
        training._check(ctx, var, ("mg", mg), ("ms", ms), ("mom", mom), ("grad", grad))
        w, mg_t, ms_t, mom_t = _flat(training._updating(var, mg, ms, mom))
        t = w.dtype
        g = np.ascontiguousarray(grad, t)
        _loops()["centered_rms_prop"](
            w.reshape(-1), mg_t.reshape(-1), ms_t.reshape(-1), mom_t.reshape(-1), g.reshape(-1),
            _scalar(lr, t), _scalar(1 - rho, t), _scalar(momentum, t), _scalar(epsilon, t))
        return training._store((var, mg, ms, mom), [w, mg_t, ms_t, mom_t])


def apply_adadelta(ctx: KernelContext, var: VariableRef, accum: VariableRef,
                   accum_update: VariableRef, lr: Any, rho: Any, epsilon: Any,
                   grad: Any) -> Any:
    with training._locked(ctx, var, accum, accum_update):
        training._check(ctx, var, ("accum", accum), ("accum_update", accum_update),
                        ("grad", grad))
        w, a, au = _flat(training._updating(var, accum, accum_update))
        t = w.dtype
        g = np.ascontiguousarray(grad, t)
        _loops()["adadelta"](w.reshape(-1), a.reshape(-1), au.reshape(-1), g.reshape(-1),
                             _scalar(lr, t), _scalar(rho, t), _scalar(1 - rho, t),
                             _scalar(epsilon, t), _scalar(1, t))
        return training._store((var, accum, accum_update), [w, a, au])


def apply_ftrl(ctx: KernelContext, var: VariableRef, accum: VariableRef, linear: VariableRef,
               grad: Any, lr: Any, l1: Any, l2: Any, *rest: Any) -> Any:
    """``ApplyFtrl`` (`rest` = lr_power) and ``ApplyFtrlV2`` (l2_shrinkage, lr_power)."""
    with training._locked(ctx, var, accum, linear):
        training._check(ctx, var, ("accum", accum), ("linear", linear), ("grad", grad))
        w, a, lin = _flat(training._updating(var, accum, linear))
        t = w.dtype
        shrinkage, lr_power = training._ftrl_power(rest)
        g = np.ascontiguousarray(grad, t)
        # the twin's scalar products (``2 * l2``, ``-lr_power``) are numpy's, in the var's dtype
        _loops()["ftrl"](w.reshape(-1), a.reshape(-1), lin.reshape(-1), g.reshape(-1),
                         _scalar(lr, t), _scalar(l1, t), _scalar(2 * l2, t),
                         _scalar(0 if shrinkage is None else 2 * shrinkage, t),
                         shrinkage is not None, bool(lr_power == -0.5), _scalar(-lr_power, t),
                         _scalar(0, t))
        return training._store((var, accum, linear), [w, a, lin])


FUSED = {"ApplyGradientDescent": apply_gradient_descent, "ApplyMomentum": apply_momentum,
         "ApplyAdam": apply_adam, "ApplyAdagrad": apply_adagrad, "ApplyRMSProp": apply_rms_prop,
         "ApplyCenteredRMSProp": apply_centered_rms_prop, "ApplyAdadelta": apply_adadelta,
         "ApplyFtrl": apply_ftrl, "ApplyFtrlV2": apply_ftrl}


def _tiered(op: str) -> Callable[..., Any]:
    """`op`'s kernel: the twin for a node's first calls, then the one-pass loop, after the
    twin's check that each hyper-parameter is a scalar."""
    twin = training.checked_kernel(op)
    fused = FUSED[op]
    inputs, refs, _ = UPDATES[op]
    scalars = [(i, name) for i, name in enumerate(inputs)
               if i >= refs and name not in GRADIENT_INPUTS]

    def kernel(ctx: KernelContext, *args: Any) -> Any:
        left = ctx.state.get("fusion_calls_left")
        if left is None:  # first call: -1 keeps the twin for good
            left = compile_after() if enabled() else -1
        if left != 0:
            ctx.state["fusion_calls_left"] = left - 1 if left > 0 else left
            return twin(ctx, *args)
        for i, name in scalars:
            if args[i].ndim != 0:
                raise errors.InvalidArgumentError(
                    ctx.node_name, ctx.op, f"{name} is not a scalar: {list(args[i].shape)}")
        return fused(ctx, *args)

    kernel.__name__ = f"fused_{fused.__name__}"
    return kernel


def register(registry: Any) -> None:
    """Add the one-pass kernels (ref and resource forms) for CPU float32/float64."""
    for op in FUSED:
        kernel = _tiered(op)
        registry.add(op, "CPU", kernel, dtypes=DTYPES, priority=PRIORITY)
        registry.add(f"Resource{op}", "CPU", _apply_with(kernel, UPDATES[op][1]),
                     dtypes=DTYPES, priority=PRIORITY)
