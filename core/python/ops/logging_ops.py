"""Alias of ``tensorflow.python.ops.logging_ops``: re-exports ``tf.Print`` and ``tf.Assert``."""

from tensorweave.api.logging_ops import *
