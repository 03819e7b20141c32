"""Kernels of ``MaxPoolGradGrad`` and ``RandomGammaGrad`` (`standard_ops.grad_grad_ops`).

Contract: ``MaxPoolGradGrad`` picks, per window, the same element that ``MaxPoolGrad`` routes
the window's gradient to (`pool2d.max_routes`: TF's first maximum in window order), so the two
are transposes of each other. ``RandomGammaGrad`` differentiates a unit-rate gamma sample
``x`` implicitly through its CDF ``P(alpha, x)``: ``dx/dalpha = -(dP/dalpha) / (dP/dx)``, in
float64, 0 where ``x <= 0``.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels import pool2d
from tensorweave.plugins.kernels import special_functions as sf
from tensorweave.plugins.kernels.grad import _check_out, _fail, _out, _padded, _pool_params
from tensorweave.plugins.kernels.math import elementwise
from tensorweave.plugins.kernels.windows import Plan


def max_pool_grad_grad(ctx: KernelContext, image: Any, output: Any, grad: Any) -> Any:
    xp = ctx.xp
    window, strides, out_hw, pads = _pool_params(ctx, tuple(image.shape))
    _check_out(ctx, output, image.shape[0], out_hw, image.shape[3])
    if grad.shape != image.shape:
        raise _fail(ctx, f"MaxPoolGradGrad: grad has shape {list(grad.shape)}, expected the "
                         f"input's shape {list(image.shape)}")
    fill = -xp.inf if image.dtype.kind == "f" else xp.iinfo(image.dtype).min
    plan = Plan(out_hw, tuple(pads), window, strides, (1, 1))
    padded = _padded(xp, image, pads, out_hw, window, strides, (1, 1), fill)
    grads = _padded(xp, grad, pads, out_hw, window, strides, (1, 1), 0)
    return _out(ctx, pool2d.pick(xp, padded, grads, plan, tuple(image.shape[1:3])))


def random_gamma_grad(ctx: KernelContext, alpha: Any, sample: Any) -> Any:
    xp = ctx.xp
    a, x = (xp.asarray(v, dtype=xp.float64) for v in (alpha, sample))
    a, x = xp.broadcast_arrays(a, x)
    positive = x > 0
    safe_x = xp.where(positive, x, 1.0)
    # dP/dx is the gamma density; evaluate it in log space so large alpha does not overflow.
    log_density = (a - 1.0) * xp.log(safe_x) - safe_x - sf.lgamma(xp, a)
    partial = -sf.igamma_grad_a(xp, a, safe_x) / xp.exp(log_density)
    return xp.where(positive, partial, 0.0)


def register(registry: Any, device_type: str) -> None:
    registry.add("MaxPoolGradGrad", device_type, max_pool_grad_grad, expensive=True)
    registry.add("RandomGammaGrad", device_type, elementwise(random_gamma_grad))
