"""``tw.image`` measures and filters: total variation, image gradients, Sobel edges, PSNR,
SSIM (single and multi-scale) and patch extraction, with ``tf.compat.v1.image``'s names,
signatures and results.

Contract: each is TF's composite of standard ops, so it differentiates through them.
`total_variation` sums absolute neighbour differences per image (3-D: one scalar; 4-D: one per
image). `image_gradients` gives forward differences ``(dy, dx)`` of a 4-D image with a zero last
row/column. `sobel_edges` stacks the vertical and horizontal 3x3 Sobel responses (reflect
padding) on a new last axis. `psnr`, `ssim` and `ssim_multiscale` convert both images to float32
in ``[0, max_val]`` terms, reduce over the last three axes and keep the leading (batch) ones;
SSIM uses TF's 11x11 Gaussian window (sigma 1.5) in VALID mode. `extract_image_patches` (and
its TF2 name `extract_patches`) builds ``ExtractImagePatches``. Shape mismatches known at
construction are `ValueError`s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.api import array_ops as _array
from tensorweave.api import control_flow_ops as _flow
from tensorweave.api import math_ops as _math
from tensorweave.api import nn_conv_ops as _conv
from tensorweave.api import nn_ops as _nn
from tensorweave.api.image_ops import convert_image_dtype
from tensorweave.api.logging_ops import Assert
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply

__all__ = [
    "extract_image_patches", "extract_patches", "image_gradients", "psnr", "sobel_edges",
    "ssim", "ssim_multiscale", "total_variation",
]

_MULTISCALE_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def total_variation(images: Any, name: str | None = None) -> Tensor:
    """The sum of absolute differences between neighbouring pixels, per image."""
    with name_scope(name, "total_variation"):
        images = convert_to_tensor(images, name="images")
        ndims = images.shape.ndims
        if ndims == 3:
            dif1 = images[1:, :, :] - images[:-1, :, :]
            dif2 = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif ndims == 4:
            dif1 = images[:, 1:, :, :] - images[:, :-1, :, :]
            dif2 = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return (_math.reduce_sum(_math.abs(dif1), axis=axis)
                + _math.reduce_sum(_math.abs(dif2), axis=axis))


def image_gradients(image: Any) -> tuple[Tensor, Tensor]:
    """``(dy, dx)``: forward differences along height and width of a 4-D `image`, each of
    the image's shape with a zero last row (dy) or column (dx)."""
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        raise ValueError("image_gradients expects a 4D tensor [batch_size, h, w, d], not "
                         f"{image.shape}.")
    shape = _array.shape(image)
    batch, height, width, depth = (shape[i] for i in range(4))
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = _array.concat([dy, _array.zeros(_array.stack([batch, 1, width, depth]), image.dtype)],
                       1)
    dx = _array.concat([dx, _array.zeros(_array.stack([batch, height, 1, depth]), image.dtype)],
                       2)
    return _array.reshape(dy, shape), _array.reshape(dx, shape)


def sobel_edges(image: Any) -> Tensor:
    """``[batch, h, w, d, 2]``: the vertical (dy) and horizontal (dx) Sobel responses of a
    4-D float `image`, with reflected borders."""
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        raise ValueError(f"sobel_edges expects a 4-D image, got shape {image.shape}")
    sobel = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
                      [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]])
    kernels = np.expand_dims(np.transpose(sobel, (1, 2, 0)), -2)  # [3, 3, 1, 2]
    shape = _array.shape(image)
    filters = _array.tile(convert_to_tensor(kernels, dtype=image.dtype),
                          _array.stack([1, 1, shape[3], 1]), name="sobel_filters")
    padded = _array.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    output = _conv.depthwise_conv2d(padded, filters, [1, 1, 1, 1], "VALID")
    output = _array.reshape(output, _array.concat([shape, [2]], 0))
    output.set_shape(image.shape.concatenate([2]))
    return output


