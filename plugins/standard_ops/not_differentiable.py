"""The ops TF 1.15 declares not differentiable (``ops.NotDifferentiable``) that had no
registration here: a gradient reaching one stops there, and ``gradients`` gives ``None`` for
what lies behind it, instead of raising `LookupError`.

Contract: the set is TF's lists (``string_ops``, ``logging_ops``, ``lookup_ops``,
``image_ops_impl``, ``parsing_ops``, ``sparse_grad``, ``array_grad``) restricted to ops that
tensorweave defines. TF's lists name the V1 queue and reader ops only; their V2 ops, which
tensorweave implements, have no registration in TF either (their outputs are strings or come
from a resource handle, so no gradient can reach them), and so none here.
"""

from __future__ import annotations

from typing import Any

NOT_DIFFERENTIABLE = (
    # string_ops
    "RegexReplace", "StringToHashBucket", "StringToHashBucketFast", "StringToHashBucketStrong",
    "ReduceJoin", "StringJoin", "StringSplit", "AsString", "EncodeBase64", "DecodeBase64",
    # logging_ops: summaries
    "HistogramSummary", "ImageSummary", "MergeSummary", "ScalarSummary",
    # lookup_ops: tables
    "LookupTableFindV2", "LookupTableInsertV2", "LookupTableSizeV2", "HashTableV2",
    "InitializeTableV2", "InitializeTableFromTextFileV2", "MutableHashTableV2",
    "MutableHashTableOfTensorsV2",
    # image_ops_impl
    "RGBToHSV", "HSVToRGB", "DrawBoundingBoxes", "SampleDistortedBoundingBoxV2",
    "ExtractGlimpse", "NonMaxSuppressionV2",
    # parsing_ops
    "DecodeRaw", "StringToNumber",
    # sparse_grad, array_grad
    "SparseAddGrad", "Const",
)


def register_gradients(registry: Any) -> None:
    for name in NOT_DIFFERENTIABLE:
        registry.add(name, None)
