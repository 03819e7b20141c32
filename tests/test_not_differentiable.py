"""The ops TF declares not differentiable (`standard_ops.not_differentiable`): a gradient that
reaches one stops, so ``tw.gradients`` gives ``None`` instead of raising `LookupError`."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.api.gradients import gradient_function
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.plugins.standard_ops.not_differentiable import NOT_DIFFERENTIABLE


@pytest.fixture(autouse=True)
def _fresh_graph() -> None:
    tf.reset_default_graph()


def test_every_name_is_a_defined_op_registered_without_gradient() -> None:
    registries = get_registries()
    for name in NOT_DIFFERENTIABLE:
        assert name in registries.ops.names(), name
        assert name in registries.gradients and registries.gradients.get(name) is None, name


def _images() -> tf.Tensor:
    return tf.constant(np.random.default_rng(0).uniform(size=(1, 4, 4, 3)), tf.float32)


@pytest.mark.parametrize("build", [
    lambda x: tf.image.rgb_to_hsv(x),
    lambda x: tf.image.hsv_to_rgb(x),
    lambda x: tf.image.draw_bounding_boxes(x, tf.constant([[[0.1, 0.1, 0.8, 0.8]]])),
    lambda x: tf.image.extract_glimpse(x, [2, 2], tf.constant([[0.0, 0.0]])),
    lambda x: tf.strings.to_number(tf.as_string(tf.reduce_sum(x))),
], ids=["RGBToHSV", "HSVToRGB", "DrawBoundingBoxes", "ExtractGlimpse", "StringToNumber"])
def test_gradient_stops_at_a_not_differentiable_op(build) -> None:
    x = _images()
    y = build(x)
    assert tf.gradients(tf.reduce_sum(y), x) == [None]
    # the other branch of a sum still differentiates normally
    total = tf.reduce_sum(y) + 2.0 * tf.reduce_sum(x)
    grad, = tf.gradients(total, x)
    with tf.Session() as s:
        value = s.run(grad)
    assert value.dtype == np.float32
    np.testing.assert_array_equal(value, np.full((1, 4, 4, 3), 2.0, np.float32))


def test_string_ops_summaries_and_tables_are_declared() -> None:
    x = tf.constant([1.5, 2.5])
    text = tf.as_string(x)
    summary = tf.summary.scalar("loss", tf.reduce_sum(x))
    for t in (text, summary, tf.strings.join([text, text])):
        assert gradient_function(t.op) is None


def test_ops_tf_leaves_unregistered_still_raise() -> None:
    # IgammaGradA has no gradient in TF either: a second derivative in `a` raises
    a = tf.constant([2.0], tf.float64)
    grad_a = tf.gradients(tf.math.igamma(a, tf.constant([1.0], tf.float64)), a)[0]
    with pytest.raises(LookupError, match="IgammaGradA"):
        tf.gradients(grad_a, a)
