"""Alias of ``tensorflow.core.framework.cost_graph_pb2``: ``RunMetadata.cost_graph``'s class."""

from tensorweave.engine.proto.run_metadata import (  # noqa: F401 - re-exported under TF's path
    CostGraphDef,
)
