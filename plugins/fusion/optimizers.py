"""One-pass numba kernels for the dense float updates of GradientDescent, Momentum, Adam,
Adagrad, RMSProp (plain and centered), Adadelta and Ftrl (``ApplyFtrl`` and ``ApplyFtrlV2``),
and for the sparse updates (``SparseApply*``) of all but the first and Adam.

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

A sparse kernel runs the dense loop on each row of the variable (and slots) at ``indices``, in
the order of the indices, against one gradient row each: a repeated index is updated once per
occurrence, as TF's kernels (and the twin's rounds) do, an empty ``indices`` changes nothing,
and TF's checks (`training._check_sparse`: an index out of range raises `InvalidArgumentError`
naming the node, before any row changes) come first. The rows are views: besides the in-place
rules' copy, nothing the variable's size is allocated.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.runtime.variables_store import VariableRef
from tensorweave.plugins.fusion.switches import compile_after, enabled
from tensorweave.plugins.kernels import training
from tensorweave.plugins.kernels.resource_variables import _apply_with
from tensorweave.plugins.standard_ops.training import GRADIENT_INPUTS, SPARSE_UPDATES, UPDATES

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

    # The sparse drivers: `dense` (one of the loops above) on the rows at `indices`, one
    # gradient row per index, in order, so a repeated index is updated once per occurrence as
    # TF's kernels loop. Row views of C-contiguous 2-D arrays are contiguous: no copies.
    @jit
    def rows2(dense: Any, w: Any, a: Any, g: Any, indices: Any, hyper: Any) -> None:
        for k in range(indices.size):
            r = indices[k]
            dense(w[r], a[r], g[k], *hyper)

    @jit
    def rows3(dense: Any, w: Any, a: Any, b: Any, g: Any, indices: Any, hyper: Any) -> None:
        for k in range(indices.size):
            r = indices[k]
            dense(w[r], a[r], b[r], g[k], *hyper)

    @jit
    def rows4(dense: Any, w: Any, a: Any, b: Any, c: Any, g: Any, indices: Any,
              hyper: Any) -> None:
        for k in range(indices.size):
            r = indices[k]
            dense(w[r], a[r], b[r], c[r], g[k], *hyper)

    return {"gradient_descent": gradient_descent, "momentum": momentum, "adam": adam,
            "adagrad": adagrad, "rms_prop": rms_prop, "centered_rms_prop": centered_rms_prop,
            "adadelta": adadelta, "ftrl": ftrl, "rows2": rows2, "rows3": rows3, "rows4": rows4}


def _flat(arrays: list[Any]) -> list[Any]:
    return [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in arrays]


def _scalar(x: Any, dtype: Any) -> Any:
    return dtype.type(x)  # a numpy scalar of the variable's dtype: the loop's arithmetic type


# The loop's scalar arguments from the op's hyper-parameter inputs (in the op's order, without
# grad and indices) and attrs, in the variable's dtype `t`; the twin's derived scalars are
# derived here the same way, with numpy.
Hyper = Callable[..., tuple[Any, ...]]


def _gradient_descent(ctx: KernelContext, t: Any, alpha: Any) -> tuple[Any, ...]:
    return (_scalar(alpha, t),)


def _momentum(ctx: KernelContext, t: Any, lr: Any, momentum: Any) -> tuple[Any, ...]:
    return _scalar(lr, t), _scalar(momentum, t), bool(ctx.attrs.get("use_nesterov", False))


def _adam(ctx: KernelContext, t: Any, beta1_power: Any, beta2_power: Any, lr: Any, beta1: Any,
          beta2: Any, epsilon: Any) -> tuple[Any, ...]:
    lr_t = lr * ctx.xp.sqrt(1 - beta2_power) / (1 - beta1_power)  # the twin's, in numpy
    return (_scalar(lr_t, t), _scalar(beta1, t), _scalar(1 - beta1, t), _scalar(1 - beta2, t),
            _scalar(epsilon, t), bool(ctx.attrs.get("use_nesterov", False)))


def _adagrad(ctx: KernelContext, t: Any, lr: Any) -> tuple[Any, ...]:
    return _scalar(lr, t), bool(ctx.attrs.get("update_slots", True))


def _rms_prop(ctx: KernelContext, t: Any, lr: Any, rho: Any, momentum: Any,
              epsilon: Any) -> tuple[Any, ...]:
    return _scalar(lr, t), _scalar(1 - rho, t), _scalar(momentum, t), _scalar(epsilon, t)


def _adadelta(ctx: KernelContext, t: Any, lr: Any, rho: Any, epsilon: Any) -> tuple[Any, ...]:
    return (_scalar(lr, t), _scalar(rho, t), _scalar(1 - rho, t), _scalar(epsilon, t),
            _scalar(1, t))


def _ftrl(ctx: KernelContext, t: Any, lr: Any, l1: Any, l2: Any, *rest: Any) -> tuple[Any, ...]:
    """``*Ftrl`` (`rest` = lr_power) and ``*FtrlV2`` (l2_shrinkage, lr_power)."""
    l2_shrinkage, lr_power = training._ftrl_power(rest)
    two_shrinkage = 0 if l2_shrinkage is None else 2 * l2_shrinkage
    return (_scalar(lr, t), _scalar(l1, t), _scalar(2 * l2, t), _scalar(two_shrinkage, t),
            l2_shrinkage is not None, bool(lr_power == -0.5), _scalar(-lr_power, t),
            _scalar(0, t))


# op -> (its loop, its scalars); the SparseApply ops run the same loop on each indexed row
DENSE: dict[str, tuple[str, Hyper]] = {
    "ApplyGradientDescent": ("gradient_descent", _gradient_descent),
    "ApplyMomentum": ("momentum", _momentum),
    "ApplyAdam": ("adam", _adam),
    "ApplyAdagrad": ("adagrad", _adagrad),
    "ApplyRMSProp": ("rms_prop", _rms_prop),
    "ApplyCenteredRMSProp": ("centered_rms_prop", _rms_prop),
    "ApplyAdadelta": ("adadelta", _adadelta),
    "ApplyFtrl": ("ftrl", _ftrl),
    "ApplyFtrlV2": ("ftrl", _ftrl),
}
SPARSE: dict[str, tuple[str, Hyper]] = {
    f"Sparse{op}": DENSE[op] for op in (
        "ApplyMomentum", "ApplyAdagrad", "ApplyRMSProp", "ApplyCenteredRMSProp",
        "ApplyAdadelta", "ApplyFtrl", "ApplyFtrlV2")}


def _dense(op: str) -> Callable[..., Any]:
    """`op`'s one-pass kernel over the whole variable."""
    loop, hyper = DENSE[op]
    inputs, refs, _ = UPDATES[op]
    at = next(i for i, name in enumerate(inputs) if name in GRADIENT_INPUTS)
    scalars = [i for i in range(refs, len(inputs)) if i != at]
    names = inputs[1:refs]

    def kernel(ctx: KernelContext, *args: Any) -> Any:
        slots: tuple[VariableRef, ...] = args[:refs]
        grad = args[at]
        with training._locked(ctx, *slots):
            training._check(ctx, slots[0], *zip(names, slots[1:]), (inputs[at], grad))
            arrays = _flat(training._updating(*slots))
            t = arrays[0].dtype
            g = np.ascontiguousarray(grad, t)
            _loops()[loop](*[a.reshape(-1) for a in arrays], g.reshape(-1),
                           *hyper(ctx, t, *[args[i] for i in scalars]))
            return training._store(slots, arrays)

    kernel.__name__ = f"apply_{loop}"
    return kernel


