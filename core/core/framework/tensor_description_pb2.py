"""Alias of ``tensorflow.core.framework.tensor_description_pb2``."""

from tensorweave.engine.proto.run_metadata import (  # noqa: F401 - re-exported under TF's path
    TensorDescription,
)
