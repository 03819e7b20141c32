"""``tw.image`` bicubic/area resizes, resize-with-pad and crop_and_resize
(`tensorweave.api.image_resize_ops`) against loop references written from TF's kernels'
documented behaviour: pixel mappings, dtypes, errors and gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tests.numeric import run

RNG = np.random.default_rng(7)


def image(*shape):
    return RNG.uniform(0, 1, shape).astype(np.float32)


def cubic(t, a):
    t = abs(t)
    if t <= 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    if t < 2:
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return 0.0


def cubic_taps(o, in_size, out_size, align, half):
    """(index, weight) pairs of one output pixel, one loop iteration per tap."""
    f32 = np.float32
    scale = (f32(in_size - 1) / f32(out_size - 1) if align and out_size > 1
             else f32(in_size) / f32(out_size))
    src = (f32(o) + f32(0.5)) * scale - f32(0.5) if half else f32(o) * scale
    base = math.floor(src)
    frac = round(float(f32(src) - f32(base)) * 1024) / 1024  # TF tabulates at 1/1024
    a = -0.5 if half else -0.75
    taps = []
    for k in (-1, 0, 1, 2):
        i = base + k
        w = cubic(k - frac, a)
        if half and not 0 <= i < in_size:
            continue
        taps.append((min(max(i, 0), in_size - 1), w))
    if half:
        total = sum(w for _, w in taps)
        taps = [(i, w / total) for i, w in taps]
    return taps


def np_bicubic(img, out_h, out_w, align=False, half=False):
    n, h, w, c = img.shape
    out = np.zeros((n, out_h, out_w, c))
    for y in range(out_h):
        for x in range(out_w):
            for iy, wy in cubic_taps(y, h, out_h, align, half):
                for ix, wx in cubic_taps(x, w, out_w, align, half):
                    out[:, y, x] += wy * wx * img[:, iy, ix]
    return out


def np_area(img, out_h, out_w, align=False):
    n, h, w, c = img.shape

    def spans(o, in_size, out_size):
        scale = ((in_size - 1) / (out_size - 1) if align and out_size > 1
                 else in_size / out_size)
        lo, hi = o * scale, (o + 1) * scale
        result = []
        for i in range(math.floor(lo), math.ceil(hi)):
            overlap = min(i + 1, hi) - max(i, lo)
            result.append((min(max(i, 0), in_size - 1), overlap / scale))
        return result

    out = np.zeros((n, out_h, out_w, c))
    for y in range(out_h):
        for x in range(out_w):
            for iy, wy in spans(y, h, out_h):
                for ix, wx in spans(x, w, out_w):
                    out[:, y, x] += wy * wx * img[:, iy, ix]
    return out


@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("out", [(9, 4), (3, 11), (1, 1)])
def test_resize_bicubic_matches_loop_reference(align, half, out):
    img = image(2, 5, 7, 3)
    got = run(tw.image.resize_bicubic(img, list(out), align_corners=align,
                                      half_pixel_centers=half))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np_bicubic(img, *out, align, half), atol=2e-5)


def test_resize_bicubic_int_input_and_identity():
    img = RNG.integers(0, 255, (1, 4, 4, 1)).astype(np.uint8)
    got = run(tw.image.resize_bicubic(img, [4, 4]))
    np.testing.assert_allclose(got, img.astype(np.float32), atol=1e-4)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("out", [(3, 2), (4, 9), (5, 7)])
def test_resize_area_matches_loop_reference(align, out):
    img = image(2, 5, 7, 2)
    got = run(tw.image.resize_area(img, list(out), align_corners=align))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np_area(img, *out, align), atol=2e-5)


def test_resize_area_averages_blocks():
    img = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    got = run(tw.image.resize_area(img, [2, 2]))
    np.testing.assert_allclose(got[0, :, :, 0], [[2.5, 4.5], [10.5, 12.5]])


def test_resize_images_bicubic_and_area_methods():
    img = image(5, 7, 3)
    bicubic = tw.image.resize_images(img, [9, 4], method=tw.image.ResizeMethod.BICUBIC)
    area = tw.image.resize_images(img, [3, 2], method=tw.image.ResizeMethod.AREA)
    assert bicubic.shape.as_list() == [9, 4, 3]
    got_b, got_a = run([bicubic, area])
    np.testing.assert_allclose(got_b, np_bicubic(img[None], 9, 4)[0], atol=2e-5)
    np.testing.assert_allclose(got_a, np_area(img[None], 3, 2)[0], atol=2e-5)


def test_resize_bicubic_gradient():
    for align, half in [(False, False), (True, False), (False, True)]:
        tw.reset_default_graph()
        x = tw.constant(image(1, 4, 5, 2))
        y = tw.image.resize_bicubic(x, [6, 3], align_corners=align, half_pixel_centers=half)
        with tw.Session():
            err = tw.test.compute_gradient_error(x, [1, 4, 5, 2], y, [1, 6, 3, 2])
        assert err < 1e-3


def test_resize_area_has_no_gradient():
    x = tw.constant(image(1, 4, 4, 1))
    with pytest.raises(LookupError):
        tw.gradients(tw.image.resize_area(x, [2, 2]), x)


def test_resize_errors():
    with pytest.raises(ValueError):
        tw.image.resize_bicubic(image(4, 4, 1), [2, 2])
    with pytest.raises(errors.InvalidArgumentError, match="half_pixel_centers"):
        run(tw.image.resize_bicubic(image(1, 4, 4, 1), [2, 2], align_corners=True,
                                    half_pixel_centers=True))
    size = tw.placeholder(tw.int32, [2])
    with pytest.raises(errors.InvalidArgumentError, match="positive"):
        run(tw.image.resize_area(image(1, 4, 4, 1), size), {size: [0, 2]})


# -- resize with pad --------------------------------------------------------------------------


def test_resize_image_with_pad_keeps_aspect_and_centres():
    img = image(4, 8, 1)
    got = run(tw.image.resize_image_with_pad(img, 6, 6,
                                             method=tw.image.ResizeMethod.NEAREST_NEIGHBOR))
    # ratio 8/6: the image becomes 3 x 6, padded by 1 row above and 2 below
    inner = run(tw.image.resize_images(img, [3, 6],
                                       method=tw.image.ResizeMethod.NEAREST_NEIGHBOR))
    assert got.shape == (6, 6, 1)
    np.testing.assert_array_equal(got[1:4], inner)
    np.testing.assert_array_equal(got[[0, 4, 5]], 0)
    batch = tw.image.resize_image_with_pad(image(2, 4, 8, 3), 6, 6)
    assert run(batch).shape == (2, 6, 6, 3)
    with pytest.raises(ValueError, match="target_width must be > 0"):
        tw.image.resize_image_with_pad(img, 6, 0)


def test_resize_with_crop_or_pad_alias():
    assert tw.image.resize_with_crop_or_pad is tw.image.resize_image_with_crop_or_pad


# -- crop and resize --------------------------------------------------------------------------


def np_crop_and_resize(img, boxes, box_ind, crop, method="bilinear", extrapolation=0.0):
    _, h, w, c = img.shape
    ch, cw = crop
    out = np.zeros((len(boxes), ch, cw, c))
    f32 = np.float32  # TF samples in float32, which decides ties in the nearest method

    def source(start, stop, i, size, crop):
        if crop == 1:
            return float(f32(0.5) * (start + stop) * f32(size - 1))
        step = (stop - start) * f32(size - 1) / f32(crop - 1)
        return float(start * f32(size - 1) + f32(i) * step)

    for b, ((y1, x1, y2, x2), n) in enumerate(zip(boxes, box_ind)):
        for y in range(ch):
            sy = source(y1, y2, y, h, ch)
            for x in range(cw):
                sx = source(x1, x2, x, w, cw)
                if not (0 <= sy <= h - 1 and 0 <= sx <= w - 1):
                    out[b, y, x] = extrapolation
                elif method == "nearest":
                    out[b, y, x] = img[n, int(math.floor(sy + 0.5)), int(math.floor(sx + 0.5))]
                else:
                    y0, x0 = math.floor(sy), math.floor(sx)
                    y1_, x1_ = math.ceil(sy), math.ceil(sx)
                    ly, lx = sy - y0, sx - x0
                    top = img[n, y0, x0] * (1 - lx) + img[n, y0, x1_] * lx
                    bottom = img[n, y1_, x0] * (1 - lx) + img[n, y1_, x1_] * lx
                    out[b, y, x] = top * (1 - ly) + bottom * ly
    return out


BOXES = np.array([[0.1, 0.2, 0.9, 0.7], [0.5, -0.2, 1.3, 0.6], [0.6, 0.6, 0.2, 0.1],
                  [0.3, 0.3, 0.3, 0.3]], np.float32)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("crop", [(3, 4), (1, 5), (1, 1)])
def test_crop_and_resize_matches_loop_reference(method, crop):
    img = image(2, 6, 5, 3)
    box_ind = np.array([0, 1, 1, 0], np.int32)
    got = tw.image.crop_and_resize(img, BOXES, box_ind, list(crop), method=method,
                                   extrapolation_value=-1.0)
    assert got.shape.as_list() == [4, *crop, 3]
    want = np_crop_and_resize(img, BOXES, box_ind, crop, method, -1.0)
    np.testing.assert_allclose(run(got), want, atol=1e-5)


def test_crop_and_resize_int_image_and_box_indices_keyword():
    img = RNG.integers(0, 100, (1, 4, 4, 1)).astype(np.int32)
    got = run(tw.image.crop_and_resize(img, [[0.0, 0.0, 1.0, 1.0]], crop_size=[4, 4],
                                       box_indices=[0]))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, img.astype(np.float32), atol=1e-5)


def test_crop_and_resize_errors():
    img = image(2, 4, 4, 1)
    with pytest.raises(errors.InvalidArgumentError, match="box_index"):
        run(tw.image.crop_and_resize(img, [[0, 0, 1, 1]], [2], [2, 2]))
    with pytest.raises(ValueError):
        tw.image.crop_and_resize(img, [[0, 0, 1]], [0], [2, 2])
    with pytest.raises(ValueError):
        tw.image.crop_and_resize(img, [[0, 0, 1, 1]], [0, 1], [2, 2])
    with pytest.raises(errors.InvalidArgumentError, match="method"):
        run(tw.image.crop_and_resize(img, [[0, 0, 1, 1]], [0], [2, 2], method="bicubic"))


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crop_and_resize_image_gradient(method):
    img = tw.constant(image(2, 5, 6, 2))
    boxes = np.array([[0.1, 0.15, 0.85, 0.9], [0.0, 0.3, 0.6, 0.7]], np.float32)
    out = tw.image.crop_and_resize(img, boxes, [1, 0], [3, 4], method=method)
    with tw.Session():
        err = tw.test.compute_gradient_error(img, [2, 5, 6, 2], out, [2, 3, 4, 2])
    assert err < 1e-3


def test_crop_and_resize_boxes_gradient():
    img = tw.constant(image(1, 6, 7, 2))
    # box corners chosen away from pixel boundaries so the function is smooth there
    start = np.array([[0.13, 0.11, 0.77, 0.83], [0.21, 0.52, 0.47, 0.91]], np.float32)
    boxes = tw.constant(start)
    out = tw.image.crop_and_resize(img, boxes, [0, 0], [3, 4])
    with tw.Session():
        err = tw.test.compute_gradient_error(boxes, [2, 4], out, [2, 3, 4, 2], delta=1e-3,
                                             x_init_value=start)
    assert err < 2e-3
