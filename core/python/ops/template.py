"""Alias of ``tensorflow.python.ops.template``: re-exports ``tf.make_template``."""

from tensorweave.api.template import *
