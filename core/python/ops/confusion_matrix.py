"""Alias of ``tensorflow.python.ops.confusion_matrix``: re-exports ``tf.confusion_matrix``."""

from tensorweave.api.confusion_matrix import *
