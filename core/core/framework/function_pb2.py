"""Alias of ``tensorflow.core.framework.function_pb2``: the function library messages."""

from tensorweave.engine.proto.framework import (  # noqa: F401 - re-exported under TF's path
    FunctionDef,
    FunctionDefLibrary,
    GradientDef,
)
