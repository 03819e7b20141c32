"""OpDefs of TF1's small utility ops: ``CheckNumerics``, ``IdentityN``, ``GuaranteeConst``,
``SerializeTensor``/``ParseTensor``, ``Timestamp``, ``MatchingFiles`` and ``DecodeCompressed``.

Contract: signatures, attrs and shape functions follow TF's ``*_ops.cc``. ``CheckNumerics`` and
``Timestamp`` are stateful, so constant folding and CSE never fold or merge them (a check on a
constant still runs, and each ``Timestamp`` reads the clock). Gradients are in ``misc_ops_grad``.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import unchanged, with_rank, with_rank_at_most


def _identity_n(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(spec.dtype, spec.shape) for spec in ctx.inputs]


def _scalar_string(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(dtypes.string, TensorShape([]))]


def _parse_tensor(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    return [TensorSpec(ctx.attr("out_type"), TensorShape(None))]


def _timestamp(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(dtypes.float64, TensorShape([]))]


def _matching_files(ctx: InferContext) -> list[TensorSpec]:
    with_rank_at_most(ctx, 0, 1)
    return [TensorSpec(dtypes.string, TensorShape([None]))]


def _decode_compressed(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(dtypes.string, ctx.shape(0))]


def register(registry: Any) -> None:
    registry.op("CheckNumerics", ["tensor:T"], unchanged, stateful=True,
                attrs={"T": REQUIRED, "message": REQUIRED},
                type_constraints={"T": dtypes.FLOATS})
    registry.op("IdentityN", ["input:*T"], _identity_n, attrs={"T": []}, list_output=True)
    registry.op("GuaranteeConst", ["input:T"], unchanged, attrs={"T": REQUIRED})
    registry.op("SerializeTensor", ["tensor:T"], _scalar_string, attrs={"T": REQUIRED})
    registry.op("ParseTensor", ["serialized:string"], _parse_tensor,
                attrs={"out_type": REQUIRED})
    registry.op("Timestamp", [], _timestamp, stateful=True)
    registry.op("MatchingFiles", ["pattern:string"], _matching_files)
    registry.op("DecodeCompressed", ["bytes:string"], _decode_compressed,
                attrs={"compression_type": ""})
