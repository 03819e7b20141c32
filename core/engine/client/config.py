"""Session configuration and per-run options and metadata, with TF's field names.

Contract: `ConfigProto` carries what a session or server is configured with; `RunOptions` and
`RunMetadata` what one ``Session.run`` asks for and gives back. `RunMetadata`, `StepStats` and
`DeviceStepStats` are the protobuf messages of `tensorweave.engine.proto.run_metadata`:
``partition_graphs`` holds ``GraphDef`` messages, ``step_stats.dev_stats`` one
`DeviceStepStats` per device with a ``NodeExecStats`` per executed node.
"""

from __future__ import annotations

import attrs

from tensorweave.engine.proto.run_metadata import DeviceStepStats, RunMetadata, StepStats

__all__ = ["ConfigProto", "DeviceStepStats", "GPUOptions", "GraphOptions", "OptimizerOptions",
           "RunMetadata", "RunOptions", "StepStats"]

DEFAULT_OPERATION_TIMEOUT_MS = 60_000


@attrs.define
class GPUOptions:
    allow_growth: bool = False
    per_process_gpu_memory_fraction: float = 0.0
    visible_device_list: str = ""
    # Accepted as TF's ("BFC", ""); device memory is the array module's pool either way.
    allocator_type: str = ""


@attrs.define
class OptimizerOptions:
    """TF's graph optimizer options. Accepted with TF's fields and levels; tensorweave's
    passes are chosen by plugin (``TENSORWEAVE_DISABLE_PLUGINS``), not by these."""

    L1 = 0  # TF's Level enum: L1 is the default, L0 turns CSE and folding off
    L0 = -1
    DEFAULT = 0  # TF's GlobalJitLevel enum
    OFF = -1
    ON_1 = 1
    ON_2 = 2

    do_common_subexpression_elimination: bool = False
    do_constant_folding: bool = False
    max_folded_constant_in_bytes: int = 0
    do_function_inlining: bool = False
    opt_level: int = 0
    global_jit_level: int = 0


@attrs.define
class GraphOptions:
    """TF's per-session graph options, with TF's fields (accepted; none changes how
    tensorweave builds or runs a step)."""

    enable_recv_scheduling: bool = False
    optimizer_options: OptimizerOptions = attrs.field(factory=OptimizerOptions)
    build_cost_model: int = 0
    build_cost_model_after: int = 0
    infer_shapes: bool = False
    place_pruned_graph: bool = False
    enable_bfloat16_sendrecv: bool = False
    timeline_step: int = 0


@attrs.define
class ConfigProto:
    """Session/server configuration (the subset of TF's ConfigProto tensorweave honours).
    `device_filters` (TF's partial device names, e.g. ``/job:ps``) limit the tasks a session
    uses: with any, the master contacts and places on only the tasks that match one."""

    device_count: dict[str, int] = attrs.field(factory=dict)
    allow_soft_placement: bool = False
    log_device_placement: bool = False
    inter_op_parallelism_threads: int = 0
    intra_op_parallelism_threads: int = 0
    operation_timeout_in_ms: int = 0
    gpu_options: GPUOptions = attrs.field(factory=GPUOptions)
    graph_options: GraphOptions = attrs.field(factory=GraphOptions)
    device_filters: list[str] = attrs.field(factory=list, converter=list)

    @property
    def timeout_seconds(self) -> float:
        """The step deadline: `operation_timeout_in_ms`, or a finite default when unset."""
        ms = self.operation_timeout_in_ms if self.operation_timeout_in_ms > 0 \
            else DEFAULT_OPERATION_TIMEOUT_MS
        return ms / 1000.0


@attrs.define
class RunOptions:
    """Options of one ``Session.run``."""

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    trace_level: int = 0
    timeout_in_ms: int = 0
    output_partition_graphs: bool = False
