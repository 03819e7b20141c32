"""Kernels of the colour-space image ops, written once against ``ctx.xp``.

Contract: every formula is TF's, evaluated elementwise in the same order so that results match
TF to float rounding. ``RGBToHSV``/``HSVToRGB`` are TF's Eigen expressions in the input dtype
(hue in turns, ``[0, 1)``; black and grey pixels get hue and saturation 0; ``HSVToRGB`` reads
hue through piecewise-linear ramps, so any hue in ``[0, 1]`` is valid). ``AdjustHue`` works on
TF's "hue and value range" form: the hue in sextants ``[0, 6)`` moves by ``6 * delta`` and is
wrapped back, while the minimum and maximum channel stay. ``AdjustSaturation`` runs TF's own
per-pixel HSV round trip with the saturation scaled and clamped to ``[0, 1]``. Both adjustments
compute in float32 and return the input dtype. A last dimension other than 3 (or a rank below
the op's minimum, or a non-scalar delta/scale) raises `InvalidArgumentError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _check_rgb(ctx: KernelContext, images: Any, min_rank: int) -> None:
    if images.ndim < min_rank:
        raise _fail(ctx, f"input must be at least {min_rank}-D, got shape {list(images.shape)}")
    if images.shape[-1] != 3:
        raise _fail(ctx, f"input must have 3 channels but instead has {images.shape[-1]} "
                         "channels.")


def _scalar(ctx: KernelContext, value: Any, name: str) -> Any:
    if value.ndim != 0:
        raise _fail(ctx, f"{name} must be scalar: {list(value.shape)}")
    return value.astype(ctx.xp.float32)


def _channels(images: Any) -> tuple[Any, Any, Any]:
    return images[..., 0], images[..., 1], images[..., 2]


def rgb_to_hsv(ctx: KernelContext, images: Any) -> Any:
    xp = ctx.xp
    _check_rgb(ctx, images, 1)
    red, green, blue = _channels(images)
    dt = images.dtype.type
    value = images.max(axis=-1)
    spread = value - images.min(axis=-1)
    # Grey and black pixels divide by a stand-in 1; their results are replaced below.
    saturation = xp.where(value > 0, spread / xp.where(value > 0, value, dt(1)), dt(0))
    norm = (dt(1) / xp.where(spread > 0, spread, dt(1))) * (dt(1) / dt(6))
    hue = xp.where(red == value, norm * (green - blue),
                   xp.where(green == value, norm * (blue - red) + dt(2) / dt(6),
                            norm * (red - green) + dt(4) / dt(6)))
    hue = xp.where(spread > 0, hue, dt(0))
    hue = xp.where(hue < 0, hue + dt(1), hue)
    return xp.stack([hue, saturation, value], axis=-1).astype(images.dtype, copy=False)


def hsv_to_rgb(ctx: KernelContext, images: Any) -> Any:
    xp = ctx.xp
    _check_rgb(ctx, images, 1)
    hue, saturation, value = _channels(images)
    dt = images.dtype.type
    sextant = hue * dt(6)
    ramps = (xp.abs(sextant - dt(3)) - dt(1),
             dt(2) - xp.abs(sextant - dt(2)),
             dt(2) - xp.abs(sextant - dt(4)))
    grey = dt(1) - saturation
    out = [(grey + saturation * xp.clip(r, dt(0), dt(1))) * value for r in ramps]
    return xp.stack(out, axis=-1).astype(images.dtype, copy=False)


def _hue_range(xp: Any, red: Any, green: Any, blue: Any) -> tuple[Any, Any, Any]:
    """TF's ``rgb_to_hv_range``: hue in sextants ``[0, 6)``, minimum and maximum channel."""
    # Each pixel's sextant and (max, mid, min) channels; ties may fall either side.
    r_lt_g = red < green
    cases = [
        (r_lt_g & (blue < red), 1, green, red, blue),
        (r_lt_g & (blue > green), 3, blue, green, red),
        (r_lt_g, 2, green, blue, red),
        (blue < green, 0, red, green, blue),
        (blue > red, 4, blue, red, green),
        (True, 5, red, blue, green),
    ]
    sextant, high, mid, low = cases[-1][1:]
    sextant = xp.full(red.shape, sextant, dtype=xp.float32)
    for cond, s, hi, md, lo in reversed(cases[:-1]):
        sextant = xp.where(cond, xp.float32(s), sextant)
        high, mid, low = xp.where(cond, hi, high), xp.where(cond, md, mid), xp.where(cond, lo, low)
    spread = high - low
    ratio = (mid - low) / xp.where(spread == 0, xp.float32(1), spread)
    odd = sextant % 2 == 1
    hue = sextant + xp.where(odd, xp.float32(1) - ratio, ratio)
    return xp.where(spread == 0, xp.float32(0), hue), low, high


