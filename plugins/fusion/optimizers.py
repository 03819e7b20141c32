"""One-pass numba kernels for the dense float updates of GradientDescent, Momentum and Adam.

Contract: each kernel computes exactly the formula of its `tensorweave.plugins.kernels.training`
twin, in the same order of operations, so results are equal to it (numba compiles without
fast-math, so nothing is contracted into FMAs), but in one loop over the variable that updates
the variable and its slots in place and allocates no temporaries, where numpy's form makes up
to a dozen passes. Locking, shape and scalar checks and the in-place rules
(`VariableRef.updatable`) are the twin's. A node's first `switches.compile_after()` calls run
the twin (compiling costs seconds once per process), and all of them with the plugin switched
off (`switches.enabled`); a variable that is not C-contiguous is
updated as a contiguous copy that is then stored. Registered for float32 and float64 at a
higher priority than the twins, ref and resource forms alike.
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

    return {"gradient_descent": gradient_descent, "momentum": momentum, "adam": adam}


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


FUSED = {"ApplyGradientDescent": apply_gradient_descent, "ApplyMomentum": apply_momentum,
         "ApplyAdam": apply_adam}


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
