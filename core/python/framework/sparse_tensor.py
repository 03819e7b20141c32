"""Alias of ``tensorflow.python.framework.sparse_tensor``: re-exports ``tf.SparseTensor``."""

from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
