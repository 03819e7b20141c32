"""Alias of ``tensorflow.core.framework.op_def_pb2``: ``OpDef`` and ``OpList``."""

from tensorweave.engine.proto.framework import (  # noqa: F401 - re-exported under TF's path
    OpDef,
    OpList,
)