def _hue_range_to_rgb(xp: Any, hue: Any, low: Any, high: Any) -> Any:
    """TF's ``hv_range_to_rgb``: the inverse of `_hue_range`."""
    sextant = xp.trunc(hue)
    ratio = hue - sextant
    ratio = xp.where(sextant % 2 == 1, xp.float32(1) - ratio, ratio)
    mid = low + ratio * (high - low)
    channels = {0: (high, mid, low), 1: (mid, high, low), 2: (low, high, mid),
                3: (low, mid, high), 4: (mid, low, high)}
    red, green, blue = high, low, mid
    for s, (r, g, b) in channels.items():
        hit = sextant == s
        red, green, blue = xp.where(hit, r, red), xp.where(hit, g, green), xp.where(hit, b, blue)
    return xp.stack([red, green, blue], axis=-1)


def adjust_hue(ctx: KernelContext, images: Any, delta: Any) -> Any:
    xp = ctx.xp
    _check_rgb(ctx, images, 3)
    delta = _scalar(ctx, delta, "delta")
    hue, low, high = _hue_range(xp, *_channels(images.astype(xp.float32)))
    hue = hue + delta * xp.float32(6)
    # TF adds or subtracts 6 until the hue is in [0, 6); one step of the same size per turn.
    hue = hue - xp.float32(6) * xp.floor(hue / xp.float32(6))
    hue = xp.where(hue >= 6, hue - xp.float32(6), hue)
    hue = xp.where(hue < 0, hue + xp.float32(6), hue)
    return _hue_range_to_rgb(xp, hue, low, high).astype(ctx.out_np, copy=False)


def _pixel_hsv(xp: Any, red: Any, green: Any, blue: Any) -> tuple[Any, Any, Any]:
    """TF's per-pixel ``rgb_to_hsv`` of the saturation kernel (constants added in double)."""
    value = xp.maximum(red, xp.maximum(green, blue))
    spread = value - xp.minimum(red, xp.minimum(green, blue))
    saturation = xp.where(value > 0, spread / xp.where(value > 0, value, xp.float32(1)),
                          xp.float32(0))
    norm = xp.float32(1) / (xp.float32(6) * xp.where(spread > 0, spread, xp.float32(1)))
    hue = xp.where(red == value, norm * (green - blue),
                   xp.where(green == value,
                            ((norm * (blue - red)).astype(xp.float64) + 2.0 / 6.0),
                            ((norm * (red - green)).astype(xp.float64) + 4.0 / 6.0)))
    hue = hue.astype(xp.float32)
    hue = xp.where(spread <= 0, xp.float32(0), hue)
    return xp.where(hue < 0, hue + xp.float32(1), hue), saturation, value


def _pixel_rgb(xp: Any, hue: Any, saturation: Any, value: Any) -> Any:
    """TF's per-pixel ``hsv_to_rgb`` of the saturation kernel (sextant 6 and up is black)."""
    chroma = saturation * value
    base = value - chroma
    sextant_f = hue * xp.float32(6)
    sextant = xp.trunc(sextant_f)
    wrapped = sextant_f - xp.float32(2) * xp.floor(sextant_f / xp.float32(2))
    wrapped = xp.where(wrapped >= 2, wrapped - xp.float32(2), wrapped)
    x = chroma * (xp.float32(1) - xp.abs(wrapped - xp.float32(1)))
    zero = xp.zeros_like(chroma)
    channels = {0: (chroma, x, zero), 1: (x, chroma, zero), 2: (zero, chroma, x),
                3: (zero, x, chroma), 4: (x, zero, chroma), 5: (chroma, zero, x)}
    red, green, blue = zero, zero, zero
    for s, (r, g, b) in channels.items():
        hit = sextant == s
        red, green, blue = xp.where(hit, r, red), xp.where(hit, g, green), xp.where(hit, b, blue)
    return xp.stack([red + base, green + base, blue + base], axis=-1)


def adjust_saturation(ctx: KernelContext, images: Any, scale: Any) -> Any:
    xp = ctx.xp
    _check_rgb(ctx, images, 3)
    scale = _scalar(ctx, scale, "scale")
    hue, saturation, value = _pixel_hsv(xp, *_channels(images.astype(xp.float32)))
    saturation = xp.minimum(xp.float32(1), xp.maximum(xp.float32(0), saturation * scale))
    return _pixel_rgb(xp, hue, saturation, value).astype(ctx.out_np, copy=False)


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    for op, fn in {"RGBToHSV": rgb_to_hsv, "HSVToRGB": hsv_to_rgb, "AdjustHue": adjust_hue,
                   "AdjustSaturation": adjust_saturation}.items():
        registry.add(op, device_type, fn)
