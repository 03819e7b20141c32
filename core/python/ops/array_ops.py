"""Alias of ``tensorflow.python.ops.array_ops``: re-exports tensorweave's array ops."""

from tensorweave.api.array_ops import *
from tensorweave.api.array_ops_extra import *
from tensorweave.api.sparse_ops import sparse_placeholder
from tensorweave.api.state_ops import placeholder, placeholder_with_default
