"""Alias of ``tensorflow.core.framework.versions_pb2``: ``VersionDef``."""

from tensorweave.engine.proto.framework import (  # noqa: F401 - re-exported under TF's path
    VersionDef,
)
