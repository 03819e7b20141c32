"""Alias of ``tensorflow.core.protobuf.control_flow_pb2``: the context messages of the
``cond_context``/``while_context`` collections."""

from tensorweave.formats.control_flow_proto import (  # noqa: F401 - re-exported under TF's path
    CondContextDef,
    ControlFlowContextDef,
    ValuesDef,
    WhileContextDef,
)
