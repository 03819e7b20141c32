"""Alias of ``tensorflow.python.framework.meta_graph``: re-exports meta graph export and import."""

from tensorweave.train.meta_graph import *
