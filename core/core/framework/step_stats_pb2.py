"""Alias of ``tensorflow.core.framework.step_stats_pb2``: the step-stats classes that
``RunMetadata.step_stats`` holds."""

from tensorweave.engine.proto.run_metadata import (  # noqa: F401 - re-exported under TF's path
    AllocationRecord,
    AllocatorMemoryUsed,
    DeviceStepStats,
    MemoryStats,
    NodeExecStats,
    NodeOutput,
    StepStats,
)
