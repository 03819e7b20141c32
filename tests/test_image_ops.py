"""``tw.image`` (`tensorweave.api.image_ops`) and the resize ops against numpy references: TF's
pixel mappings, dtypes, 3-D and 4-D images, construction and run-time errors, and gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.plugins.kernels.image import bilinear_weights

RNG = np.random.default_rng(11)


def run(fetches, feed_dict=None):
    with tw.Session() as sess:
        return sess.run(fetches, feed_dict)


def image(*shape, dtype=np.float32):
    return RNG.uniform(0, 1, shape).astype(dtype)


def np_source(x, in_size, out_size, align, half, nearest=False):
    """TF's source coordinate of output pixel `x`, in float32 as TF computes it (float64
    would floor 7.5 * (6 / 9) to 4 where TF gets 5)."""
    f32 = np.float32
    scale = (f32(in_size - 1) / f32(out_size - 1) if align and out_size > 1
             else f32(in_size) / f32(out_size))
    if not half:
        return float(f32(x) * scale)
    centre = (f32(x) + f32(0.5)) * scale
    return float(centre if nearest else centre - f32(0.5))


def np_resize_bilinear(img, out_h, out_w, align=False, half=False):
    """TF's ``ResizeBilinear``, one output pixel at a time."""
    n, h, w, c = img.shape
    out = np.zeros((n, out_h, out_w, c))
    for y in range(out_h):
        sy = np_source(y, h, out_h, align, half)
        y0, y1, ly = max(math.floor(sy), 0), min(math.ceil(sy), h - 1), sy - math.floor(sy)
        for x in range(out_w):
            sx = np_source(x, w, out_w, align, half)
            x0, x1, lx = max(math.floor(sx), 0), min(math.ceil(sx), w - 1), sx - math.floor(sx)
            top = img[:, y0, x0] + (img[:, y0, x1] - img[:, y0, x0]) * lx
            bottom = img[:, y1, x0] + (img[:, y1, x1] - img[:, y1, x0]) * lx
            out[:, y, x] = top + (bottom - top) * ly
    return out


def np_nearest_index(o, in_size, out_size, align, half):
    s = np_source(o, in_size, out_size, align, half, nearest=True)
    i = math.floor(s + 0.5) if align else math.floor(s)
    return max(min(i, in_size - 1), 0)


def np_resize_nearest(img, out_h, out_w, align=False, half=False):
    n, h, w, c = img.shape
    out = np.zeros((n, out_h, out_w, c), img.dtype)
    for y in range(out_h):
        for x in range(out_w):
            out[:, y, x] = img[:, np_nearest_index(y, h, out_h, align, half),
                               np_nearest_index(x, w, out_w, align, half)]
    return out


# -- resize ops -----------------------------------------------------------------------------------


def test_bilinear_pixel_mappings_match_tf_outputs() -> None:
    row = np.array([0.0, 10.0], np.float32).reshape(1, 1, 2, 1)
    cases = {(False, False): [0, 5, 10, 10], (True, False): [0, 10 / 3, 20 / 3, 10],
             (False, True): [0, 2.5, 7.5, 10]}
    for (align, half), want in cases.items():
        y = tw.image.resize_bilinear(row, [1, 4], align_corners=align, half_pixel_centers=half)
        np.testing.assert_allclose(run(y).ravel(), want, rtol=1e-6)


def test_nearest_pixel_mappings_match_tf_outputs() -> None:
    row = np.array([0, 1, 2], np.int32).reshape(1, 1, 3, 1)
    cases = {(False, False): [0, 0, 1, 1, 2], (True, False): [0, 1, 1, 2, 2],
             (False, True): [0, 0, 1, 2, 2]}
    for (align, half), want in cases.items():
        y = tw.image.resize_nearest_neighbor(row, [1, 5], align_corners=align,
                                             half_pixel_centers=half)
        got = run(y)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got.ravel(), want)


