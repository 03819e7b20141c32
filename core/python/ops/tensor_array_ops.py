"""Alias of ``tensorflow.python.ops.tensor_array_ops``: re-exports ``tf.TensorArray``."""

from tensorweave.api.tensor_array import TensorArray
