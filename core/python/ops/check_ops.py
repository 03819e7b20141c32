"""Alias of ``tensorflow.python.ops.check_ops``: re-exports the ``tf.assert_*`` ops."""

from tensorweave.api.check_ops import *
