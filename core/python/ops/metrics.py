"""Alias of ``tensorflow.python.ops.metrics``: re-exports `tensorweave.metrics`."""

from tensorweave.namespaces.metrics import *