@pytest.mark.parametrize("size", [(7, 5), (2, 3), (4, 4), (1, 9)])
@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True)])
def test_resizes_match_the_references(size, align, half) -> None:
    img = image(2, 4, 6, 3)
    bilinear = tw.image.resize_bilinear(img, size, align_corners=align, half_pixel_centers=half)
    nearest = tw.image.resize_nearest_neighbor(img, size, align_corners=align,
                                               half_pixel_centers=half)
    assert bilinear.shape.as_list() == [2, *size, 3] == nearest.shape.as_list()
    got = run([bilinear, nearest])
    np.testing.assert_allclose(got[0], np_resize_bilinear(img, *size, align, half), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(got[1], np_resize_nearest(img, *size, align, half))


def test_resize_dtypes() -> None:
    img = (image(1, 3, 3, 1) * 255).astype(np.uint8)
    got = run([tw.image.resize_bilinear(img, [5, 5]),
               tw.image.resize_nearest_neighbor(img, [5, 5])])
    assert got[0].dtype == np.float32 and got[1].dtype == np.uint8
    np.testing.assert_allclose(got[0], np_resize_bilinear(img.astype(np.float64), 5, 5),
                               rtol=1e-5)
    with pytest.raises(TypeError):
        tw.image.resize_bilinear(np.ones((1, 2, 2, 1), bool), [3, 3])


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float16])
def test_narrow_images_resize_exactly_as_their_float32_values(dtype) -> None:
    # They are gathered as they are and promoted by the weights' product; the cached weights
    # serve images of different values and of different sizes.
    first, second = ((image(2, 9, 13, 3) * 250).astype(dtype) for _ in range(2))
    other = (image(1, 5, 4, 2) * 250).astype(dtype)
    resized = [tw.image.resize_bilinear(x, [7, 21]) for x in (first, second, other)]
    wide = [tw.image.resize_bilinear(x.astype(np.float32), [7, 21]) for x in (first, second, other)]
    area = [tw.image.resize_area(x, [1, 1]) for x in (first, first.astype(np.float32))]
    got = run(resized + wide + area)
    for narrow, float32 in zip(got[:3], got[3:6]):
        assert narrow.dtype == np.float32
        np.testing.assert_array_equal(narrow, float32)
    assert not np.array_equal(got[0], got[1])
    np.testing.assert_array_equal(got[6], got[7])


def test_resize_op_errors() -> None:
    with pytest.raises(ValueError, match="rank 4"):
        tw.image.resize_bilinear(image(3, 3, 1), [2, 2])
    with pytest.raises(ValueError, match="Dimension must be 2"):
        tw.image.resize_bilinear(image(1, 3, 3, 1), [2, 2, 2])
    with pytest.raises(errors.InvalidArgumentError, match="half_pixel_centers is True"):
        run(tw.image.resize_bilinear(image(1, 3, 3, 1), [2, 2], align_corners=True,
                                     half_pixel_centers=True))
    size = tw.placeholder(tw.int32, [2])
    y = tw.image.resize_nearest_neighbor(image(1, 3, 3, 1), size)
    assert y.shape.as_list() == [1, None, None, 1]
    with pytest.raises(errors.InvalidArgumentError, match="output dimensions must be positive"):
        run(y, {size: [0, 2]})


@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True)])
def test_resize_gradients(align, half) -> None:
    for op, size in ((tw.image.resize_bilinear, [5, 3]), (tw.image.resize_bilinear, [2, 2]),
                     (tw.image.resize_nearest_neighbor, [5, 2])):
        x = tw.placeholder(tw.float32, [1, 3, 4, 2])
        y = op(x, size, align_corners=align, half_pixel_centers=half)
        err = tw.test.compute_gradient_error(x, [1, 3, 4, 2], y, [1, *size, 2],
                                             x_init_value=image(1, 3, 4, 2), delta=1e-2)
        assert err < 2e-3, (op, size)


