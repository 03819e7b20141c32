"""``tw.image`` colour functions (`tensorweave.api.image_color_ops`) and the colour kernels
against `colorsys` and hand-computed references: dtypes, shapes, seeding and errors."""

from __future__ import annotations

import colorsys

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors

RNG = np.random.default_rng(5)


def run(fetches, feed_dict=None):
    with tw.Session() as sess:
        return sess.run(fetches, feed_dict)


def rgb_image(*shape):
    image = RNG.uniform(0, 1, (*shape, 3)).astype(np.float32)
    flat = image.reshape(-1, 3)
    flat[0] = 0.5          # grey: hue and saturation 0
    flat[1] = 0.0          # black
    flat[2] = [0.2, 0.9, 0.2]  # ties between channels
    return image


def per_pixel(fn, image):
    return np.array([fn(*p) for p in image.reshape(-1, 3)]).reshape(image.shape)


def test_rgb_to_hsv_matches_colorsys_and_round_trips():
    image = rgb_image(2, 4, 5)
    hsv = tw.image.rgb_to_hsv(image)
    back = tw.image.hsv_to_rgb(hsv)
    assert hsv.dtype == tw.float32
    got_hsv, got_rgb = run([hsv, back])
    np.testing.assert_allclose(got_hsv, per_pixel(colorsys.rgb_to_hsv, image), atol=1e-6)
    np.testing.assert_allclose(got_rgb, image, atol=1e-6)


def test_hsv_to_rgb_float64_and_rank_1():
    hsv = np.array([0.25, 0.5, 0.8])
    got = run(tw.image.hsv_to_rgb(hsv))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, colorsys.hsv_to_rgb(*hsv), atol=1e-12)


@pytest.mark.parametrize("delta", [0.3, -0.7, 0.0, 1.0])
def test_adjust_hue_matches_colorsys(delta):
    image = rgb_image(3, 4)

    def shifted(r, g, b):
        h, s, v = colorsys.rgb_to_hsv(r, g, b)
        return colorsys.hsv_to_rgb((h + delta) % 1.0, s, v)

    got = run(tw.image.adjust_hue(image, delta))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, per_pixel(shifted, image), atol=2e-6)


@pytest.mark.parametrize("factor", [0.5, 2.0, 0.0])
def test_adjust_saturation_matches_colorsys(factor):
    image = rgb_image(2, 3, 4)

    def scaled(r, g, b):
        h, s, v = colorsys.rgb_to_hsv(r, g, b)
        return colorsys.hsv_to_rgb(h, min(1.0, s * factor), v)

    got = run(tw.image.adjust_saturation(image, factor))
    np.testing.assert_allclose(got, per_pixel(scaled, image), atol=2e-6)


def test_adjust_hue_on_uint8_converts_back():
    image = (rgb_image(4, 4) * 255).astype(np.uint8)
    got = run(tw.image.adjust_hue(image, 0.5))
    assert got.dtype == np.uint8

    def shifted(r, g, b):
        h, s, v = colorsys.rgb_to_hsv(r / 255, g / 255, b / 255)
        return colorsys.hsv_to_rgb((h + 0.5) % 1.0, s, v)

    want = per_pixel(shifted, image.astype(np.float64)) * 255
    assert np.abs(got.astype(np.float64) - want).max() <= 1.0


def test_adjust_gamma_and_its_errors():
    image = (rgb_image(3, 3) * 255).astype(np.uint8)
    got = run(tw.image.adjust_gamma(image, 2.0, gain=1.5))
    want = np.clip(1.5 * (image / 255.0) ** 2 * 255.5, 0, 255).astype(np.uint8)
    assert got.dtype == np.uint8
    assert np.abs(got.astype(int) - want).max() <= 1
    flt = rgb_image(2, 2)
    np.testing.assert_allclose(run(tw.image.adjust_gamma(flt, 0.5)), flt ** 0.5, rtol=1e-6)
    with pytest.raises(ValueError, match="non-negative"):
        tw.image.adjust_gamma(flt, -1.0)
    gamma = tw.placeholder(tw.float32, [])
    with pytest.raises(errors.InvalidArgumentError):
        run(tw.image.adjust_gamma(flt, gamma), {gamma: -1.0})


def test_grayscale_to_rgb_tiles_the_channel():
    gray = RNG.uniform(0, 1, (2, 3, 4, 1)).astype(np.float32)
    rgb = tw.image.grayscale_to_rgb(gray)
    assert rgb.shape.as_list() == [2, 3, 4, 3]
    np.testing.assert_array_equal(run(rgb), np.repeat(gray, 3, axis=-1))
    with pytest.raises(ValueError, match="size 1"):
        tw.image.grayscale_to_rgb(np.zeros((2, 2, 3), np.float32))


def test_random_hue_and_saturation_are_seeded_and_bounded():
    image = rgb_image(4, 4)
    tw.reset_default_graph()
    hue = tw.image.random_hue(image, 0.2, seed=3)
    sat = tw.image.random_saturation(image, 0.5, 1.5, seed=3)
    with tw.Session() as sess:
        first = sess.run([hue, sat])
    with tw.Session() as sess:
        again = sess.run([hue, sat])
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    # the hue draw keeps each pixel's channel range; saturation keeps the value
    np.testing.assert_allclose(first[0].max(-1), image.max(-1), atol=1e-6)
    np.testing.assert_allclose(first[1].max(-1), image.max(-1), atol=1e-6)
    with pytest.raises(ValueError, match="<= 0.5"):
        tw.image.random_hue(image, 0.6)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tw.image.random_saturation(image, 1.0, 0.5)


def test_bad_channels_raise():
    with pytest.raises(ValueError):
        tw.image.rgb_to_hsv(np.zeros((2, 2, 4), np.float32))
    with pytest.raises(ValueError):
        tw.image.adjust_hue(np.zeros((2, 3), np.float32), 0.1)
    with pytest.raises(TypeError):
        tw.image.rgb_to_hsv(np.zeros((2, 2, 3), np.int32))
    image = tw.placeholder(tw.float32, [None, None, None])
    with pytest.raises(errors.InvalidArgumentError, match="3 channels"):
        run(tw.image.adjust_saturation(image, 0.5), {image: np.zeros((2, 2, 2), np.float32)})
