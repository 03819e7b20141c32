"""Alias of ``tensorflow.python.layers.layers``: re-exports `tensorweave.layers` (``tf.layers``)."""

from tensorweave.namespaces.layers import *
