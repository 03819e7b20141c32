"""tf.nn.with_space_to_batch against dilated convolutions computed directly, its spatial_dims
and data_format handling and TF's errors (the fractional pools are in test_fractional_pool)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw

RNG = np.random.default_rng(8)
X = RNG.normal(size=(2, 9, 10, 3)).astype(np.float32)
W = RNG.normal(size=(3, 2, 3, 4)).astype(np.float32)


def _conv(inp, num_spatial_dims, padding):
    assert num_spatial_dims == 2
    return tw.nn.conv2d(inp, W, [1, 1, 1, 1], padding)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("rate", [[2, 3], [1, 1], [3, 1]])
def test_matches_dilated_conv2d(padding, rate):
    with tw.Graph().as_default():
        got = tw.nn.with_space_to_batch(X, rate, padding, _conv, filter_shape=W.shape[:2])
        want = tw.nn.conv2d(X, W, [1, 1, 1, 1], padding, dilations=[1, *rate, 1])
        assert got.shape.as_list() == want.shape.as_list()
        with tw.Session() as sess:
            a, b = sess.run([got, want])
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_dynamic_spatial_sizes():
    with tw.Graph().as_default():
        p = tw.placeholder(tw.float32, [None, None, None, 3])
        got = tw.nn.with_space_to_batch(p, [2, 2], "SAME", _conv, filter_shape=[3, 2])
        want = tw.nn.conv2d(p, W, [1, 1, 1, 1], "SAME", dilations=[1, 2, 2, 1])
        with tw.Session() as sess:
            a, b = sess.run([got, want], {p: X})
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_spatial_dims_with_a_gap_dilate_only_those_dims():
    w_row = W[:1]  # a 1 x 2 filter: only the width is convolved

    def conv_width(inp, num_spatial_dims, padding):
        assert num_spatial_dims == 1
        return tw.nn.conv2d(inp, w_row, [1, 1, 1, 1], padding)

    with tw.Graph().as_default():
        got = tw.nn.with_space_to_batch(X, [3], "VALID", conv_width, spatial_dims=[2])
        want = tw.nn.conv2d(X, w_row, [1, 1, 1, 1], "VALID", dilations=[1, 1, 3, 1])
        with tw.Session() as sess:
            a, b = sess.run([got, want])
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_channels_first_data_format_uses_dims_2_and_3():
    seen = {}

    def record(inp, num_spatial_dims, padding):
        seen["shape"] = inp.shape.as_list()
        return inp

    with tw.Graph().as_default():
        x = np.arange(1 * 2 * 4 * 6, dtype=np.float32).reshape(1, 2, 4, 6)
        out = tw.nn.with_space_to_batch(x, [2, 3], "VALID", record, data_format="NCHW")
        assert seen["shape"] == [6, 2, 2, 2]
        with tw.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), x)  # identity op round-trips


def test_errors():
    with tw.Graph().as_default():
        with pytest.raises(ValueError, match="filter_shape must be specified"):
            tw.nn.with_space_to_batch(X, [2, 2], "SAME", _conv)
        with pytest.raises(ValueError, match="rate must be positive"):
            tw.nn.with_space_to_batch(X, [0, 2], "VALID", _conv)
        with pytest.raises(ValueError, match="monotonically increasing"):
            tw.nn.with_space_to_batch(X, [2, 2], "VALID", _conv, spatial_dims=[2, 1])
        with pytest.raises(ValueError, match="Invalid padding"):
            tw.nn.with_space_to_batch(X, [2, 2], "FULL", _conv)
        with pytest.raises(ValueError, match="must be known"):
            tw.nn.with_space_to_batch(X, tw.placeholder(tw.int32, [2]), "VALID", _conv)
