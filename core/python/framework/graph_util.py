"""Alias of ``tensorflow.python.framework.graph_util``: re-exports `tensorweave.api.graph_util`."""

from tensorweave.api.graph_util import *
