"""Alias of ``tensorflow.core.framework.allocation_description_pb2``."""

from tensorweave.engine.proto.run_metadata import (  # noqa: F401 - re-exported under TF's path
    AllocationDescription,
)
