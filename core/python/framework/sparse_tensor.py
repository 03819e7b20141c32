"""Alias of ``tensorflow.python.framework.sparse_tensor``: re-exports ``tf.SparseTensor``."""

from tensorweave.api.sparse_tensor import SparseTensor, SparseTensorValue
