"""``tw.image``: resizing, flips, rotations, crops and pads, dtype conversion and simple colour
adjustments, with ``tf.compat.v1.image``'s names, signatures and results.

Contract: images are 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width,
channels]`` tensors of known rank (TF also accepts an unknown rank, through ``cond``s; tensorweave
asks for it at construction). Each function builds TF's ops: the resize ops of
`tensorweave.plugins.standard_ops.image` (a 3-D image gets a batch dimension around them) and
TF's composites of array and math ops otherwise. Bounding-box arguments that are Python ints are
checked at construction with TF's `ValueError`s; tensors are used as given, so a bad value fails
in the slice or pad op at run time. Dtype conversion scales as TF does: floats are in ``[0, 1]``,
integers in ``[0, dtype.max]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.api import array_ops as _array
from tensorweave.api import control_flow_ops as _flow
from tensorweave.api import math_ops as _math
from tensorweave.api.logging_ops import Assert
from tensorweave.api.random_ops import random_uniform
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.graph.op_builder import apply

__all__ = [
    "ResizeMethod", "adjust_brightness", "adjust_contrast", "central_crop",
    "convert_image_dtype", "crop_to_bounding_box", "flip_left_right", "flip_up_down",
    "pad_to_bounding_box", "per_image_standardization", "random_brightness", "random_contrast",
    "random_crop", "random_flip_left_right",
    "resize_bilinear", "resize_image_with_crop_or_pad", "resize_images",
    "resize_nearest_neighbor", "rgb_to_grayscale", "rot90", "transpose_image",
]


class ResizeMethod:
    """The resize methods of ``tf.compat.v1.image.ResizeMethod``."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


# -- shape checks ---------------------------------------------------------------------------------


def _at_least_3d(image: Tensor, require_static: bool = False) -> None:
    """TF's ``_CheckAtLeast3DImage``: rank >= 3 and no empty spatial or channel dimension."""
    shape = image.shape
    if require_static and not shape.is_fully_defined():
        raise ValueError(f"'image' (shape {shape}) must be fully defined.")
    if shape.ndims is None:
        return  # TF only checks an image of unknown rank when it runs
    if shape.ndims < 3:
        raise ValueError(f"'image' (shape {shape}) must be at least three-dimensional.")
    if any(d == 0 for d in shape.dims[-3:]):
        raise ValueError("all dims of 'image.shape' must be > 0.")


def _rank_3_or_4(image: Tensor) -> int:
    """The image's rank; an image of unknown rank is taken as one 3-D image, as TF does."""
    _at_least_3d(image)
    if image.shape.ndims is None:
        return 3
    if image.shape.ndims not in (3, 4):
        raise ValueError("'image' must have either 3 or 4 dimensions.")
    return image.shape.ndims


def _dimensions(image: Tensor) -> list[Any]:
    """Each dimension of `image`: a Python int where static, else a scalar int32 tensor."""
    dynamic = None
    dims: list[Any] = []
    for i, d in enumerate(image.shape.dims):
        if d is None:
            dynamic = _array.shape(image) if dynamic is None else dynamic
            dims.append(dynamic[i])
        else:
            dims.append(d)
    return dims


def _static(value: Any) -> int | None:
    """`value` as an int when it is known at graph-construction time."""
    if isinstance(value, Tensor):
        known = constant_value(value)
        return None if known is None else int(known)
    return int(value)


def _check(condition: bool | None, message: str) -> None:
    """TF's ``_assert`` for statically known conditions (None: known only at run time)."""
    if condition is False:
        raise ValueError(message)


def _batched(image: Tensor) -> tuple[Tensor, bool]:
    if _rank_3_or_4(image) == 3:
        batched = _array.expand_dims(image, 0)
        batched.set_shape([None] * 4)
        return batched, False
    return image, True


def _unbatched(image: Tensor, is_batch: bool) -> Tensor:
    return image if is_batch else _array.squeeze(image, [0])


# -- resizing -------------------------------------------------------------------------------------


def _resize_op(op: str, images: Any, size: Any, align_corners: bool, half_pixel_centers: bool,
               name: str | None) -> Tensor:
    return apply(op, [images, size], {"align_corners": bool(align_corners),
                                      "half_pixel_centers": bool(half_pixel_centers)},
                 name=name)


