"""tf.image.extract_glimpse (ExtractGlimpse): window placement for each centered/normalized
combination against numpy slicing, noise outside the image, shapes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors

IMAGE = np.arange(2 * 10 * 8 * 2, dtype=np.float32).reshape(2, 10, 8, 2)


def _glimpse(offsets, size=(3, 4), image=IMAGE, **kwargs):
    with tw.Graph().as_default():
        out = tw.image.extract_glimpse(image, list(size), np.asarray(offsets, np.float32),
                                       **kwargs)
        with tw.Session() as sess:
            return out, sess.run(out)


@pytest.mark.parametrize("offsets, kwargs, corners", [
    # centred and normalized: (y, x) in [-1, 1] -> y*h/2 + h/2 - height/2 (TF's 10x10, 3x3
    # window at the centre starts at row 3)
    ([[0.0, 0.0], [0.4, -0.5]], {}, [(3, 2), (5, 0)]),
    # centred pixels from the centre
    ([[1.0, -2.0], [-3.0, 0.0]], {"normalized": False}, [(6, 2), (2, 4)]),
    # uncentered pixels from the corner
    ([[2.0, 1.0], [0.0, 4.0]], {"normalized": False, "centered": False}, [(2, 1), (0, 4)]),
    # normalized, uncentered: the corner itself, scaled (TF 1.x)
    ([[0.5, 0.25], [0.1, 0.0]], {"centered": False}, [(5, 2), (1, 0)]),
])
def test_windows_inside_the_image_are_slices(offsets, kwargs, corners) -> None:
    out, got = _glimpse(offsets, **kwargs)
    assert out.dtype == tw.float32 and out.shape.as_list() == [2, 3, 4, 2]
    assert got.dtype == np.float32
    for b, (top, left) in enumerate(corners):
        np.testing.assert_array_equal(got[b], IMAGE[b, top:top + 3, left:left + 4])


def test_windows_leaving_the_image_keep_the_overlap_and_fill_noise() -> None:
    _, got = _glimpse([[-2.0, -1.0], [8.0, 6.0]], normalized=False, centered=False)
    np.testing.assert_array_equal(got[0, 2:, 1:], IMAGE[0, 0:1, 0:3])
    np.testing.assert_array_equal(got[1, :2, :2], IMAGE[1, 8:10, 6:8])
    noise = np.concatenate([got[0, :2].ravel(), got[1, 2:].ravel(), got[1, :, 2:].ravel()])
    assert (noise >= IMAGE[0].min()).all() and (noise <= IMAGE[1].max()).all()
    assert len(np.unique(noise)) > 10  # uniform noise, not a constant fill


def test_zero_and_gaussian_noise() -> None:
    with tw.Graph().as_default():
        zero = tw.raw_ops.ExtractGlimpse(input=IMAGE, size=[4, 4], offsets=[[20.0, 0], [0, 0]],
                                         uniform_noise=False, noise="zero", centered=False,
                                         normalized=False)
        gauss = tw.raw_ops.ExtractGlimpse(input=IMAGE, size=[4, 4],
                                          offsets=[[20.0, 0], [0, 0]], uniform_noise=False,
                                          centered=False, normalized=False)
        with tw.Session() as sess:
            z, g = sess.run([zero, gauss])
    assert (z[0] == 0).all()
    np.testing.assert_array_equal(z[1], IMAGE[1, :4, :4])
    for c in range(2):
        channel = IMAGE[0, :, :, c]
        assert channel.min() <= g[0, :, :, c].min() and g[0, :, :, c].max() <= channel.max()


def test_dynamic_size_and_errors() -> None:
    with tw.Graph().as_default():
        size = tw.placeholder(tw.int32, [2])
        out = tw.image.extract_glimpse(IMAGE, size, np.zeros((2, 2), np.float32))
        assert out.shape.as_list() == [2, None, None, 2]
        with tw.Session() as sess:
            assert sess.run(out, {size: [5, 1]}).shape == (2, 5, 1, 2)
        with pytest.raises(ValueError):
            tw.image.extract_glimpse(IMAGE[0], [2, 2], np.zeros((2, 2), np.float32))
        with pytest.raises(ValueError):
            tw.image.extract_glimpse(IMAGE, [2, 2], np.zeros((3, 2), np.float32))
        with pytest.raises(ValueError, match="uniform_noise and noise"):
            tw.raw_ops.ExtractGlimpse(input=IMAGE, size=[2, 2], offsets=np.zeros((2, 2)),
                                      noise="zero")
        offsets = tw.placeholder(tw.float32)
        bad = tw.image.extract_glimpse(IMAGE, [2, 2], offsets)
        with tw.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                                 match="first dimension should be batch"):
            sess.run(bad, {offsets: np.zeros((3, 2))})
