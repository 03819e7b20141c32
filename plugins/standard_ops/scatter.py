"""OpDefs of the variable scatter updates: ``ScatterUpdate``, ``ScatterAdd``, ... and
``ScatterNdUpdate``, ``ScatterNdAdd``, ``ScatterNdSub``, as TF's ``state_ops.cc``; and of their
value counterparts ``TensorScatterUpdate``, ``TensorScatterAdd``, ``TensorScatterSub``, which
return an updated copy of a tensor (``array_ops.cc``).

Contract: input 0 is a variable ref (the op is placed with its variable); the output is the
variable's new value, of the ref's shape. ``Scatter*`` take ``updates`` of shape
``indices.shape + ref.shape[1:]`` or a scalar; ``ScatterNd*`` take ``updates`` of shape
``indices.shape[:-1] + ref.shape[indices.shape[-1]:]``. A mismatch known at construction is a
``ValueError``; out-of-range indices are found at run time.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape, format_dims
from tensorweave.plugins.standard_ops.shape_fns import with_rank_at_least

# The element-wise combiners; ScatterUpdate and ScatterNdUpdate replace instead.
SCATTER_OPS = ("ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv", "ScatterMax",
               "ScatterMin")
SCATTER_ND_OPS = ("ScatterNdAdd", "ScatterNdSub")
ALL_OPS = ("ScatterUpdate", *SCATTER_OPS, "ScatterNdUpdate", *SCATTER_ND_OPS)
TENSOR_SCATTER_OPS = ("TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub")


def _scatter(ctx: InferContext) -> list[TensorSpec]:
    ref, indices, updates = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    with_rank_at_least(ctx, 0, 1)
    if updates.ndims != 0 and ref.ndims is not None and indices.ndims is not None:
        expected = indices.concatenate(ref[1:])
        if not expected.is_compatible_with(updates):
            raise ctx.shape_error(
                f"Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = "
                f"[], got updates.shape {format_dims(updates)}, indices.shape "
                f"{format_dims(indices)}, params.shape {format_dims(ref)}")
    return [TensorSpec(ctx.dtype(0), ref)]


def _scatter_nd(ctx: InferContext) -> list[TensorSpec]:
    ref, indices, updates = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    with_rank_at_least(ctx, 1, 1)
    if ref.ndims is None or indices.ndims is None or indices[-1] is None:
        return [TensorSpec(ctx.dtype(0), ref)]
    k = indices[-1]
    if k > ref.ndims:
        raise ctx.shape_error(f"Dimensions [{k},{ref.ndims}) of input[shape="
                              f"{format_dims(ref)}] = [] must be a valid range: indices.shape[-1] "
                              f"= {k} exceeds the rank of ref")
    expected = TensorShape(list(indices.dims[:-1]) + list(ref.dims[k:]))
    if not expected.is_compatible_with(updates):
        raise ctx.shape_error(
            f"The shape of updates {format_dims(updates)} must be indices.shape[:-1] + "
            f"ref.shape[indices.shape[-1]:] = {format_dims(expected)}")
    return [TensorSpec(ctx.dtype(0), ref)]


def register(registry: Any) -> None:
    index = {"Tindices": dtypes.INDEX}
    for name, infer in (("ScatterUpdate", _scatter), ("ScatterNdUpdate", _scatter_nd)):
        registry.op(name, ["ref:T", "indices:Tindices", "updates:T"], infer, stateful=True,
                    ref_inputs=(0,), attrs={"T": REQUIRED, "Tindices": None, "use_locking": True},
                    type_constraints=index)
    for name in TENSOR_SCATTER_OPS:  # the shapes of ScatterNd*, on a tensor instead of a ref
        registry.op(name, ["tensor:T", "indices:Tindices", "updates:T"], _scatter_nd,
                    attrs={"T": REQUIRED, "Tindices": None},
                    type_constraints=index if name == "TensorScatterUpdate" else
                    {"T": dtypes.NUMERIC, **index})
    for names, infer in ((SCATTER_OPS, _scatter), (SCATTER_ND_OPS, _scatter_nd)):
        for name in names:
            registry.op(name, ["ref:T", "indices:Tindices", "updates:T"], infer, stateful=True,
                        ref_inputs=(0,),
                        attrs={"T": REQUIRED, "Tindices": None, "use_locking": False},
                        type_constraints={"T": dtypes.NUMERIC, **index})