def resize_bilinear(images: Any, size: Any, align_corners: bool = False,
                    name: str | None = None, half_pixel_centers: bool = False) -> Tensor:
    """The raw ``ResizeBilinear`` of a 4-D `images` to ``size = [height, width]`` (float32)."""
    return _resize_op("ResizeBilinear", images, size, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(images: Any, size: Any, align_corners: bool = False,
                            name: str | None = None,
                            half_pixel_centers: bool = False) -> Tensor:
    """The raw ``ResizeNearestNeighbor`` of a 4-D `images` to ``size = [height, width]``."""
    return _resize_op("ResizeNearestNeighbor", images, size, align_corners,
                      half_pixel_centers, name)


def _aspect_size(images: Tensor, size: Tensor) -> Tensor:
    """The largest size within `size` that keeps the images' aspect ratio (TF's rounding)."""
    _, height, width, _ = _dimensions(images)
    as_float = [_math.cast(v, dtypes.float32) for v in (size[0], size[1], height, width)]
    factor = _math.minimum(as_float[0] / as_float[2], as_float[1] / as_float[3])
    scaled = [_math.cast(_math.round(factor * v), dtypes.int32) for v in as_float[2:]]
    return _array.stack(scaled, name="size")


def resize_images(images: Any, size: Any, method: int = ResizeMethod.BILINEAR,
                  align_corners: bool = False, preserve_aspect_ratio: bool = False,
                  name: str | None = None) -> Tensor:
    """`images` (3-D or 4-D) resized to ``size = [new_height, new_width]`` with `method`;
    returned unchanged when the size already matches (statically)."""
    with name_scope(name, "resize", [images, size]):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        if images.shape.ndims not in (3, 4):
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        images, is_batch = _batched(images)
        _, height, width, _ = images.shape.as_list()
        try:
            size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        except (TypeError, ValueError) as error:
            raise ValueError("'size' must be a 1-D int32 Tensor") from error
        if size.dtype != dtypes.int32 or not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, "
                             "new_width")
        if preserve_aspect_ratio:
            size = _aspect_size(images, size)
        known = constant_value(size)
        new_height, new_width = (None, None) if known is None else (int(v) for v in known)
        if (new_height, new_width) == (height, width) and height is not None \
                and width is not None:
            return _unbatched(images, is_batch)
        if method == ResizeMethod.BILINEAR:
            resized = resize_bilinear(images, size, align_corners=align_corners)
        elif method == ResizeMethod.NEAREST_NEIGHBOR:
            resized = resize_nearest_neighbor(images, size, align_corners=align_corners)
        elif method == ResizeMethod.BICUBIC:
            resized = _resize_op("ResizeBicubic", images, size, align_corners, False, None)
        elif method == ResizeMethod.AREA:
            resized = apply("ResizeArea", [images, size], {"align_corners": bool(align_corners)})
        else:
            raise ValueError(f"Resize method is not implemented: {method}")
        return _unbatched(resized, is_batch)


# -- flips and rotations --------------------------------------------------------------------------


def _flip(image: Any, axis: int, scope: str) -> Tensor:
    with name_scope(None, scope, [image]) as name:
        image = convert_to_tensor(image, name="image")
        offset = _rank_3_or_4(image) - 3
        return _array.reverse(image, [axis + offset], name=name)


def flip_left_right(image: Any) -> Tensor:
    """`image` mirrored along its width."""
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image: Any) -> Tensor:
    """`image` mirrored along its height."""
    return _flip(image, 0, "flip_up_down")


def transpose_image(image: Any) -> Tensor:
    """`image` with height and width swapped."""
    with name_scope(None, "transpose_image", [image]) as name:
        image = convert_to_tensor(image, name="image")
        perm = [1, 0, 2] if _rank_3_or_4(image) == 3 else [0, 2, 1, 3]
        return _array.transpose(image, perm, name=name)


def _rotations(image: Tensor, rank: int) -> dict[int, Any]:
    h, w = rank - 3, rank - 2
    perm = [1, 0, 2] if rank == 3 else [0, 2, 1, 3]
    return {
        0: lambda: image,
        1: lambda: _array.transpose(_array.reverse(image, [w]), perm),
        2: lambda: _array.reverse(image, [h, w]),
        3: lambda: _array.reverse(_array.transpose(image, perm), [w]),
    }


