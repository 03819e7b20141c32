"""Kernel of ``ExtractImagePatches``, written against ``ctx.xp``.

Contract: the image is zero-padded by TF's leading padding (SAME) and, for each kernel tap
``(i, j)``, the strided slice starting at ``(i * rate_rows, j * rate_cols)`` is taken; taps are
laid out row-major, depth fastest, along the last axis.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.standard_ops.image_patches import check_attrs, window


def extract_image_patches(ctx: KernelContext, images: Any) -> Any:
    xp = ctx.xp
    try:
        ksizes, strides, rates, padding = check_attrs(ctx.attrs)
    except ValueError as error:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op, str(error)) from error
    if images.ndim != 4:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                          f"input must be 4-dimensional {list(images.shape)}")
    batch, _, _, depth = images.shape
    outs, pads = [], []
    for axis in (1, 2):
        out, pad = window(images.shape[axis], ksizes[axis], strides[axis], rates[axis], padding)
        outs.append(out)
        # enough trailing padding for every tap of every output position
        reach = (out - 1) * strides[axis] + (ksizes[axis] - 1) * rates[axis] + 1
        pads.append((pad, max(reach - pad - images.shape[axis], 0)))
    padded = xp.pad(images, [(0, 0), pads[0], pads[1], (0, 0)])
    taps = []
    for i in range(ksizes[1]):
        for j in range(ksizes[2]):
            r0, c0 = i * rates[1], j * rates[2]
            taps.append(padded[:, r0:r0 + (outs[0] - 1) * strides[1] + 1:strides[1],
                               c0:c0 + (outs[1] - 1) * strides[2] + 1:strides[2]]
                        if min(outs) > 0 else padded[:, :0, :0])
    stacked = xp.stack(taps, axis=3)
    return stacked.reshape(batch, outs[0], outs[1], len(taps) * depth).astype(ctx.out_np,
                                                                              copy=False)


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    registry.add("ExtractImagePatches", device_type, extract_image_patches)
