"""tf.contrib.layers' summary helpers: which summaries each adds, their tags and values."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats.summary_proto import Summary


def _values(sess: tf.Session, summaries: list) -> dict:
    merged = Summary.FromString(sess.run(tf.summary.merge(summaries)))
    return {v.tag: v for v in merged.value}


def test_summarize_activation_of_relu_adds_zero_fraction_and_histogram() -> None:
    with tf.Graph().as_default():
        pre = tf.constant([[-1.0, 2.0], [-3.0, 0.5]], name="pre")
        act = tf.nn.relu(pre, name="act")
        hist = tf.contrib.layers.summarize_activation(act)
        summaries = tf.get_collection(tf.GraphKeys.SUMMARIES)
        assert len(summaries) == 2 and hist in summaries
        with tf.Session() as sess:
            values = _values(sess, summaries)
    assert set(values) == {"act/zeros", "act/activation"}
    assert values["act/zeros"].simple_value == pytest.approx(0.5)  # two of four are negative
    histo = values["act/activation"].histo
    assert (histo.min, histo.max, histo.num) == (0.0, 2.0, 4.0)


def test_summarize_activation_of_relu6_also_counts_saturation() -> None:
    with tf.Graph().as_default():
        act = tf.nn.relu6(tf.constant([-1.0, 7.0, 8.0, 1.0]), name="r6")
        tf.contrib.layers.summarize_activation(act)
        with tf.Session() as sess:
            values = _values(sess, tf.get_collection(tf.GraphKeys.SUMMARIES))
    assert values["r6/zeros"].simple_value == pytest.approx(0.25)
    assert values["r6/sixes"].simple_value == pytest.approx(0.5)


def test_summarize_activation_of_other_ops_is_only_a_histogram() -> None:
    with tf.Graph().as_default():
        tf.contrib.layers.summarize_activation(tf.tanh(tf.ones([3]), name="t"))
        assert len(tf.get_collection(tf.GraphKeys.SUMMARIES)) == 1


def test_summarize_tensor_picks_kind_by_rank_and_skips_strings() -> None:
    with tf.Graph().as_default():
        scalar = tf.contrib.layers.summarize_tensor(tf.constant(2.5, name="s"))
        hist = tf.contrib.layers.summarize_tensor(tf.constant([1.0, 3.0], name="h"), tag="mine")
        assert tf.contrib.layers.summarize_tensor(tf.constant("x")) is None
        assert tf.contrib.layers.summarize_tensor(tf.constant(True)) is None
        with tf.Session() as sess:
            values = _values(sess, [scalar, hist])
    assert values["s_summary"].simple_value == 2.5
    assert values["s_summary"].WhichOneof("value") == "simple_value"
    assert values["mine"].histo.num == 2.0 and values["mine"].histo.sum == 4.0


def test_summarize_collections_filter_by_op_name() -> None:
    with tf.Graph().as_default():
        a = tf.Variable(np.ones(3, np.float32), name="layer1/w")
        tf.Variable(np.zeros(2, np.float32), name="layer2/w")
        tf.add_to_collection(tf.GraphKeys.WEIGHTS, a)
        assert len(tf.contrib.layers.summarize_variables()) == 2
        assert len(tf.contrib.layers.summarize_variables(name_filter="layer2")) == 1
        assert len(tf.contrib.layers.summarize_weights()) == 1
        assert tf.contrib.layers.summarize_biases() == []
        tf.add_to_collection(tf.GraphKeys.ACTIVATIONS, tf.nn.relu(a.value(), name="r"))
        assert len(tf.contrib.layers.summarize_activations()) == 1
        # 2 variables + 1 filtered + 1 weight, then the relu: zeros + histogram
        assert len(tf.get_collection(tf.GraphKeys.SUMMARIES)) == 4 + 2


def test_scalar_summary_of_a_vector_fails_at_construction() -> None:
    from tensorweave.contrib.layers_summaries import _scalar

    with tf.Graph().as_default(), pytest.raises(ValueError, match="must have rank 0"):
        _scalar(tf.constant([1.0, 2.0]), "bad")
