"""Ragged indexing (tensorweave.api.ragged_getitem): ``rt[key]`` against Python's indexing of
the same nested lists, the cases TF refuses, and gradients through a slice."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api.ragged_tensor import RaggedTensor
from tensorweave.engine import errors
from tests.numeric import run
from tests.ragged_support import value

ROWS = [[3, 1, 4, 1], [], [5, 9, 2], [6], [7, 8]]
DEEP = [[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]]
PAIRS = [[[1, 2], [3, 4], [5, 6]], [], [[7, 8]]]


def _python(x: Any, keys: tuple[Any, ...]) -> Any:
    """Python's nested-list indexing: an int picks, a slice maps the rest over the items."""
    if not keys:
        return x
    key, rest = keys[0], keys[1:]
    if isinstance(key, int):
        return _python(x[key], rest)
    return [_python(item, rest) for item in x[key]]


@pytest.mark.parametrize("key", [
    0, -1, 3, (2, 1), (2, -1), slice(1, 3), slice(None, None, 2), slice(None, None, -1),
    slice(-2, None), slice(4, 1, -2), (slice(None), slice(None, 2)), (slice(None), slice(-2, None)),
    (slice(None), slice(1, None)), (slice(1, None), slice(None, -1)),
    (slice(None), slice(None, None, 2)), (slice(None), slice(1, -1)), (slice(None), slice(5, 9)),
])
def test_two_dimensional_keys_match_python(key: Any) -> None:
    rt = tw.ragged.constant(ROWS)
    keys = key if isinstance(key, tuple) else (key,)
    assert value(rt[key]) == _python(ROWS, keys)


@pytest.mark.parametrize("key", [
    1, (3, 0), (3, 0, 1), (slice(None), slice(1, 3)), (slice(None), slice(-1, None)),
    (slice(1, None), slice(None), slice(None, 1)), (slice(None), slice(None), slice(-1, None)),
    (slice(None, None, 2), slice(1, None)), (1, slice(None), slice(None, 1)),
])
def test_two_ragged_dimensions_match_python(key: Any) -> None:
    rt = tw.ragged.constant(DEEP)
    keys = key if isinstance(key, tuple) else (key,)
    assert value(rt[key]) == _python(DEEP, keys)


@pytest.mark.parametrize("key", [
    (slice(None), slice(None), 0), (slice(None), slice(1, None), 1), (0, slice(None), 1),
    (slice(None), slice(None), slice(None, None, -1)),
])
def test_uniform_inner_dimensions_index_like_a_dense_tensor(key: Any) -> None:
    rt = tw.ragged.constant(PAIRS, ragged_rank=1)
    assert value(rt[key]) == _python(PAIRS, key)


def test_result_types_dtypes_and_static_shapes() -> None:
    rt = tw.ragged.constant(PAIRS, ragged_rank=1, dtype=tw.float64)
    row = rt[0]
    assert isinstance(row, tw.Tensor) and row.dtype == tw.float64
    assert row.shape.ndims == 2 and row.shape[1] == 2
    sliced = rt[:, 1:]
    assert isinstance(sliced, RaggedTensor) and sliced.dtype == tw.float64
    assert sliced.shape.as_list() == [3, None, 2]
    column = rt[:, :, 0]
    assert isinstance(column, RaggedTensor) and column.shape.as_list() == [3, None]
    assert isinstance(tw.ragged.constant(DEEP)[0, 1], tw.Tensor)


def test_tensor_keys() -> None:
    rt = tw.ragged.constant(ROWS)
    two = tw.constant(2)
    assert value(rt[two]) == [5, 9, 2]
    assert value(rt[two:]) == ROWS[2:]
    assert value(rt[:, two:]) == [row[2:] for row in ROWS]
    assert value(rt[:, -two:]) == [row[-2:] for row in ROWS]
    assert value(rt[:, :tw.constant(1, tw.int64)]) == [row[:1] for row in ROWS]


def test_ellipsis_and_newaxis() -> None:
    rt = tw.ragged.constant(ROWS)
    assert value(rt[...]) == ROWS
    assert value(rt[..., :2]) == [row[:2] for row in ROWS]
    assert value(rt[1:, ...]) == ROWS[1:]
    outer = rt[tw.newaxis]
    assert outer.shape.as_list() == [1, None, None] and value(outer) == [ROWS]
    wrapped = rt[:, tw.newaxis]
    assert wrapped.ragged_rank == 2 and value(wrapped) == [[row] for row in ROWS]
    assert value(rt[0, tw.newaxis]) == [ROWS[0]]
    pairs = tw.ragged.constant(PAIRS, ragged_rank=1)
    assert value(pairs[..., 1]) == [[p[1] for p in row] for row in PAIRS]


def test_index_into_a_ragged_dimension_is_refused() -> None:
    rt = tw.ragged.constant(ROWS)
    for key in [(slice(None), 0), (slice(1, None), 0), (slice(None), tw.constant(0))]:
        with pytest.raises(ValueError, match="Cannot index into an inner ragged dimension"):
            rt[key]
    with pytest.raises(ValueError, match="Cannot index into an inner ragged dimension"):
        tw.ragged.constant(DEEP)[:, :, 0]


def test_bad_keys_raise() -> None:
    rt = tw.ragged.constant(ROWS)
    with pytest.raises(IndexError, match="Too many indices"):
        rt[..., 0, 0, 0]
    with pytest.raises(TypeError, match="must be integers"):
        rt[1.5]
    with pytest.raises(TypeError, match="slice offsets must be integers"):
        rt[:, 0.5:]
    with pytest.raises(TypeError, match="slice strides must be integers"):
        rt[:, ::0.5]


def test_row_out_of_range_fails_the_step() -> None:
    rt = tw.ragged.placeholder(tw.int32, 1)
    row = rt[tw.constant(7)]
    fed = tw.ragged.RaggedTensorValue(np.array([1, 2], np.int32), np.array([0, 2], np.int64))
    with tw.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(row, {rt: fed})


def test_gradient_flows_through_a_slice() -> None:
    flat = tw.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    rt = tw.RaggedTensor.from_row_splits(flat, [0, 3, 3, 6])
    loss = tw.reduce_sum(rt[:, 1:] * 2.0) + tw.reduce_sum(rt[2])
    grad = run(tw.gradients(loss, flat)[0])
    np.testing.assert_allclose(grad, [0.0, 2.0, 2.0, 1.0, 3.0, 3.0])