def test_resize_bilinear_gradient_op_dtype() -> None:
    x = tw.constant(image(1, 3, 3, 1).astype(np.float64))
    y = tw.image.resize_bilinear(x, [4, 5])
    (dx,) = tw.gradients(y, x)
    assert dx.op.type == "ResizeBilinearGrad" and dx.dtype == tw.float64
    # Every output pixel's weights sum to one, so a gradient of ones sums to the output count.
    assert run(dx).sum() == pytest.approx(20.0)


# -- resize_images --------------------------------------------------------------------------------


def test_resize_images_3d_4d_methods() -> None:
    img = image(4, 6, 3)
    y3 = tw.image.resize_images(img, [8, 3])
    y4 = tw.image.resize_images(img[None], (8, 3), method=tw.image.ResizeMethod.NEAREST_NEIGHBOR)
    assert y3.shape.as_list() == [8, 3, 3] and y4.shape.as_list() == [1, 8, 3, 3]
    got = run([y3, y4])
    np.testing.assert_allclose(got[0], np_resize_bilinear(img[None], 8, 3)[0], rtol=1e-5)
    np.testing.assert_array_equal(got[1], np_resize_nearest(img[None], 8, 3))
    same = tw.image.resize_images(tw.constant(img), [4, 6])
    assert same.op.type != "ResizeBilinear" and same.shape.as_list() == [4, 6, 3]


def test_resize_images_preserve_aspect_ratio() -> None:
    y = tw.image.resize_images(image(1, 4, 8, 1), [6, 6], preserve_aspect_ratio=True)
    assert run(y).shape == (1, 3, 6, 1)


def test_resize_images_errors() -> None:
    with pytest.raises(ValueError, match="either 3 or 4 dimensions"):
        tw.image.resize_images(image(4, 4), [2, 2])
    with pytest.raises(ValueError, match="contains no shape"):
        tw.image.resize_images(tw.placeholder(tw.float32), [2, 2])
    with pytest.raises(ValueError, match="1-D Tensor of 2 elements"):
        tw.image.resize_images(image(4, 4, 1), [2, 2, 2])
    with pytest.raises(ValueError, match="1-D int32 Tensor"):
        tw.image.resize_images(image(4, 4, 1), [2.5, 2])
    with pytest.raises(ValueError, match="not implemented"):
        tw.image.resize_images(image(4, 4, 1), [2, 2], method=7)


# -- flips, rotations, crops ----------------------------------------------------------------------


def test_flips_transpose_and_rot90() -> None:
    img = image(3, 4, 2)
    batch = image(2, 3, 4, 2)
    fns = [tw.image.flip_left_right(img), tw.image.flip_up_down(img),
           tw.image.transpose_image(img), tw.image.flip_left_right(batch),
           tw.image.flip_up_down(batch), tw.image.transpose_image(batch)]
    want = [img[:, ::-1], img[::-1], img.transpose(1, 0, 2), batch[:, :, ::-1],
            batch[:, ::-1], batch.transpose(0, 2, 1, 3)]
    for got, ref in zip(run(fns), want):
        np.testing.assert_array_equal(got, ref)
    k = tw.placeholder(tw.int32, [])
    dynamic = tw.image.rot90(img, k)
    with tw.Session() as sess:
        for turns in range(-1, 6):
            np.testing.assert_array_equal(sess.run(tw.image.rot90(img, turns)),
                                          np.rot90(img, turns, axes=(0, 1)))
            np.testing.assert_array_equal(sess.run(tw.image.rot90(batch, turns)),
                                          np.rot90(batch, turns, axes=(1, 2)))
            np.testing.assert_array_equal(sess.run(dynamic, {k: turns}),
                                          np.rot90(img, turns, axes=(0, 1)))
    with pytest.raises(ValueError, match="at least three-dimensional"):
        tw.image.flip_left_right(image(3, 4))
    with pytest.raises(ValueError, match="either 3 or 4"):
        tw.image.flip_up_down(image(1, 1, 3, 4, 2))
    with pytest.raises(ValueError, match="must be > 0"):
        tw.image.transpose_image(np.zeros((0, 2, 3), np.float32))


