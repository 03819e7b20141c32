"""Alias of ``tensorflow.python.ops.linalg_ops``: re-exports tensorweave's linear-algebra ops."""

from tensorweave.api.linalg_ops import *
