"""Alias of ``tensorflow.python.framework.importer``: re-exports ``tf.import_graph_def``."""

from tensorweave.framework.importer import import_graph_def
