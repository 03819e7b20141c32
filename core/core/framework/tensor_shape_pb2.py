"""Alias of ``tensorflow.core.framework.tensor_shape_pb2``: ``TensorShapeProto``."""

from tensorweave.engine.proto.framework import (  # noqa: F401 - re-exported under TF's path
    TensorShapeProto,
)
