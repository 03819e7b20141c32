"""Alias of ``tensorflow.core.framework.tensor_pb2``: ``TensorProto`` (``make_tensor_proto``'s)."""

from tensorweave.engine.proto.framework import (  # noqa: F401 - re-exported under TF's path
    TensorProto,
    VariantTensorDataProto,
)
