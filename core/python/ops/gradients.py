"""Alias of ``tensorflow.python.ops.gradients``: re-exports ``tf.gradients`` and
``tf.hessians``."""

from tensorweave.api.gradients import *
from tensorweave.api.hessians import *