def _compatible(a: Tensor, b: Tensor) -> list[Tensor]:
    """TF's ``_verify_compatible_image_shapes``: static checks, and run-time asserts that the
    trailing three dimensions agree."""
    for image in (a, b):
        if image.shape.ndims is not None and image.shape.ndims < 3:
            raise ValueError(f"Shape {image.shape} must have rank at least 3")
    if a.shape.ndims is not None and b.shape.ndims is not None:
        if not a.shape[-3:].is_compatible_with(b.shape[-3:]):
            raise ValueError(f"Shapes {a.shape} and {b.shape} are incompatible")
    shape_a, shape_b = _array.shape(a), _array.shape(b)
    same = _math.reduce_all(_math.equal(shape_a[-3:], shape_b[-3:]))
    return [Assert(same, [shape_a, shape_b], summarize=10)]


def _as_float(a: Tensor, b: Tensor, max_val: Any) -> tuple[Tensor, Tensor, Tensor]:
    max_val = convert_image_dtype(_math.cast(max_val, a.dtype), dtypes.float32)
    return convert_image_dtype(a, dtypes.float32), convert_image_dtype(b, dtypes.float32), \
        max_val


def psnr(a: Any, b: Any, max_val: Any, name: str | None = None) -> Tensor:
    """The peak signal-to-noise ratio between `a` and `b` in dB (float32, per image)."""
    with name_scope(name, "PSNR", [a, b]):
        a, b = convert_to_tensor(a, name="a"), convert_to_tensor(b, name="b")
        checks = _compatible(a, b)
        a, b, max_val = _as_float(a, b, max_val)
        mse = _math.reduce_mean(_math.squared_difference(a, b), [-3, -2, -1])
        value = _math.subtract(20 * _math.log(max_val) / _math.log(10.0),
                               np.float32(10 / np.log(10)) * _math.log(mse), name="psnr")
        with control_dependencies(checks):
            return _flow.identity(value)


def _gaussian(size: int, sigma: float) -> np.ndarray:
    """TF's ``_fspecial_gauss``: a normalized ``[size, size, 1, 1]`` Gaussian window."""
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / 2
    g = np.square(coords) * np.float32(-0.5 / sigma ** 2)
    g = (g[None, :] + g[:, None]).reshape(-1)
    g = np.exp(g - g.max())
    return (g / g.sum()).astype(np.float32).reshape(size, size, 1, 1)


def _ssim_per_channel(img1: Tensor, img2: Tensor, max_val: Tensor, filter_size: int,
                      filter_sigma: float, k1: float, k2: float) -> tuple[Tensor, Tensor]:
    """TF's ``_ssim_per_channel``: SSIM and contrast-structure per image and channel."""
    shape1, shape2 = _array.shape(img1), _array.shape(img2)
    checks = [Assert(_math.reduce_all(_math.greater_equal(s[-3:-1], filter_size)),
                     [s, filter_size], summarize=8) for s in (shape1, shape2)]
    with control_dependencies(checks):
        img1 = _flow.identity(img1)
    kernel = _array.tile(convert_to_tensor(_gaussian(filter_size, filter_sigma)),
                         _array.stack([1, 1, shape1[-1], 1]))

    def reducer(x: Tensor) -> Tensor:
        shape = _array.shape(x)
        flat = _array.reshape(x, _array.concat([[-1], shape[-3:]], 0))
        y = _conv.depthwise_conv2d(flat, kernel, [1, 1, 1, 1], "VALID")
        return _array.reshape(y, _array.concat([shape[:-3], _array.shape(y)[1:]], 0))

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mean0, mean1 = reducer(img1), reducer(img2)
    num0 = mean0 * mean1 * 2.0
    den0 = _math.square(mean0) + _math.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(img1 * img2) * 2.0
    den1 = reducer(_math.square(img1) + _math.square(img2))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return (_math.reduce_mean(luminance * cs, [-3, -2]), _math.reduce_mean(cs, [-3, -2]))


