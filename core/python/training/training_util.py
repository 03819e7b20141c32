"""Alias of ``tensorflow.python.training.training_util``: re-exports the global-step helpers and
``tf.train.write_graph``.
"""

from tensorweave.train.graph_io import write_graph
from tensorweave.train.training_util import *
