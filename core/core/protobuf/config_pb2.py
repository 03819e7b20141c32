"""Alias of ``tensorflow.core.protobuf.config_pb2``: the session configuration messages (the
very classes ``tw.ConfigProto`` and friends are)."""

from tensorweave.engine.client.config import (  # noqa: F401 - re-exported under TF's path
    ConfigProto,
    GPUOptions,
    GraphOptions,
    OptimizerOptions,
    RunMetadata,
    RunOptions,
)
