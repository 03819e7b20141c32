"""Alias of ``tensorflow.python.data.ops.iterator_ops``: re-exports ``tf.data.Iterator``."""

from tensorweave.api.iterator_ops import *
