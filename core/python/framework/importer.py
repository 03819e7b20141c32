"""Alias of ``tensorflow.python.framework.importer``: re-exports ``tf.import_graph_def``."""

from tensorweave.engine.graph.importer import import_graph_def
