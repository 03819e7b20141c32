"""Alias of ``tensorflow.python.framework.graph_io``: re-exports ``tf.train.write_graph``."""

from tensorweave.train.graph_io import *
