"""Alias of ``tensorflow.python.training.saver``: re-exports ``tf.train.Saver`` and the checkpoint
helpers.
"""

from tensorweave.train.meta_graph import export_meta_graph, import_meta_graph
from tensorweave.train.saver import *