def ssim(img1: Any, img2: Any, max_val: Any, filter_size: int = 11, filter_sigma: float = 1.5,
         k1: float = 0.01, k2: float = 0.03) -> Tensor:
    """The structural similarity of `img1` and `img2` (float32, one value per image)."""
    img1, img2 = convert_to_tensor(img1, name="img1"), convert_to_tensor(img2, name="img2")
    checks = _compatible(img1, img2)
    with control_dependencies(checks):
        img1 = _flow.identity(img1)
    img1, img2, max_val = _as_float(img1, img2, max_val)
    per_channel, _ = _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2)
    return _math.reduce_mean(per_channel, [-1])


def ssim_multiscale(img1: Any, img2: Any, max_val: Any,
                    power_factors: Any = _MULTISCALE_WEIGHTS, filter_size: int = 11,
                    filter_sigma: float = 1.5, k1: float = 0.01, k2: float = 0.03) -> Tensor:
    """TF's multi-scale SSIM: the contrast-structure terms of each 2x average-pooled scale and
    the full SSIM of the last, combined with `power_factors` as exponents."""
    with name_scope(None, "MS-SSIM", [img1, img2]):
        img1, img2 = convert_to_tensor(img1, name="img1"), convert_to_tensor(img2, name="img2")
        checks = _compatible(img1, img2)
        with control_dependencies(checks):
            img1 = _flow.identity(img1)
        img1, img2, max_val = _as_float(img1, img2, max_val)
        images = [img1, img2]
        shape = _array.shape(img1)
        heads, tails = shape[:-3], shape[-3:]
        divisor = [2, 2, 1]  # height, width, channels
        mcs = []
        for k in range(len(power_factors)):
            if k > 0:
                # pad odd heights/widths up (SYMMETRIC) and 2x2 average-pool, as TF
                flat = [_array.reshape(x, _array.concat([[-1], tails], 0)) for x in images]
                remainder = _math.floormod(tails, divisor)
                pads = _array.stack([_array.zeros_like(remainder), remainder], 1)
                pads = _array.concat([[[0, 0]], pads], 0)
                pooled = [_nn.avg_pool(_array.pad(x, pads, mode="SYMMETRIC"), [1, 2, 2, 1],
                                       [1, 2, 2, 1], "VALID") for x in flat]
                tails = _array.shape(pooled[0])[1:]
                images = [_array.reshape(x, _array.concat([heads, tails], 0)) for x in pooled]
            value, cs = _ssim_per_channel(images[0], images[1], max_val, filter_size,
                                          filter_sigma, k1, k2)
            mcs.append(apply("Relu", [cs]))
        mcs.pop()
        mcs_and_ssim = _array.stack(mcs + [apply("Relu", [value])], axis=-1)
        weights = convert_to_tensor(np.asarray(power_factors, np.float32))
        ms_ssim = _math.reduce_prod(_math.pow(mcs_and_ssim, weights), [-1])
        return _math.reduce_mean(ms_ssim, [-1])


def extract_patches(images: Any, sizes: Any, strides: Any, rates: Any, padding: str,
                    name: str | None = None) -> Tensor:
    """``[batch, out_rows, out_cols, rows * cols * depth]`` patches of a 4-D `images`."""
    return apply("ExtractImagePatches", [images],
                 {"ksizes": list(sizes), "strides": list(strides), "rates": list(rates),
                  "padding": padding}, name=name)


def extract_image_patches(images: Any, ksizes: Any = None, strides: Any = None,
                          rates: Any = None, padding: str | None = None,
                          name: str | None = None, sizes: Any = None) -> Tensor:
    """TF1's name of `extract_patches` (`sizes` is the TF2 name of `ksizes`)."""
    if ksizes is None:
        ksizes = sizes
    elif sizes is not None:
        raise ValueError("Cannot specify both 'ksizes' and 'sizes'.")
    if None in (ksizes, strides, rates, padding):
        raise TypeError("extract_image_patches() requires ksizes, strides, rates and padding.")
    return extract_patches(images, ksizes, strides, rates, padding, name=name)