def rot90(image: Any, k: Any = 1, name: str | None = None) -> Tensor:
    """`image` rotated counter-clockwise by `k` quarter turns (`k` may be a scalar tensor)."""
    with name_scope(name, "rot90", [image, k]) as scope:
        image = convert_to_tensor(image, name="image")
        rank = _rank_3_or_4(image)
        k_tensor = convert_to_tensor(k, dtype=dtypes.int32, name="k")
        if k_tensor.shape.ndims not in (None, 0):
            raise ValueError(f"Shape {k_tensor.shape} must have rank 0")
        turns = _static(k_tensor)
        branches = _rotations(image, rank)
        if turns is not None:
            return _flow.identity(branches[turns % 4](), name=scope)
        quarter = _math.mod(k_tensor, 4)
        pairs = [(_math.equal(quarter, i), branches[i]) for i in (1, 2, 3)]
        return _flow.case(pairs, default=branches[0], exclusive=True, name=scope)


def random_flip_left_right(image: Any, seed: int | None = None) -> Tensor:
    """`image` mirrored along its width with probability 1/2 (each image of a batch on its
    own)."""
    with name_scope(None, "random_flip_left_right", [image]) as scope:
        image = convert_to_tensor(image, name="image")
        rank = _rank_3_or_4(image)
        if rank == 3:
            mirror = _math.less(random_uniform([], 0, 1.0, seed=seed), 0.5)
            return _flow.cond(mirror, lambda: _array.reverse(image, [1]), lambda: image,
                              name=scope)
        batch = _array.shape(image)[0]
        draws = random_uniform(_array.stack([batch]), 0, 1.0, seed=seed)
        flips = _math.cast(_math.round(_array.reshape(draws, _array.stack([batch, 1, 1, 1]))),
                           image.dtype)
        flipped = _array.reverse(image, [2])
        return _math.add(flips * flipped, (1 - flips) * image, name=scope)


# -- crops and pads -------------------------------------------------------------------------------


def crop_to_bounding_box(image: Any, offset_height: Any, offset_width: Any,
                         target_height: Any, target_width: Any) -> Tensor:
    """The ``target_height x target_width`` window of `image` at the given offsets."""
    with name_scope(None, "crop_to_bounding_box", [image]):
        image = convert_to_tensor(image, name="image")
        image, is_batch = _batched(image)
        batch, height, width, depth = _dimensions(image)
        values = [_static(v) for v in (offset_height, offset_width, target_height,
                                       target_width, height, width)]
        oh, ow, th, tw, h, w = values
        _check(None if ow is None else ow >= 0, "offset_width must be >= 0.")
        _check(None if oh is None else oh >= 0, "offset_height must be >= 0.")
        _check(None if tw is None else tw > 0, "target_width must be > 0.")
        _check(None if th is None else th > 0, "target_height must be > 0.")
        _check(None if None in (w, tw, ow) else w >= tw + ow,
               "width must be >= target + offset.")
        _check(None if None in (h, th, oh) else h >= th + oh,
               "height must be >= target + offset.")
        begin = _array.stack([0, offset_height, offset_width, 0])
        size = _array.stack([-1, target_height, target_width, -1])
        cropped = _array.slice(image, begin, size)
        # Slice alone loses the -1 (batch, depth) dims when the offsets are dynamic.
        cropped.set_shape([v if isinstance(v, int) else None
                           for v in (batch, th, tw, depth)])
        return _unbatched(cropped, is_batch)


def pad_to_bounding_box(image: Any, offset_height: Any, offset_width: Any,
                        target_height: Any, target_width: Any) -> Tensor:
    """`image` placed at the given offsets in a zero ``target_height x target_width`` one."""
    with name_scope(None, "pad_to_bounding_box", [image]):
        image = convert_to_tensor(image, name="image")
        image, is_batch = _batched(image)
        batch, height, width, depth = _dimensions(image)
        after_width = target_width - offset_width - width
        after_height = target_height - offset_height - height
        oh, ow = _static(offset_height), _static(offset_width)
        aw, ah = _static(after_width), _static(after_height)
        _check(None if oh is None else oh >= 0, "offset_height must be >= 0")
        _check(None if ow is None else ow >= 0, "offset_width must be >= 0")
        _check(None if aw is None else aw >= 0, "width must be <= target - offset")
        _check(None if ah is None else ah >= 0, "height must be <= target - offset")
        paddings = _array.reshape(_array.stack([0, 0, offset_height, after_height,
                                                offset_width, after_width, 0, 0]), [4, 2])
        padded = _array.pad(image, paddings)
        padded.set_shape([v if isinstance(v, int) else None
                          for v in (batch, _static(target_height), _static(target_width), depth)])
        return _unbatched(padded, is_batch)


