"""Alias of ``tensorflow.core.framework.node_def_pb2``: the very class ``tw.NodeDef`` is."""

from tensorweave.engine.proto.framework import (  # noqa: F401 - re-exported under TF's path
    NodeDef,
)
