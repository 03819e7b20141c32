"""Alias of ``tensorflow.core.framework.resource_handle_pb2``: ``ResourceHandleProto``."""

from tensorweave.engine.proto.framework import (  # noqa: F401 - re-exported under TF's path
    ResourceHandleProto,
)
