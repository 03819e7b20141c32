"""Alias of ``tensorflow.python.summary.summary``: re-exports `tensorweave.summary`."""

from tensorweave.summary import *
