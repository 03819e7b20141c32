"""Alias of ``tensorflow.python.framework.constant_op``: re-exports ``tf.constant``."""

from tensorweave.engine.graph.constant_op import constant
