"""Alias of ``tensorflow.python.ops.gradients_impl``: re-exports ``tf.gradients`` and
``tf.hessians``."""

from tensorweave.api.gradients import *
from tensorweave.api.hessians import *
