"""Alias of ``tensorflow.python.ops.lookup_ops``: re-exports `tensorweave.lookup`'s tables."""

from tensorweave.api.lookup_ops import *
