"""Alias of ``tensorflow.python.summary.summary``: re-exports `tensorweave.summary`."""

from tensorweave.namespaces.summary import *
