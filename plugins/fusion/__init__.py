"""The ``fusion`` plugin: compiles regions of elementwise ops into one numba kernel each.

Contract: with numba importable, the plugin declares the ``_FusedElementwise`` op and its CPU
kernel (`kernel`), adds the ``fusion`` pass (`regions`) after partitioning, where each device's
regions are final (function bodies, which the control-flow kernels compile, get the pass then
too), and one-pass kernels for the dense float updates of GradientDescent, Momentum, Adam,
Adagrad, RMSProp, Adadelta and Ftrl (`optimizers`); ``TENSORWEAVE_FUSION=0`` turns both off
(`switches`). Without numba it registers nothing and ``tensorweave plugins`` says why. Results
equal the unfused graph's within float tolerance; the choice of backend and the figures are in
``benchmarks/fusion_backends.py`` and ``benchmarks/fusion.py``.

Measured size rules (``benchmarks/fusion_cutoff.py``, `regions`): a region with exp, log, tanh
or sigmoid fuses only up to 128 statically known elements; a region of two ops only past 4096
statically known elements (or on a shape not known statically); a call of a region whose
divides and square roots are at least a quarter of its steps runs op by op (numpy's vectorized
loops) past 4096 elements when an operand is a single element (a constant) or a strided view,
where numba's ufunc loop runs element by element: there it took 1.7-3x numpy's time at 1e5
elements, and it won (0.1-0.5x) at every size with contiguous operands of the result's shape
(`kernel`).
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.plugin_manager import hookimpl
from tensorweave.engine.runtime.passes import Pass
from tensorweave.plugins.fusion import backend, optimizers
from tensorweave.plugins.fusion.kernel import OP, make_kernel
from tensorweave.plugins.fusion.regions import fuse_elementwise
from tensorweave.plugins.fusion.switches import SWITCH, enabled
from tensorweave.plugins.standard_ops.shape_fns import broadcast_shape

ORDER = 50


def _infer(ctx: InferContext) -> list[TensorSpec]:
    shape = ctx.shape(0)
    for i in range(1, len(ctx.inputs)):
        shape = broadcast_shape(ctx, shape, ctx.shape(i))
    return [TensorSpec(ctx.attr("T"), shape)]


@hookimpl
def tensorweave_register_ops(registry: Any) -> None:
    if backend.unavailable() is None:
        registry.op(OP, ["inputs:*"], _infer, attrs={
            "expression": REQUIRED, "program": REQUIRED, "Tin": REQUIRED, "T": REQUIRED})


@hookimpl
def tensorweave_register_kernels(registry: Any) -> None:
    if backend.unavailable() is None:
        registry.add(OP, "CPU", make_kernel(registry.registry))
        optimizers.register(registry)


@hookimpl
def tensorweave_graph_passes() -> list[Pass]:
    if backend.unavailable() is not None:
        return []
    return [Pass("fusion", "post_partition", ORDER, fuse_elementwise)]


@hookimpl
def tensorweave_plugin_status() -> str | None:
    reason = backend.unavailable()
    if reason is not None:
        return f"off: {reason}"
    if not enabled():
        return f"switched off: {SWITCH}=0"
    return None
