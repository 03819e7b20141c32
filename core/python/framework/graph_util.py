"""Alias of ``tensorflow.python.framework.graph_util``: re-exports `tensorweave.graph_util`."""

from tensorweave.graph_util import *
