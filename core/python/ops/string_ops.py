"""Alias of ``tensorflow.python.ops.string_ops``: re-exports tensorweave's string ops."""

from tensorweave.api.string_ops import *
