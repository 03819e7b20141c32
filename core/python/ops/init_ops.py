"""Alias of ``tensorflow.python.ops.init_ops``: re-exports tensorweave's initializers."""

from tensorweave.api.init_ops import *
