"""Alias of ``tensorflow.python.ops.sparse_ops``: re-exports tensorweave's sparse ops."""

from tensorweave.api.sparse_cross_ops import *
from tensorweave.api.sparse_ops import *
from tensorweave.api.sparse_ops_extra import *
