"""Alias of ``tensorflow.python.ops.metrics``: re-exports `tensorweave.metrics`."""

from tensorweave.metrics import *
