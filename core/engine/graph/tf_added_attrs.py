"""The attrs TF 2.x added, with defaults, to ops that tensorweave has without them: what a graph
written by TF 2.x may carry that an importer of TF 1.x ops must accept.

Contract: `HINTS` are attrs that only advise TF's own runtime and never change an op's
outputs (MatMul's ``grad_a``/``grad_b`` mark a gradient's matmuls, ``debug_name`` names a
variable for messages, ``sparse_gradient`` picks the form of a gradient built later); they are
dropped whatever their value. `DEFAULTS` are attrs that can
change what an op does; they are dropped when they hold TF's default (then the op means what
tensorweave's op means) and are an error otherwise. The table was read from TF 2.21's op
registry: every attr with a default that a tensorweave op of the same name lacks.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes

HINTS: dict[str, frozenset[str]] = {
    "MatMul": frozenset({"grad_a", "grad_b"}),
    "BatchMatMulV2": frozenset({"grad_x", "grad_y"}),
    "VarHandleOp": frozenset({"debug_name"}),
    # TF 2.x's choice of an IndexedSlices gradient; the forward values are the same
    **{name: frozenset({"sparse_gradient"}) for name in (
        "SparseSegmentMean", "SparseSegmentMeanWithNumSegments", "SparseSegmentSqrtN",
        "SparseSegmentSqrtNWithNumSegments", "SparseSegmentSum",
        "SparseSegmentSumWithNumSegments")},
}

_SEGMENT_IDS = {"Tsegmentids": dtypes.int32}
_INDICES_POLICY = {"bad_indices_policy": ""}

DEFAULTS: dict[str, dict[str, Any]] = {
    "CTCGreedyDecoder": {"blank_index": -1},
    "InitializeTableFromTextFileV2": {"offset": 0},
    "MaxPool": {"explicit_paddings": []},
    "MaxPoolGrad": {"explicit_paddings": []},
    "NonMaxSuppressionV2": {"T_threshold": dtypes.float32},
    "NonMaxSuppressionV3": {"T_threshold": dtypes.float32},
    "NonMaxSuppressionV4": {"T_threshold": dtypes.float32},
    "SerializeIterator": {"external_state_policy": 0},
    "SparseSegmentMean": _SEGMENT_IDS,
    "SparseSegmentMeanGrad": _SEGMENT_IDS,
    "SparseSegmentMeanWithNumSegments": _SEGMENT_IDS,
    "SparseSegmentSqrtN": _SEGMENT_IDS,
    "SparseSegmentSqrtNGrad": _SEGMENT_IDS,
    "SparseSegmentSqrtNWithNumSegments": _SEGMENT_IDS,
    "SparseSegmentSum": _SEGMENT_IDS,
    "SparseSegmentSumWithNumSegments": _SEGMENT_IDS,
    "TopKV2": {"Tk": dtypes.int32, "index_type": dtypes.int32},
    **{name: _INDICES_POLICY for name in (
        "GatherNd", "ScatterNd", "ScatterNdAdd", "ScatterNdSub", "ScatterNdUpdate",
        "TensorScatterAdd", "TensorScatterSub", "TensorScatterUpdate")},
}