def _sparse(op: str) -> Callable[..., Any]:
    """`op`'s kernel: the dense loop on each row at ``indices``, in place, after the twin's
    checks (an out-of-range index changes nothing); no array the variable's size is made."""
    loop, hyper = SPARSE[op]
    inputs, refs, _ = SPARSE_UPDATES[op]
    at, indices_at = inputs.index("grad"), inputs.index("indices")
    scalars = [i for i in range(refs, len(inputs)) if i not in (at, indices_at)]

    def kernel(ctx: KernelContext, *args: Any) -> Any:
        slots: tuple[VariableRef, ...] = args[:refs]
        grad, indices = args[at], args[indices_at]
        with training._locked(ctx, *slots):
            training._check_sparse(ctx, inputs[:refs], [ref.read() for ref in slots], grad,
                                   indices)
            arrays = _flat(training._updating(*slots))
            t, shape = arrays[0].dtype, arrays[0].shape
            width = math.prod(shape[1:])
            g = np.ascontiguousarray(grad, t).reshape(indices.shape[0], width)
            loops = _loops()
            loops[f"rows{refs}"](loops[loop], *(a.reshape(shape[0], width) for a in arrays), g,
                                 np.ascontiguousarray(indices),
                                 hyper(ctx, t, *[args[i] for i in scalars]))
            return training._store(slots, arrays)

    kernel.__name__ = f"sparse_apply_{loop}"
    return kernel


def _tiered(op: str, fused: Callable[..., Any]) -> Callable[..., Any]:
    """`op`'s kernel: the twin for a node's first calls, then `fused`, after the twin's check
    that each hyper-parameter is a scalar."""
    twin = training.checked_kernel(op)
    inputs, refs, _ = {**UPDATES, **SPARSE_UPDATES}[op]
    scalars = [(i, name) for i, name in enumerate(inputs)
               if i >= refs and name not in (*GRADIENT_INPUTS, "indices")]

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
    tables = {**{op: _dense(op) for op in DENSE}, **{op: _sparse(op) for op in SPARSE}}
    for op, fused in tables.items():
        kernel = _tiered(op, fused)
        refs = {**UPDATES, **SPARSE_UPDATES}[op][1]
        registry.add(op, "CPU", kernel, dtypes=DTYPES, priority=PRIORITY)
        registry.add(f"Resource{op}", "CPU", _apply_with(kernel, refs), dtypes=DTYPES,
                     priority=PRIORITY)
