"""Alias of ``tensorflow.python.ops.script_ops``: re-exports ``tf.py_func``."""

from tensorweave.api.script_ops import *