def test_random_flip_left_right_is_seeded_and_flips_both_ways() -> None:
    img = image(2, 3, 1)
    y = tw.image.random_flip_left_right(img, seed=5)
    with tw.Session() as sess:
        outs = [sess.run(y) for _ in range(30)]
    flipped = [np.array_equal(o, img[:, ::-1]) for o in outs]
    assert all(f or np.array_equal(o, img) for f, o in zip(flipped, outs))
    assert 0 < sum(flipped) < 30
    batch = image(16, 2, 3, 1)
    tw.set_random_seed(1)
    yb = tw.image.random_flip_left_right(batch, seed=3)
    first = run(yb)
    for got, orig in zip(first, batch):
        assert np.array_equal(got, orig) or np.array_equal(got, orig[:, ::-1])
    np.testing.assert_array_equal(first, run(yb))  # the same seeds give the same flips


def test_crop_and_pad_to_bounding_box() -> None:
    img = image(5, 6, 2)
    crop = tw.image.crop_to_bounding_box(img, 1, 2, 3, 4)
    pad = tw.image.pad_to_bounding_box(img[None], 1, 2, 7, 9)
    assert crop.shape.as_list() == [3, 4, 2] and pad.shape.as_list() == [1, 7, 9, 2]
    got = run([crop, pad])
    np.testing.assert_array_equal(got[0], img[1:4, 2:6])
    np.testing.assert_array_equal(got[1], np.pad(img[None], [(0, 0), (1, 1), (2, 1), (0, 0)]))
    for args, message in [((-1, 0, 2, 2), "offset_height must be >= 0"),
                          ((0, 0, 0, 2), "target_height must be > 0"),
                          ((0, 3, 2, 4), "width must be >= target \\+ offset")]:
        with pytest.raises(ValueError, match=message):
            tw.image.crop_to_bounding_box(img, *args)
    with pytest.raises(ValueError, match="height must be <= target - offset"):
        tw.image.pad_to_bounding_box(img, 2, 0, 6, 6)
    offset = tw.placeholder(tw.int32, [])
    dynamic = tw.image.crop_to_bounding_box(img, offset, 0, 2, 2)
    np.testing.assert_array_equal(run(dynamic, {offset: 2}), img[2:4, :2])


def test_resize_image_with_crop_or_pad() -> None:
    img = image(5, 4, 1)
    y = tw.image.resize_image_with_crop_or_pad(img, 3, 8)
    assert y.shape.as_list() == [3, 8, 1]
    want = np.pad(img[1:4], [(0, 0), (2, 2), (0, 0)])
    np.testing.assert_array_equal(run(y), want)
    with pytest.raises(ValueError, match="target_width must be > 0"):
        tw.image.resize_image_with_crop_or_pad(img, 3, 0)


def test_central_crop() -> None:
    img = image(2, 8, 6, 1)
    y = tw.image.central_crop(img, 0.5)
    np.testing.assert_array_equal(run(y), img[:, 2:6, 1:5])
    dynamic_in = tw.placeholder(tw.float32, [None, None, 1])
    dynamic = tw.image.central_crop(dynamic_in, 0.5)
    np.testing.assert_array_equal(run(dynamic, {dynamic_in: img[0]}), img[0, 2:6, 1:5])
    assert tw.image.central_crop(img, 1.0) is not None
    with pytest.raises(ValueError, match=r"central_fraction must be within \(0, 1\]"):
        tw.image.central_crop(img, 0.0)
    with pytest.raises(ValueError, match="rank = 3 or rank = 4"):
        tw.image.central_crop(image(1, 1, 4, 4, 1), 0.5)


# -- dtypes and colours ---------------------------------------------------------------------------


