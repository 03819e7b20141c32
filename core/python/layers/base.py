"""Alias of ``tensorflow.python.layers.base``: re-exports ``tf.layers.Layer``."""

from tensorweave.api.base_layer import Layer
