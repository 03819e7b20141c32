"""Alias of ``tensorflow.core.framework.graph_pb2``: the very class ``tw.GraphDef`` is."""

from tensorweave.engine.proto.framework import (  # noqa: F401 - re-exported under TF's path
    GraphDef,
)
