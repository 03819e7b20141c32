"""Alias of ``tensorflow.python.ops.nn``: re-exports `tensorweave.nn`."""

from tensorweave.namespaces.nn import *