def test_convert_image_dtype() -> None:
    u8 = np.array([0, 1, 127, 255], np.uint8).reshape(1, 4, 1)
    f = np.array([0.0, 0.5, 1.0, 1.2, -0.1], np.float32).reshape(1, 5, 1)
    got = run([tw.image.convert_image_dtype(u8, tw.float32),
               tw.image.convert_image_dtype(f, tw.uint8, saturate=True),
               tw.image.convert_image_dtype(u8, tw.int32),
               tw.image.convert_image_dtype(np.array([0, 2 ** 31 - 1], np.int32), tw.uint8),
               tw.image.convert_image_dtype(f, tw.float16)])
    np.testing.assert_allclose(got[0].ravel(), [0, 1 / 255, 127 / 255, 1], rtol=1e-6)
    assert got[1].dtype == np.uint8 and got[1].ravel().tolist() == [0, 127, 255, 255, 0]
    assert got[2].ravel().tolist() == [0, 1 << 23, 127 << 23, 255 << 23]
    assert got[3].ravel().tolist() == [0, 255]
    assert got[4].dtype == np.float16
    same = tw.constant(f)
    assert tw.image.convert_image_dtype(same, tw.float32).op.type == "Identity"
    with pytest.raises(AttributeError, match="floating point or integer"):
        tw.image.convert_image_dtype(u8, tw.bool)


def test_adjust_brightness_and_contrast() -> None:
    u8 = np.array([[[10, 20, 250]]], np.uint8)
    bright = tw.image.adjust_brightness(u8, 0.1)
    f = image(2, 3, 2)
    contrast = tw.image.adjust_contrast(f, 2.0)
    got = run([bright, contrast, tw.image.adjust_brightness(f, -0.25)])
    delta = 0.1 * 255
    assert got[0].dtype == np.uint8
    np.testing.assert_array_equal(got[0], np.clip(np.floor((u8 / 255 + 0.1) * 255.5), 0,
                                                  255).astype(np.uint8))
    assert got[0].ravel().tolist()[2] == 255 and got[0].ravel()[0] > 10 + delta - 1
    mean = f.mean(axis=(0, 1), keepdims=True)
    np.testing.assert_allclose(got[1], (f - mean) * 2 + mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], f - 0.25, rtol=1e-6)


def test_rgb_to_grayscale() -> None:
    rgb = image(2, 3, 4, 3)
    u8 = (rgb * 255).astype(np.uint8)
    got = run([tw.image.rgb_to_grayscale(rgb), tw.image.rgb_to_grayscale(u8)])
    weights = np.array([0.2989, 0.5870, 0.1140])
    assert got[0].shape == (2, 3, 4, 1) and got[1].dtype == np.uint8
    np.testing.assert_allclose(got[0][..., 0], rgb @ weights, rtol=1e-5)
    want = ((u8 / 255.0) @ weights * 255.5).astype(np.uint8)
    assert np.abs(got[1][..., 0].astype(int) - want).max() <= 1


def test_per_image_standardization() -> None:
    imgs = (image(2, 4, 3, 3) * 255).astype(np.uint8)
    got = run(tw.image.per_image_standardization(imgs))
    x = imgs.astype(np.float64)
    mean = x.mean(axis=(1, 2, 3), keepdims=True)
    std = np.maximum(x.std(axis=(1, 2, 3), keepdims=True), 1 / math.sqrt(36))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, (x - mean) / std, rtol=1e-4, atol=1e-5)
    flat = run(tw.image.per_image_standardization(np.full((2, 2, 1), 7.0, np.float32)))
    np.testing.assert_array_equal(flat, np.zeros((2, 2, 1)))
    with pytest.raises(ValueError, match="at least three-dimensional"):
        tw.image.per_image_standardization(image(4, 4))


