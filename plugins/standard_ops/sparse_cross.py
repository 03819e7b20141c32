"""OpDef of TF 1.15's ``SparseCross`` (``sparse_ops.cc``): the crosses of N sparse and some
dense 2-D features, as strings joined by ``"_X_"`` or as fingerprint hashes.

Contract: inputs are the N sparse features' indices (``[nnz, 2]`` int64), values (int64 or
string, attr ``sparse_types``), dense shapes (``[2]`` int64), then the dense features
(``[batch, k]``, int64 or string, attr ``dense_types``). Outputs are the crossed
`SparseTensor`'s indices ``[?, 2]``, values ``[?]`` of ``out_type`` and dense shape ``[2]``.
Ranks and dtypes that can never work raise here (``ValueError`` / ``TypeError``); whether the
features agree with each other is the kernel's business. Its outputs are integers or strings,
so no gradient flows through it.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.plugins.standard_ops.shape_fns import with_rank

FEATURE_TYPES = frozenset({dtypes.int64, dtypes.string})


def _sparse_cross(ctx: InferContext) -> list[TensorSpec]:
    n = ctx.attr("N")
    sparse_types = list(ctx.attr("sparse_types"))
    dense_types = list(ctx.attr("dense_types"))
    if len(sparse_types) != n:
        raise ctx.type_error(f"{len(sparse_types)} sparse values for {n} sparse indices")
    for what, types in (("values", sparse_types), ("dense_inputs", dense_types)):
        for dtype in types:
            if dtype not in FEATURE_TYPES:
                raise ctx.type_error(f"Value passed to parameter '{what}' has DataType "
                                     f"{dtype.name} not in list of allowed values: int64, "
                                     "string")
    for attr in ("out_type", "internal_type"):
        if dtypes.as_dtype(ctx.attr(attr)) not in FEATURE_TYPES:
            raise ctx.type_error(f"{attr} must be int64 or string, got {ctx.attr(attr)}")
    if ctx.attr("num_buckets") < 0:
        raise ctx.shape_error(f"num_buckets must be >= 0, got {ctx.attr('num_buckets')}")
    for i in range(n):
        with_rank(ctx, i, 2)
        with_rank(ctx, n + i, 1)
        with_rank(ctx, 2 * n + i, 1)
    for i in range(len(dense_types)):
        with_rank(ctx, 3 * n + i, 2)
    return [TensorSpec(dtypes.int64, [None, 2]),
            TensorSpec(dtypes.as_dtype(ctx.attr("out_type")), [None]),
            TensorSpec(dtypes.int64, [2])]


def register(registry: Any) -> None:
    registry.op("SparseCross",
                ["indices:*int64", "values:*sparse_types", "shapes:*int64",
                 "dense_inputs:*dense_types"],
                _sparse_cross,
                attrs={"N": REQUIRED, "hashed_output": REQUIRED, "num_buckets": REQUIRED,
                       "hash_key": REQUIRED, "sparse_types": [], "dense_types": [],
                       "out_type": REQUIRED, "internal_type": REQUIRED})
