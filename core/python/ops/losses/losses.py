"""Alias of ``tensorflow.python.ops.losses.losses``: re-exports `tensorweave.losses`."""

from tensorweave.namespaces.losses import *
