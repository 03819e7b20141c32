"""Alias of ``tensorflow.python.framework.constant_op``: re-exports ``tf.constant``."""

from tensorweave.framework.constant_op import constant
