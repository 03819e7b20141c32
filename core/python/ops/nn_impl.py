"""Alias of ``tensorflow.python.ops.nn_impl``: re-exports `tensorweave.nn`."""

from tensorweave.namespaces.nn import *