def test_random_crop_is_a_window_of_the_input() -> None:
    value = np.arange(5 * 4 * 3, dtype=np.float32).reshape(5, 4, 3)
    crop = tw.random_crop(value, [3, 2, 3], seed=7)
    assert crop.shape.as_list() == [3, 2, 3] and tw.image.random_crop is tw.random_crop
    with tw.Session() as sess:
        windows = {tuple(sess.run(crop)[0, 0, :1].tolist()) for _ in range(40)}
        with pytest.raises(errors.InvalidArgumentError, match="Need value.shape >= size"):
            sess.run(tw.random_crop(value, [6, 2, 3]))
    starts = {(r, c) for r in range(3) for c in range(3)}  # offsets 0..2 rows, 0..2 cols
    assert windows <= {(float(value[r, c, 0]),) for r, c in starts} and len(windows) > 3
    out = run(tw.random_crop(value, [3, 2, 3], seed=7))
    r, c = np.argwhere(value[..., 0] == out[0, 0, 0])[0]
    np.testing.assert_array_equal(out, value[r:r + 3, c:c + 2])


def test_random_brightness_and_contrast_draw_one_factor_per_run() -> None:
    img = image(4, 4, 3) * 255
    bright, contrast = run([tw.image.random_brightness(img, 63.0, seed=1),
                            tw.image.random_contrast(img, 0.2, 1.8, seed=2)])
    delta = bright - img
    assert bright.dtype == np.float32 and np.ptp(delta) < 1e-3 and abs(delta[0, 0, 0]) <= 63
    mean = img.mean(axis=(0, 1), keepdims=True)
    factor = (contrast - mean) / (img - mean)
    assert np.ptp(factor) < 1e-3 and 0.2 <= factor.mean() < 1.8
    with pytest.raises(ValueError, match="max_delta must be non-negative"):
        tw.image.random_brightness(img, -1.0)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tw.image.random_contrast(img, 0.5, 0.5)
    with pytest.raises(ValueError, match="lower must be non-negative"):
        tw.image.random_contrast(img, -0.5, 0.5)


def test_crop_to_bounding_box_keeps_batch_and_depth_with_dynamic_offsets() -> None:
    value = image(6, 5, 3)
    offsets = tw.placeholder(tw.int32, [2])
    out = tw.image.crop_to_bounding_box(value, offsets[0], offsets[1], 3, 2)
    assert out.shape.as_list() == [3, 2, 3]
    batch = tw.placeholder(tw.float32, [None, 6, 5, 3])
    assert tw.image.crop_to_bounding_box(batch, offsets[0], 1, 3, 2).shape.as_list() == \
        [None, 3, 2, 3]
    np.testing.assert_array_equal(run(out, {offsets: [2, 1]}), value[2:5, 1:3])


def test_image_of_unknown_rank_is_taken_as_one_3d_image() -> None:
    value = image(6, 5, 3)
    unknown = tw.placeholder(tw.float32)
    padded = tw.image.resize_image_with_crop_or_pad(unknown, 4, 7)
    flipped = tw.image.flip_left_right(unknown)
    standardized = tw.image.per_image_standardization(unknown)
    assert padded.shape.as_list() == [4, 7, None]
    out, flip, std = run([padded, flipped, standardized], {unknown: value})
    np.testing.assert_array_equal(out[:, 1:6], value[1:5])
    np.testing.assert_array_equal(out[:, [0, 6]], 0)
    np.testing.assert_array_equal(flip, value[:, ::-1])
    np.testing.assert_allclose(std, (value - value.mean()) / value.std(), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="'images' contains no shape"):
        tw.image.resize_images(unknown, [2, 2])


def test_resize_bilinear_gradient_of_a_large_upscale_is_the_transposed_product() -> None:
    # each input pixel feeds ~20 outputs: the gradient takes the matrix-product path
    x = tw.constant(image(1, 2, 3, 1))
    (dx,) = tw.gradients(tw.image.resize_bilinear(x, [40, 60]), x)
    rows = bilinear_weights(np, 2, 40, False, False)
    cols = bilinear_weights(np, 3, 60, False, False)
    np.testing.assert_allclose(run(dx)[0, ..., 0], rows.sum(axis=0)[:, None] * cols.sum(axis=0),
                               rtol=1e-5)
