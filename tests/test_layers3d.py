"""``tw.layers``' and ``tw.keras.layers``' 3-D convolution and pooling layers
(`tensorweave.api.layers3d`, `tensorweave.keras.convolutional3d`) against ``tw.nn``'s ops with
the layers' own variables."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw

RNG = np.random.default_rng(3)


def run_initialized(fetches):
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        return sess.run(fetches)


def test_conv3d_layer_matches_nn_conv3d():
    x = RNG.standard_normal((2, 5, 4, 6, 3)).astype(np.float32)
    layer = tw.layers.Conv3D(4, (2, 3, 2), strides=(1, 2, 1), padding="same",
                             activation=tw.nn.relu, bias_initializer=tw.ones_initializer())
    y = layer(x)
    assert y.shape.as_list() == [2, 5, 2, 6, 4]
    assert layer.kernel.shape.as_list() == [2, 3, 2, 3, 4]
    want = tw.nn.relu(tw.nn.conv3d(x, layer.kernel, [1, 1, 2, 1, 1], "SAME") + layer.bias)
    got, expected = run_initialized([y, want])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_conv3d_transpose_layer_shapes_and_values():
    x = tw.placeholder(tw.float32, [None, 2, 3, 2, 3])
    layer = tw.layers.Conv3DTranspose(5, 2, strides=2, padding="valid", use_bias=False)
    y = layer(x)
    assert y.shape.as_list() == [None, 4, 6, 4, 5]
    assert layer.kernel.shape.as_list() == [2, 2, 2, 5, 3]
    want = tw.nn.conv3d_transpose(x, layer.kernel, [1, 4, 6, 4, 5], [1, 2, 2, 2, 1], "VALID")
    value = RNG.standard_normal((1, 2, 3, 2, 3)).astype(np.float32)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        got, expected = sess.run([y, want], {x: value})
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["max", "average"])
def test_pooling3d_functions(kind):
    x = RNG.standard_normal((1, 4, 4, 5, 2)).astype(np.float32)
    layer_fn = tw.layers.max_pooling3d if kind == "max" else tw.layers.average_pooling3d
    nn_fn = tw.nn.max_pool3d if kind == "max" else tw.nn.avg_pool3d
    y = layer_fn(x, 2, (2, 2, 1), padding="same")
    assert y.shape.as_list() == [1, 2, 2, 5, 2]
    got, expected = run_initialized([y, nn_fn(x, [1, 2, 2, 2, 1], [1, 2, 2, 1, 1], "SAME")])
    np.testing.assert_allclose(got, expected)


def test_functional_conv3d_creates_named_variables():
    tw.layers.conv3d(tw.zeros([1, 3, 3, 3, 2]), 4, 3, name="vol")
    names = sorted(v.name for v in tw.trainable_variables())
    assert names == ["vol/bias:0", "vol/kernel:0"]


def test_layer_errors():
    with pytest.raises(ValueError, match="tuple of 3 integers"):
        tw.layers.Conv3D(2, (3, 3))
    with pytest.raises(ValueError, match="expected ndim=5"):
        tw.layers.Conv3D(2, 3)(tw.zeros([1, 4, 4, 2]))
    with pytest.raises(ValueError, match="channels_last"):
        tw.layers.MaxPooling3D(2, 2, data_format="channels_first")
    with pytest.raises(TypeError, match="non-floating"):
        tw.layers.Conv3D(2, 1)(tw.zeros([1, 2, 2, 2, 1], dtype=tw.int32))


def test_keras_3d_layers():
    x = RNG.standard_normal((2, 4, 4, 4, 3)).astype(np.float32)
    conv = tw.keras.layers.Conv3D(2, 3, padding="same", activation="relu")
    features = conv(x)
    pooled = tw.keras.layers.MaxPool3D()(features)
    averaged = tw.keras.layers.AveragePooling3D(pool_size=(1, 2, 2))(x)
    up = tw.keras.layers.Conv3DTranspose(1, 2, strides=2)(pooled)
    assert pooled.shape.as_list() == [2, 2, 2, 2, 2]
    assert averaged.shape.as_list() == [2, 4, 2, 2, 3]
    assert up.shape.as_list() == [2, 4, 4, 4, 1]
    assert tw.keras.layers.Convolution3D is tw.keras.layers.Conv3D
    got, conv_out = run_initialized([pooled, features])
    assert (conv_out >= 0).all()
    blocks = conv_out.reshape(2, 2, 2, 2, 2, 2, 2, 2).max(axis=(2, 4, 6))
    np.testing.assert_allclose(got, blocks)
