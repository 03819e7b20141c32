"""Alias of ``tensorflow.python.framework.errors``: re-exports `tensorweave.errors`."""

from tensorweave.python.framework.errors_impl import *
