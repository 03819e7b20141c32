"""``tw.image`` measures and filters (`tensorweave.api.image_measure_ops`) and
``ExtractImagePatches`` against explicit numpy references: values, shapes, dtypes, errors and
gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tw
from tests.numeric import run

RNG = np.random.default_rng(9)


def image(*shape):
    return RNG.uniform(0, 1, shape).astype(np.float32)


def test_total_variation_3d_and_4d():
    img = image(2, 5, 6, 3)
    want = [np.abs(np.diff(x, axis=0)).sum() + np.abs(np.diff(x, axis=1)).sum() for x in img]
    np.testing.assert_allclose(run(tw.image.total_variation(img)), want, rtol=1e-5)
    np.testing.assert_allclose(run(tw.image.total_variation(img[0])), want[0], rtol=1e-5)
    with pytest.raises(ValueError, match="3 or 4"):
        tw.image.total_variation(image(4, 4))


def test_image_gradients_documented_example():
    # TF's docstring: a 5x5 ramp 0..24 has dy = 5 and dx = 1 except the last row/column
    img = np.arange(25, dtype=np.float32).reshape(1, 5, 5, 1)
    dy, dx = run(tw.image.image_gradients(img))
    want_dy = np.full((5, 5), 5.0)
    want_dy[-1] = 0
    want_dx = np.ones((5, 5))
    want_dx[:, -1] = 0
    np.testing.assert_array_equal(dy[0, :, :, 0], want_dy)
    np.testing.assert_array_equal(dx[0, :, :, 0], want_dx)
    with pytest.raises(ValueError, match="4D"):
        tw.image.image_gradients(image(3, 3, 1))


def test_sobel_edges_matches_loop_reference():
    img = image(2, 5, 6, 2)
    padded = np.pad(img, [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    want = np.zeros((*img.shape, 2))
    for y in range(5):
        for x in range(6):
            window = padded[:, y:y + 3, x:x + 3]
            want[:, y, x, :, 0] = np.einsum("bijc,ij->bc", window, ky)
            want[:, y, x, :, 1] = np.einsum("bijc,ij->bc", window, ky.T)
    got = tw.image.sobel_edges(img)
    assert got.shape.as_list() == [2, 5, 6, 2, 2]
    np.testing.assert_allclose(run(got), want, atol=1e-5)


def test_psnr_float_and_uint8():
    a, b = image(2, 8, 8, 3), image(2, 8, 8, 3)
    mse = ((a.astype(np.float64) - b) ** 2).mean(axis=(1, 2, 3))
    got = run(tw.image.psnr(a, b, 1.0))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, 10 * np.log10(1 / mse), rtol=1e-5)
    a8, b8 = (a * 255).astype(np.uint8), (b * 255).astype(np.uint8)
    mse8 = ((a8.astype(np.float64) - b8) ** 2).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(run(tw.image.psnr(a8, b8, 255)), 10 * np.log10(255 ** 2 / mse8),
                               rtol=1e-4)
    with pytest.raises(ValueError):
        tw.image.psnr(image(8, 8, 3), image(8, 7, 3), 1.0)


def np_ssim(x, y, max_val, size=11, sigma=1.5, k1=0.01, k2=0.03):
    coords = np.arange(size) - (size - 1) / 2
    g = np.exp(-(coords[:, None] ** 2 + coords[None, :] ** 2) / (2 * sigma ** 2))
    g /= g.sum()
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    n, h, w, c = x.shape
    out_h, out_w = h - size + 1, w - size + 1
    result = np.zeros((n, c))
    for b in range(n):
        for ch in range(c):
            values = []
            for i in range(out_h):
                for j in range(out_w):
                    px, py = x[b, i:i + size, j:j + size, ch], y[b, i:i + size, j:j + size, ch]
                    mx, my = (g * px).sum(), (g * py).sum()
                    vx = (g * px * px).sum() - mx * mx
                    vy = (g * py * py).sum() - my * my
                    cov = (g * px * py).sum() - mx * my
                    values.append((2 * mx * my + c1) / (mx * mx + my * my + c1)
                                  * (2 * cov + c2) / (vx + vy + c2))
            result[b, ch] = np.mean(values)
    return result.mean(axis=1)


def test_ssim_matches_loop_reference():
    a = image(2, 14, 13, 2)
    b = np.clip(a + 0.1 * RNG.normal(size=a.shape), 0, 1).astype(np.float32)
    got = run(tw.image.ssim(a, b, 1.0))
    np.testing.assert_allclose(got, np_ssim(a, b, 1.0), rtol=1e-4)
    np.testing.assert_allclose(run(tw.image.ssim(a, a, 1.0)), [1, 1], rtol=1e-6)


def test_ssim_multiscale_of_identical_images_is_one_and_orders_noise():
    a = image(1, 40, 40, 1)
    noisy = np.clip(a + 0.2 * RNG.normal(size=a.shape), 0, 1).astype(np.float32)
    slight = np.clip(a + 0.02 * RNG.normal(size=a.shape), 0, 1).astype(np.float32)
    kwargs = {"power_factors": (0.3, 0.3, 0.4), "filter_size": 5}
    same, bad, good = run([tw.image.ssim_multiscale(a, x, 1.0, **kwargs)
                           for x in (a, noisy, slight)])
    np.testing.assert_allclose(same, [1.0], rtol=1e-5)
    assert bad[0] < good[0] < 1.0


def np_patches(img, k, s, r, padding):
    n, h, w, c = img.shape

    def geometry(size, kk, ss, rr):
        eff = kk + (kk - 1) * (rr - 1)
        if padding == "VALID":
            return math.ceil((size - eff + 1) / ss), 0
        out = math.ceil(size / ss)
        return out, max((out - 1) * ss + eff - size, 0) // 2

    oh, ph = geometry(h, k[0], s[0], r[0])
    ow, pw = geometry(w, k[1], s[1], r[1])
    out = np.zeros((n, oh, ow, k[0] * k[1] * c), img.dtype)
    for y in range(oh):
        for x in range(ow):
            for i in range(k[0]):
                for j in range(k[1]):
                    sy, sx = y * s[0] + i * r[0] - ph, x * s[1] + j * r[1] - pw
                    if 0 <= sy < h and 0 <= sx < w:
                        tap = (i * k[1] + j) * c
                        out[:, y, x, tap:tap + c] = img[:, sy, sx]
    return out


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("k,s,r", [((2, 3), (1, 1), (1, 1)), ((3, 2), (2, 3), (1, 2)),
                                   ((1, 1), (2, 2), (1, 1)), ((2, 2), (3, 2), (2, 1))])
def test_extract_image_patches_matches_loop_reference(padding, k, s, r):
    img = RNG.integers(0, 100, (2, 7, 8, 3)).astype(np.int32)
    got = tw.image.extract_image_patches(img, [1, *k, 1], [1, *s, 1], [1, *r, 1], padding)
    want = np_patches(img, k, s, r, padding)
    assert got.shape.as_list() == list(want.shape)
    assert got.dtype == tw.int32
    np.testing.assert_array_equal(run(got), want)


def test_extract_patches_tf2_name_and_errors():
    img = image(1, 4, 4, 1)
    got = run(tw.image.extract_patches(img, sizes=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                                       rates=[1, 1, 1, 1], padding="VALID"))
    np.testing.assert_array_equal(got[0, 0, 0], img[0, :2, :2, 0].reshape(-1))
    with pytest.raises(ValueError):
        tw.image.extract_patches(img, [2, 2], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError):
        tw.image.extract_patches(img, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "FULL")
    with pytest.raises(ValueError):
        tw.image.extract_patches(image(4, 4, 1), [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                                 "VALID")


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_extract_image_patches_gradient(padding):
    x = tw.constant(image(2, 5, 4, 2).astype(np.float64))
    y = tw.image.extract_image_patches(x, [1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 1, 1], padding)
    with tw.Session():
        err = tw.test.compute_gradient_error(x, [2, 5, 4, 2], y, y.shape.as_list())
    assert err < 1e-6


def test_measures_are_differentiable():
    # a noisy ramp: every neighbour difference stays clear of |.|'s kink at 0
    ramp = np.arange(144.0).reshape(1, 12, 12, 1) * 0.01 + RNG.uniform(0, 0.002, (1, 12, 12, 1))
    x = tw.constant(ramp)
    other = image(1, 12, 12, 1).astype(np.float64)
    for y in (tw.image.total_variation(x), tw.image.ssim(x, other, 1.0, filter_size=5)):
        with tw.Session():
            err = tw.test.compute_gradient_error(x, [1, 12, 12, 1], y, y.shape.as_list(),
                                                 x_init_value=ramp)
        assert err < 1e-4
