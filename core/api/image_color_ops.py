"""``tw.image`` colour-space functions: HSV conversion, hue, saturation and gamma adjustment,
grey to RGB, and their random variants, with ``tf.compat.v1.image``'s names and results.

Contract: `rgb_to_hsv` and `hsv_to_rgb` are the raw ``RGBToHSV``/``HSVToRGB`` ops on float
images. `adjust_hue` and `adjust_saturation` run TF's ``AdjustHue``/``AdjustSaturation`` on a
float16/float32 view of the image (other dtypes are converted with `convert_image_dtype` and
converted back). `adjust_gamma` is TF's composite ``gain * image ** gamma`` on that view,
saturated back to the input dtype; a negative Python `gamma` is a `ValueError`, a negative
tensor one fails the run. The random variants draw their factor once per run, with `seed`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops as _array
from tensorweave.api import control_flow_ops as _flow
from tensorweave.api import math_ops as _math
from tensorweave.api.image_ops import _uniform_delta, _uniform_factor, convert_image_dtype
from tensorweave.api.logging_ops import Assert
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.graph.op_builder import apply

__all__ = [
    "adjust_gamma", "adjust_hue", "adjust_saturation", "grayscale_to_rgb", "hsv_to_rgb",
    "random_hue", "random_saturation", "rgb_to_hsv",
]


def rgb_to_hsv(images: Any, name: str | None = None) -> Tensor:
    """Float RGB `images` (last dimension 3) as hue, saturation, value, each in ``[0, 1]``."""
    return apply("RGBToHSV", [convert_to_tensor(images, name="images")], name=name)


def hsv_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """Float HSV `images` (last dimension 3) as RGB."""
    return apply("HSVToRGB", [convert_to_tensor(images, name="images")], name=name)


def grayscale_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """Single-channel `images` with the channel repeated three times."""
    with name_scope(name, "grayscale_to_rgb", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        shape = images.shape
        if shape.ndims is None or shape.ndims < 2:
            raise ValueError(f"A grayscale image (shape {shape}) must be at least "
                             "two-dimensional.")
        if shape.dims[-1] is not None and shape.dims[-1] != 1:
            raise ValueError("Last dimension of a grayscale image should be size 1.")
        multiples = [1] * (shape.ndims - 1) + [3]
        return _array.tile(images, multiples, name=scope)


def _float_view(image: Tensor) -> Tensor:
    """`image` itself when float16/float32 (the kernels' dtypes), else converted to float32."""
    if image.dtype in (dtypes.float16, dtypes.float32):
        return image
    return convert_image_dtype(image, dtypes.float32)


def _adjust(op: str, image: Any, factor: Any, default_name: str, name: str | None) -> Tensor:
    with name_scope(name, default_name, [image]) as scope:
        image = convert_to_tensor(image, name="image")
        factor = convert_to_tensor(factor, dtype=dtypes.float32)
        adjusted = apply(op, [_float_view(image), factor])
        return convert_image_dtype(adjusted, image.dtype, name=scope)


def adjust_hue(image: Any, delta: Any, name: str | None = None) -> Tensor:
    """RGB `image` with its hue rotated by `delta` turns (``[-1, 1]``)."""
    return _adjust("AdjustHue", image, delta, "adjust_hue", name)


def adjust_saturation(image: Any, saturation_factor: Any, name: str | None = None) -> Tensor:
    """RGB `image` with its saturation multiplied by `saturation_factor` (clamped to 1)."""
    return _adjust("AdjustSaturation", image, saturation_factor, "adjust_saturation", name)


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> Tensor:
    """``gain * image ** gamma`` in `image`'s ``[0, 1]`` float scale, saturated back to its
    dtype."""
    with name_scope(None, "adjust_gamma", [image, gamma, gain]) as scope:
        image = convert_to_tensor(image, name="image")
        flt = _float_view(image)
        gamma = convert_to_tensor(gamma, dtype=flt.dtype)
        gain = convert_to_tensor(gain, dtype=flt.dtype)
        known = constant_value(gamma)
        if known is not None:
            if (known < 0).any():
                raise ValueError("Gamma should be a non-negative real number.")
        else:
            check = Assert(_math.greater_equal(gamma, 0),
                           ["Gamma should be a non-negative real number."])
            with control_dependencies([check]):
                gamma = _flow.identity(gamma)
        adjusted = gain * _math.pow(flt, gamma)
        return convert_image_dtype(adjusted, image.dtype, saturate=True, name=scope)


def random_hue(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """`adjust_hue` by a delta drawn uniformly from ``[-max_delta, max_delta)``."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    return adjust_hue(image, _uniform_delta(max_delta, seed))


def random_saturation(image: Any, lower: float, upper: float,
                      seed: int | None = None) -> Tensor:
    """`adjust_saturation` by a factor drawn uniformly from ``[lower, upper)``."""
    return adjust_saturation(image, _uniform_factor(lower, upper, seed))
