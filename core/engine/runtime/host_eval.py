"""Evaluating one node on the host, outside any step: for constant folding and for values that
shape inference needs at graph-construction time.

Contract: `evaluate_on_host` runs the node's CPU kernel on numpy inputs on a throwaway CPU device,
with numpy's floating-point warnings off (as in a step). It returns the outputs, or ``None`` when
there is no plain CPU kernel (missing, async or step-bound), the kernel raises (the same error
then surfaces when the graph runs), or it returns another count, dtype or shape than declared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tensorweave.engine.kernel import KernelContext, type_key
from tensorweave.engine.runtime.device import host_device
from tensorweave.engine.tensor_shape import TensorShape


def evaluate_on_host(name: str, op: str, attrs: Mapping[str, Any], output_types: Sequence[Any],
                     output_shapes: Sequence[Any], inputs: Sequence[np.ndarray],
                     kernels: Any) -> list[np.ndarray] | None:
    kernel = kernels.lookup(op, "CPU", type_key(dict(attrs), list(output_types)))
    if kernel is None or kernel.needs_step or kernel.is_async:
        return None
    device = host_device()
    ctx = KernelContext(
        node_name=name, op=op,
        attrs={k: v for k, v in attrs.items() if not k.startswith("_output")},
        device=device, xp=device.xp, output_dtypes=list(output_types),
        output_shapes=list(output_shapes))
    try:
        with np.errstate(all="ignore"):
            out = kernel.fn(ctx, *inputs)
    except Exception:  # noqa: BLE001 - the same failure is reported when the step runs
        return None
    if out is None and not output_types:  # a NoOp: evaluated, nothing to keep
        return []
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(outs) != len(output_types):
        return None
    values = []
    for value, dtype, shape in zip(outs, output_types, output_shapes):
        if not isinstance(value, (np.ndarray, np.generic)):
            return None
        value = np.asarray(value)
        if value.dtype != np.dtype(dtype.np_type) or not TensorShape(shape).is_compatible_with(
                value.shape):
            return None  # what the kernel really produces must not be hidden
        values.append(value)
    return values
