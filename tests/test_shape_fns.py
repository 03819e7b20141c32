"""Shared shape functions: broadcasting and the rank checks, on a bare `InferContext`."""

from __future__ import annotations

import pytest

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import (
    broadcast,
    with_rank,
    with_rank_at_least,
    with_rank_at_most,
)


def context(*shapes: list[int | None] | None) -> InferContext:
    inputs = [TensorSpec(dtypes.float32, TensorShape(s)) for s in shapes]
    return InferContext(node_name="n", op="Op", inputs=inputs, attrs={},
                        value_of=lambda i: None)


def test_with_rank_checks_known_ranks_and_fills_unknown_ones() -> None:
    assert with_rank(context([2, None]), 0, 2).as_list() == [2, None]
    assert with_rank(context(None), 0, 3).as_list() == [None, None, None]
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        with_rank(context([2, 3]), 0, 1)


def test_with_rank_bounds() -> None:
    assert with_rank_at_least(context([2, 3, 4]), 0, 2).as_list() == [2, 3, 4]
    assert with_rank_at_least(context(None), 0, 2).ndims is None
    with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
        with_rank_at_least(context([5]), 0, 2)
    assert with_rank_at_most(context([]), 0, 1).as_list() == []
    with pytest.raises(ValueError, match="Shape must be at most rank 1 but is rank 2"):
        with_rank_at_most(context([1, 1]), 0, 1)


def test_broadcast_shapes_and_dtype() -> None:
    [spec] = broadcast()(context([2, 1, 3], [4, 1]))
    assert spec.dtype == dtypes.float32 and spec.shape.as_list() == [2, 4, 3]
    [spec] = broadcast(dtypes.bool_)(context([None, 3], [1]))
    assert spec.dtype == dtypes.bool_ and spec.shape.as_list() == [None, 3]
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        broadcast()(context([2], [3]))
