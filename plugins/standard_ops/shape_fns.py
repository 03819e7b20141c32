"""Shared shape and dtype functions for OpDefs.

Contract: each inference function takes an `InferContext` and returns the output `TensorSpec`s,
raising `ValueError` (via ``ctx.shape_error``) with TF's wording when shapes are incompatible.
`with_rank`, `with_rank_at_least` and `with_rank_at_most` are TF's ``WithRank*`` checks of one
input's rank (an unknown rank passes), for the shape functions of every op module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape, unknown_shape


def with_rank(ctx: InferContext, i: int, rank: int) -> TensorShape:
    """Input `i`'s shape, which must have `rank` dims (all unknown when its rank is unknown)."""
    shape = ctx.shape(i)
    if shape.ndims is None:
        return unknown_shape(rank)
    if shape.ndims != rank:
        raise ctx.shape_error(f"Shape must be rank {rank} but is rank {shape.ndims}")
    return shape


def with_rank_at_least(ctx: InferContext, i: int, rank: int) -> TensorShape:
    """Input `i`'s shape, which must have at least `rank` dims when its rank is known."""
    shape = ctx.shape(i)
    if shape.ndims is not None and shape.ndims < rank:
        raise ctx.shape_error(f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape


def with_rank_at_most(ctx: InferContext, i: int, rank: int) -> TensorShape:
    """Input `i`'s shape, which must have at most `rank` dims when its rank is known."""
    shape = ctx.shape(i)
    if shape.ndims is not None and shape.ndims > rank:
        raise ctx.shape_error(f"Shape must be at most rank {rank} but is rank {shape.ndims}")
    return shape


def unchanged(ctx: InferContext) -> list[TensorSpec]:
    """One output with input 0's dtype and shape."""
    return [ctx.inputs[0]]


def no_outputs(ctx: InferContext) -> list[TensorSpec]:
    return []


def broadcast_shape(ctx: InferContext, a: TensorShape, b: TensorShape) -> TensorShape:
    """numpy/TF broadcasting of two static shapes; unknown dims stay unknown."""
    if a.ndims is None or b.ndims is None:
        return TensorShape(None)
    da, db = list(a.dims), list(b.dims)
    n = max(len(da), len(db))
    da = [1] * (n - len(da)) + da
    db = [1] * (n - len(db)) + db
    out: list[int | None] = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        elif x == y:
            out.append(x)
        else:
            raise ctx.shape_error(f"Dimensions must be equal, but are {x} and {y}")
    return TensorShape(out)


def broadcast(out_dtype: dtypes.DType | None = None) -> Callable[[InferContext], list[TensorSpec]]:
    """Elementwise over broadcast inputs; output dtype is input 0's, or `out_dtype`."""

    def infer(ctx: InferContext) -> list[TensorSpec]:
        shape = ctx.shape(0)
        for i in range(1, len(ctx.inputs)):
            shape = broadcast_shape(ctx, shape, ctx.shape(i))
        return [TensorSpec(out_dtype or ctx.dtype(0), shape)]

    return infer


def fixed(*specs: tuple[dtypes.DType, Sequence[int | None] | None]) -> Callable[..., list]:
    """Outputs of fixed dtype and shape."""
    out = [TensorSpec(d, TensorShape(s)) for d, s in specs]
    return lambda ctx: list(out)