def _max(a: Any, b: Any) -> Any:
    return max(a, b) if not isinstance(a, Tensor) and not isinstance(b, Tensor) \
        else _math.maximum(a, b)


def _min(a: Any, b: Any) -> Any:
    return min(a, b) if not isinstance(a, Tensor) and not isinstance(b, Tensor) \
        else _math.minimum(a, b)


def resize_image_with_crop_or_pad(image: Any, target_height: Any, target_width: Any) -> Tensor:
    """`image` centrally cropped and/or zero-padded to ``target_height x target_width``."""
    with name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image = convert_to_tensor(image, name="image")
        image, is_batch = _batched(image)
        th, tw = _static(target_height), _static(target_width)
        _check(None if tw is None else tw > 0, "target_width must be > 0.")
        _check(None if th is None else th > 0, "target_height must be > 0.")
        _, height, width, _ = _dimensions(image)
        width_diff, height_diff = target_width - width, target_height - height
        cropped = crop_to_bounding_box(image, _max(-height_diff // 2, 0),
                                       _max(-width_diff // 2, 0),
                                       _min(target_height, height), _min(target_width, width))
        resized = pad_to_bounding_box(cropped, _max(height_diff // 2, 0),
                                      _max(width_diff // 2, 0), target_height, target_width)
        return _unbatched(resized, is_batch)


def central_crop(image: Any, central_fraction: float) -> Tensor:
    """The central `central_fraction` of `image`'s height and width."""
    with name_scope(None, "central_crop", [image]):
        image = convert_to_tensor(image, name="image")
        if central_fraction <= 0.0 or central_fraction > 1.0:
            raise ValueError("central_fraction must be within (0, 1]")
        if central_fraction == 1.0:
            return image
        _at_least_3d(image)
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError(f"`image` should either be a Tensor with rank = 3 or rank = 4. "
                             f"Had rank = {rank}.")
        height, width = _dimensions(image)[rank - 3:rank - 1]
        starts = []
        for size in (height, width):
            if isinstance(size, Tensor):
                as_float = _math.cast(size, dtypes.float64)
                starts.append(_math.cast((as_float - as_float * central_fraction) / 2,
                                         dtypes.int32))
            else:
                starts.append(int((size - size * central_fraction) / 2))
        sizes = [height - starts[0] * 2, width - starts[1] * 2]
        begin = [*starts, 0] if rank == 3 else [0, *starts, 0]
        extent = [*sizes, -1] if rank == 3 else [-1, *sizes, -1]
        return _array.slice(image, _array.stack(begin), _array.stack(extent))


# -- dtypes and colours ---------------------------------------------------------------------------


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False,
                        name: str | None = None) -> Tensor:
    """`image` in `dtype`, rescaled: floats span ``[0, 1]``, integers ``[0, dtype.max]``;
    `saturate` clips before a cast that could overflow."""
    image = convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating and not dtype.is_integer:
        raise AttributeError("dtype must be either floating point or integer")
    if dtype == image.dtype:
        return _flow.identity(image, name=name)
    with name_scope(name, "convert_image", [image]) as scope:
        cast = _math.saturate_cast if saturate else _math.cast
        if image.dtype.is_integer and dtype.is_integer:
            scale_in, scale_out = int(image.dtype.max), int(dtype.max)
            if scale_in > scale_out:
                # Divide first: in.max lands just below out.max + 1, so the cast is safe.
                scaled = _math.floordiv(image, (scale_in + 1) // (scale_out + 1))
                return cast(scaled, dtype, name=scope)
            widened = cast(image, dtype)
            return _math.multiply(widened, (scale_out + 1) // (scale_in + 1), name=scope)
        if image.dtype.is_floating and dtype.is_floating:
            return _math.cast(image, dtype, name=scope)
        if image.dtype.is_integer:
            return _math.multiply(_math.cast(image, dtype), 1.0 / float(image.dtype.max),
                                  name=scope)
        # The extra half keeps values just below 1.0 from rounding down a level in the cast.
        scaled = _math.multiply(image, float(dtype.max) + 0.5)
        return cast(scaled, dtype, name=scope)


def _float_image(image: Tensor) -> Tensor:
    if image.dtype in (dtypes.float16, dtypes.float32):
        return image
    return convert_image_dtype(image, dtypes.float32)


def adjust_brightness(image: Any, delta: Any) -> Tensor:
    """`delta` added to every component of `image` (in its ``[0, 1]`` float scale)."""
    with name_scope(None, "adjust_brightness", [image, delta]) as name:
        image = convert_to_tensor(image, name="image")
        flt = _float_image(image)
        adjusted = _math.add(flt, _math.cast(delta, flt.dtype), name=name)
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


def adjust_contrast(images: Any, contrast_factor: Any) -> Tensor:
    """Each channel's distance from its mean over the image scaled by `contrast_factor`."""
    with name_scope(None, "adjust_contrast", [images, contrast_factor]) as name:
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is not None and images.shape.ndims < 3:
            raise ValueError(f"Shape must be at least rank 3 but is rank {images.shape.ndims}")
        flt = _float_image(images)
        factor = _math.cast(contrast_factor, flt.dtype)
        mean = _math.reduce_mean(flt, [-3, -2], keepdims=True)
        adjusted = _math.add((flt - mean) * factor, mean, name=name)
        return convert_image_dtype(adjusted, images.dtype, saturate=True)


def rgb_to_grayscale(images: Any, name: str | None = None) -> Tensor:
    """The luma ``0.2989 R + 0.5870 G + 0.1140 B`` of RGB `images`, as one channel."""
    with name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        flt = convert_image_dtype(images, dtypes.float32)
        weights = np.array([0.2989, 0.5870, 0.1140], np.float32)
        gray = _array.expand_dims(_math.tensordot(flt, weights, [-1, -1]), -1)
        return convert_image_dtype(gray, images.dtype, name=scope)


def per_image_standardization(image: Any) -> Tensor:
    """Each image scaled to zero mean and unit variance (float32); the standard deviation is
    floored at ``1 / sqrt(pixels)`` so a uniform image stays finite."""
    with name_scope(None, "per_image_standardization", [image]) as scope:
        image = convert_to_tensor(image, name="image")
        _at_least_3d(image)
        pixels = _math.reduce_prod(_array.shape(image)[-3:])
        image = _math.cast(image, dtypes.float32)
        mean = _math.reduce_mean(image, [-1, -2, -3], keepdims=True)
        variance = _math.reduce_mean(_math.square(image), [-1, -2, -3], keepdims=True) \
            - _math.square(mean)
        stddev = _math.sqrt(apply("Relu", [variance]))
        floor = _math.rsqrt(_math.cast(pixels, dtypes.float32))
        return _math.divide(image - mean, _math.maximum(stddev, floor), name=scope)


# -- random distortions (each draws its parameter once per run) ----------------------------------


def random_crop(value: Any, size: Any, seed: int | None = None,
                name: str | None = None) -> Tensor:
    """A slice of `value` of shape `size` at a uniformly random offset (``tf.random_crop``);
    a `size` larger than `value` fails the run with `InvalidArgumentError`."""
    with name_scope(name, "random_crop", [value, size]) as scope:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = _array.shape(value)
        check = Assert(_math.reduce_all(_math.greater_equal(shape, size)),
                       ["Need value.shape >= size, got ", shape, size], summarize=1000)
        with control_dependencies([check]):
            shape = _flow.identity(shape)
        limit = shape - size + 1
        offset = _math.mod(random_uniform(_array.shape(shape), dtype=dtypes.int32,
                                          maxval=dtypes.int32.max, seed=seed), limit)
        return _array.slice(value, offset, size, name=scope)


def _uniform_delta(max_delta: float, seed: int | None) -> Tensor:
    """A scalar drawn uniformly from ``[-max_delta, max_delta)`` (TF's check of `max_delta`)."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return random_uniform([], -max_delta, max_delta, seed=seed)


def _uniform_factor(lower: float, upper: float, seed: int | None) -> Tensor:
    """A scalar drawn uniformly from ``[lower, upper)`` (TF's checks of the range)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return random_uniform([], lower, upper, seed=seed)


def random_brightness(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """`adjust_brightness` by a delta drawn uniformly from ``[-max_delta, max_delta)``."""
    return adjust_brightness(image, _uniform_delta(max_delta, seed))


def random_contrast(image: Any, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """`adjust_contrast` by a factor drawn uniformly from ``[lower, upper)``."""
    return adjust_contrast(image, _uniform_factor(lower, upper, seed))
