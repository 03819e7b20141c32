"""Sliding windows over channels-last tensors with any number of spatial dimensions, for the
convolution, pooling and morphology kernels.

Contract: an image is ``(N, *spatial, C)``. `plan` computes TF's output size and SAME/VALID
padding per spatial dimension (``window_geometry``) and raises `InvalidArgumentError` for a window
that does not fit. `view` gives a read-only, copy-free ``(N, *out, *window, C)`` view of a padded
image's windows; `scatter` is its adjoint: it sums ``(N, *out, *window, C)`` contributions back
into an unpadded image, looping over window offsets only (never over pixels). All of it runs on
``ctx.xp`` (numpy or cupy).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from attrs import frozen

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.standard_ops.nn import window_geometry


@frozen
class Plan:
    """The geometry of one windowed op: per spatial dimension, the output size, the (before,
    after) padding, and the window's size, stride and dilation."""

    out: tuple[int, ...]
    pads: tuple[tuple[int, int], ...]
    window: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]

    def reach(self, i: int) -> int:
        """How far the windows of spatial dimension `i` reach into the padded image."""
        return (self.out[i] - 1) * self.strides[i] + (self.window[i] - 1) * self.dilations[i] + 1


def plan(ctx: KernelContext, sizes: Sequence[int], window: Sequence[int],
         strides: Sequence[int], dilations: Sequence[int] | None = None) -> Plan:
    """The `Plan` of windows over spatial `sizes` with ``ctx.attrs["padding"]``."""
    dilations = dilations or [1] * len(sizes)
    padding = ctx.attrs["padding"]
    out, pads = [], []
    for size, k, s, d in zip(sizes, window, strides, dilations):
        n, before, after = window_geometry(int(size), int(k), int(s), int(d), padding)
        if n < 0 or (n == 0 and padding != "SAME" and size > 0):
            raise errors.InvalidArgumentError(
                ctx.node_name, ctx.op,
                f"Computed output size would be negative: {n} [input_size: {size}, "
                f"effective_filter_size: {(k - 1) * d + 1}, stride: {s}]")
        out.append(n)
        pads.append((before, after))
    return Plan(tuple(out), tuple(pads), tuple(int(k) for k in window),
                tuple(int(s) for s in strides), tuple(int(d) for d in dilations))


def padded(xp: Any, image: Any, p: Plan, fill: Any) -> Any:
    """`image` padded by the plan, and further at the end where the last window overshoots."""
    widths = [(0, 0)]
    for i, (before, after) in enumerate(p.pads):
        extra = max(0, p.reach(i) - (image.shape[1 + i] + before + after))
        widths.append((before, after + extra))
    widths.append((0, 0))
    if not any(a or b for a, b in widths):
        return xp.ascontiguousarray(image)
    return xp.pad(image, widths, mode="constant", constant_values=fill)


def view(xp: Any, image: Any, p: Plan) -> Any:
    """A read-only view ``(N, *out, *window, C)`` of a `padded` image's windows."""
    spatial = image.strides[1:-1]
    shape = (image.shape[0], *p.out, *p.window, image.shape[-1])
    steps = (image.strides[0], *(st * s for st, s in zip(spatial, p.strides)),
             *(st * d for st, d in zip(spatial, p.dilations)), image.strides[-1])
    return xp.lib.stride_tricks.as_strided(image, shape, steps)


def scatter(xp: Any, contributions: Any, shape: Sequence[int], p: Plan) -> Any:
    """Sum ``(N, *out, *window, C)`` `contributions` into an image of `shape`."""
    rank = len(p.out)
    size = [max(shape[1 + i] + sum(p.pads[i]), p.reach(i)) for i in range(rank)]
    buffer = xp.zeros((shape[0], *size, shape[-1]), dtype=contributions.dtype)
    for offset in itertools.product(*(range(k) for k in p.window)):
        target = tuple(slice(o * d, o * d + (n - 1) * s + 1, s)
                       for o, d, n, s in zip(offset, p.dilations, p.out, p.strides))
        buffer[(slice(None), *target)] += contributions[(slice(None),) * (1 + rank) + offset]
    keep = tuple(slice(before, before + shape[1 + i]) for i, (before, _) in enumerate(p.pads))
    return buffer[(slice(None), *keep)]


def lowest(xp: Any, dtype: Any) -> Any:
    """The fill that never wins a max: ``-inf`` for floats, the minimum for integers."""
    return -xp.inf if xp.dtype(dtype).kind == "f" else xp.iinfo(dtype).min
