"""OpDef of ``ExtractImagePatches``.

Contract: as TF: a 4-D NHWC `images` of a real dtype, attrs ``ksizes``, ``strides``, ``rates``
(each ``[1, rows, cols, 1]``) and ``padding`` (``"VALID"`` or ``"SAME"``); the output is
``[batch, out_rows, out_cols, ksize_rows * ksize_cols * depth]`` with TF's output sizes for a
kernel dilated to ``k + (k - 1) * (rate - 1)``. Bad attrs are `ValueError`s here.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank


def window(size: int, ksize: int, stride: int, rate: int, padding: str) -> tuple[int, int]:
    """TF's output size and leading padding along one axis."""
    effective = ksize + (ksize - 1) * (rate - 1)
    if padding == "VALID":
        return max(0, (size - effective + stride) // stride), 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + effective - size, 0) // 2


def check_attrs(attrs: dict[str, Any]) -> tuple[list[int], list[int], list[int], str]:
    """The validated ``(ksizes, strides, rates, padding)``; a `ValueError` when malformed."""
    lists = []
    for name in ("ksizes", "strides", "rates"):
        value = [int(v) for v in attrs[name]]
        if len(value) != 4 or value[0] != 1 or value[3] != 1:
            raise ValueError(f"ExtractImagePatches requires {name} of the form "
                             f"[1, rows, cols, 1], got {value}")
        if min(value) < 1:
            raise ValueError(f"ExtractImagePatches requires positive {name}, got {value}")
        lists.append(value)
    padding = attrs["padding"]
    padding = padding.decode() if isinstance(padding, bytes) else str(padding)
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"padding must be VALID or SAME, got {padding!r}")
    return lists[0], lists[1], lists[2], padding


def _infer(ctx: InferContext) -> list[TensorSpec]:
    image = with_rank(ctx, 0, 4)
    ksizes, strides, rates, padding = check_attrs(ctx.attrs)
    dims = [image.dims[0]]
    for axis in (1, 2):
        size = image.dims[axis]
        dims.append(None if size is None else
                    window(size, ksizes[axis], strides[axis], rates[axis], padding)[0])
    depth = image.dims[3]
    dims.append(None if depth is None else ksizes[1] * ksizes[2] * depth)
    return [TensorSpec(ctx.dtype(0), TensorShape(dims))]


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    registry.op("ExtractImagePatches", ["images:T"], _infer,
                attrs={"T": REQUIRED, "ksizes": REQUIRED, "strides": REQUIRED,
                       "rates": REQUIRED, "padding": REQUIRED},
                type_constraints={"T": dtypes.NUMERIC})
