"""`RaggedTensor` and `RaggedTensorValue` (tensorweave.api.ragged_tensor): factories
against hand-made lists, static shapes and dtypes, partition checks at construction and at run
time, conversions to dense and sparse, and fetching and feeding through a session."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api.ragged_tensor import RaggedTensor, RaggedTensorValue
from tensorweave.engine import errors

ROWS = [[3, 1, 4, 1], [], [5, 9, 2], [6]]
VALUES = [3, 1, 4, 1, 5, 9, 2, 6]


def _run(fetches: Any, feed: dict | None = None) -> Any:
    with tw.Session() as sess:
        return sess.run(fetches, feed)


def _rows(rt: RaggedTensor, feed: dict | None = None) -> list[Any]:
    value = _run(rt, feed)
    assert isinstance(value, RaggedTensorValue)
    return value.to_list()


# --- factories -------------------------------------------------------------------------------

@pytest.mark.parametrize("build", [
    lambda: RaggedTensor.from_row_splits(VALUES, [0, 4, 4, 7, 8]),
    lambda: RaggedTensor.from_row_lengths(VALUES, [4, 0, 3, 1]),
    lambda: RaggedTensor.from_value_rowids(VALUES, [0, 0, 0, 0, 2, 2, 2, 3]),
    lambda: RaggedTensor.from_value_rowids(VALUES, [0, 0, 0, 0, 2, 2, 2, 3], nrows=4),
    lambda: RaggedTensor.from_row_starts(VALUES, [0, 4, 4, 7]),
    lambda: RaggedTensor.from_row_limits(VALUES, [4, 4, 7, 8]),
    lambda: RaggedTensor.from_tensor([[3, 1, 4, 1], [0, 0, 0, 0], [5, 9, 2, 0], [6, 0, 0, 0]],
                                     padding=0),
    lambda: RaggedTensor.from_tensor([[3, 1, 4, 1], [7, 7, 7, 7], [5, 9, 2, 7], [6, 7, 7, 7]],
                                     lengths=[4, 0, 3, 1]),
    lambda: RaggedTensor.from_sparse(tw.SparseTensor(
        [[0, 0], [0, 1], [0, 2], [0, 3], [2, 0], [2, 1], [2, 2], [3, 0]], VALUES, [4, 5])),
])
def test_every_factory_builds_the_same_rows(build: Any) -> None:
    rt = build()
    assert rt.dtype == tw.int32 and rt.ragged_rank == 1
    assert rt.row_splits.dtype == tw.int64
    assert _rows(rt) == ROWS
    splits, lengths, rowids, nrows = _run([rt.row_splits, rt.row_lengths(), rt.value_rowids(),
                                           rt.nrows()])
    assert splits.tolist() == [0, 4, 4, 7, 8] and lengths.tolist() == [4, 0, 3, 1]
    assert rowids.tolist() == [0, 0, 0, 0, 2, 2, 2, 3] and nrows == 4
    assert nrows.dtype == np.int64 and rowids.dtype == np.int64


def test_value_rowids_can_leave_trailing_rows_empty() -> None:
    rt = RaggedTensor.from_value_rowids([1.0, 2.0], [1, 1], nrows=4)
    assert _rows(rt) == [[], [1.0, 2.0], [], []]
    assert rt.dtype == tw.float32


def test_from_tensor_keeps_whole_rows_and_inner_dimensions() -> None:
    dense = np.arange(12, dtype=np.float64).reshape(2, 3, 2)
    rt = RaggedTensor.from_tensor(dense)
    assert rt.shape.as_list() == [2, None, 2] and rt.dtype == tw.float64
    assert _rows(rt) == dense.tolist()
    deep = RaggedTensor.from_tensor(dense, ragged_rank=2)
    assert deep.ragged_rank == 2 and deep.shape.as_list() == [2, None, None]
    assert _rows(deep) == dense.tolist()


def test_from_tensor_padding_compares_whole_inner_entries() -> None:
    dense = [[[1, 1], [0, 0], [0, 0]], [[0, 0], [2, 0], [0, 0]], [[0, 0], [0, 0], [0, 0]]]
    rt = RaggedTensor.from_tensor(dense, padding=[0, 0])
    assert _rows(rt) == [[[1, 1]], [[0, 0], [2, 0]], []]


def test_from_tensor_lengths_are_clipped_to_the_row_width() -> None:
    rt = RaggedTensor.from_tensor([[1, 2], [3, 4]], lengths=[5, -1])
    assert _rows(rt) == [[1, 2], []]


def test_nested_factories_build_ragged_rank_two() -> None:
    by_splits = RaggedTensor.from_nested_row_splits([1, 2, 3, 4, 5], [[0, 2, 3], [0, 1, 3, 5]])
    by_lengths = RaggedTensor.from_nested_row_lengths([1, 2, 3, 4, 5], [[2, 1], [1, 2, 2]])
    for rt in (by_splits, by_lengths):
        assert rt.ragged_rank == 2 and rt.shape.as_list() == [2, None, None]
        assert _rows(rt) == [[[1], [2, 3]], [[4, 5]]]
        assert len(rt.nested_row_splits) == 2
    lengths = _run(list(by_splits.nested_row_lengths()))
    assert [x.tolist() for x in lengths] == [[2, 1], [1, 2, 2]]
    assert _rows(by_splits.row_lengths(axis=2)) == [[1, 2], [2]]


def test_int32_partitions_stay_int32_and_must_match_nested_ones() -> None:
    rt = RaggedTensor.from_row_splits([1, 2, 3], np.array([0, 1, 3], np.int32))
    assert rt.row_splits.dtype == tw.int32 and rt.nrows().dtype == tw.int32
    assert _run(rt.with_row_splits_dtype(tw.int64).row_splits).dtype == np.int64
    with pytest.raises(ValueError, match="dtype mismatch"):
        RaggedTensor.from_row_splits(rt, [0, 2])


# --- static shape and structure --------------------------------------------------------------

def test_static_shape_has_none_for_ragged_dimensions() -> None:
    values = tw.placeholder(tw.float32, [None, 3])
    splits = tw.placeholder(tw.int64, [5])
    rt = RaggedTensor.from_row_splits(values, splits, validate=False)
    assert rt.shape.as_list() == [4, None, 3]
    assert rt.flat_values is values and rt.values is values
    unknown = RaggedTensor.from_row_splits(values, tw.placeholder(tw.int64, [None]))
    assert unknown.shape.as_list() == [None, None, 3]


def test_with_values_and_with_flat_values_keep_the_partitions() -> None:
    rt = tw.ragged.constant([[[1, 2], [3]], [[4]]])
    doubled = rt.with_flat_values(rt.flat_values * 2)
    assert doubled.nested_row_splits == rt.nested_row_splits
    assert _rows(doubled) == [[[2, 4], [6]], [[8]]]
    floats = rt.with_values(rt.values.with_values(tw.cast(rt.flat_values, tw.float32)))
    assert floats.dtype == tw.float32 and _rows(floats) == [[[1.0, 2.0], [3.0]], [[4.0]]]


def test_bounding_shape_is_the_longest_of_each_dimension() -> None:
    rt = tw.ragged.constant([[[1, 2], [3]], [[4, 5, 6]], []])
    shape = _run(rt.bounding_shape())
    assert shape.tolist() == [3, 2, 3] and shape.dtype == np.int64
    assert _run(rt.bounding_shape(axis=1)) == 2


def test_indexing_picks_one_row() -> None:
    rt = tw.ragged.constant(ROWS)
    first, empty, last = _run([rt[0], rt[1], rt[-1]])
    assert first.tolist() == [3, 1, 4, 1] and empty.tolist() == [] and last.tolist() == [6]
    nested = tw.ragged.constant([[[1], [2, 3]], [[4, 5]]])
    assert _rows(nested[0]) == [[1], [2, 3]]
    assert _run(rt[tw.constant(2)]).tolist() == [5, 9, 2]
    with pytest.raises(TypeError, match="must be integers"):
        rt[1.5]


def test_a_ragged_tensor_is_not_a_tensor() -> None:
    rt = tw.ragged.constant(ROWS)
    with pytest.raises(TypeError, match="Failed to convert"):
        tw.convert_to_tensor(rt)
    with pytest.raises(TypeError):
        tw.matmul(rt, rt)


def test_the_constructor_is_private_and_checks_its_parts() -> None:
    with pytest.raises(ValueError, match="constructor is private"):
        RaggedTensor(tw.constant([1]), tw.constant(np.array([0, 1], np.int64)))
    with pytest.raises(ValueError, match="row_splits must have dtype int32 or int64"):
        RaggedTensor.from_row_splits([1, 2], tw.constant([0.0, 2.0]))
    with pytest.raises(ValueError, match="must have rank 1"):
        RaggedTensor.from_row_splits([1, 2], [[0, 2]])
    with pytest.raises(ValueError, match="rank at least 1"):
        RaggedTensor.from_row_splits(1, [0, 1])
    with pytest.raises(ValueError, match="rank\\(st_input\\) must be 2"):
        RaggedTensor.from_sparse(tw.SparseTensor([[0, 0, 0]], [1], [1, 1, 1]))
    with pytest.raises(ValueError, match="lengths or padding"):
        RaggedTensor.from_tensor([[1]], lengths=[1], padding=0)
    with pytest.raises(ValueError, match="ragged_rank must be smaller"):
        RaggedTensor.from_tensor([[1]], ragged_rank=2)


# --- partition checks ------------------------------------------------------------------------

@pytest.mark.parametrize("splits, reason", [
    ([1, 2, 3], "zero"), ([0, 3, 2, 3], "monotonic"), ([0, 1, 2], "sum"),
])
def test_bad_constant_splits_fail_at_construction(splits: list[int], reason: str) -> None:
    with pytest.raises(errors.InvalidArgumentError):
        RaggedTensor.from_row_splits([1, 2, 3], splits)


@pytest.mark.parametrize("splits", [[1, 2, 3], [0, 3, 2, 3], [0, 1, 2]])
def test_bad_fed_splits_fail_the_step(splits: list[int]) -> None:
    fed = tw.placeholder(tw.int64, [None])
    rt = RaggedTensor.from_row_splits([1, 2, 3], fed)
    with pytest.raises(errors.InvalidArgumentError, match="from_row_splits"):
        _run(rt.to_tensor(), {fed: splits})
    assert _rows(rt, {fed: [0, 1, 3]}) == [[1], [2, 3]]


@pytest.mark.parametrize("build", [
    lambda p: RaggedTensor.from_row_lengths([1, 2, 3], p),
    lambda p: RaggedTensor.from_value_rowids([1, 2, 3], p, nrows=2),
])
@pytest.mark.parametrize("partition", [[2, -1, 2], [1, 0, 3], [0, 1]])
def test_bad_lengths_and_rowids_fail_the_step(build: Any, partition: list[int]) -> None:
    fed = tw.placeholder(tw.int64, [None])
    rt = build(fed)
    with pytest.raises(errors.InvalidArgumentError, match="do not form a valid RaggedTensor"):
        _run(rt.to_tensor(), {fed: partition})


def test_from_sparse_refuses_gaps_at_run_time() -> None:
    indices = tw.placeholder(tw.int64, [None, 2])
    rt = RaggedTensor.from_sparse(tw.SparseTensor(indices, [1, 2], [2, 3]))
    with pytest.raises(errors.InvalidArgumentError, match="not right-ragged"):
        _run(rt.to_tensor(), {indices: [[0, 0], [1, 1]]})
    assert _rows(rt, {indices: [[0, 0], [1, 0]]}) == [[1], [2]]


# --- conversions -----------------------------------------------------------------------------

def test_to_tensor_pads_with_zero_or_the_default() -> None:
    rt = tw.ragged.constant(ROWS)
    dense, padded = _run([rt.to_tensor(), rt.to_tensor(default_value=-1)])
    assert dense.dtype == np.int32
    assert dense.tolist() == [[3, 1, 4, 1], [0, 0, 0, 0], [5, 9, 2, 0], [6, 0, 0, 0]]
    assert padded.tolist()[1] == [-1, -1, -1, -1]
    assert rt.to_tensor().shape[0] == 4
    fed = RaggedTensor.from_row_splits([1, 2], tw.placeholder(tw.int64, [3]))
    assert fed.to_tensor().shape.as_list() == [2, None]


def test_to_tensor_of_strings_and_of_nested_rows() -> None:
    words = tw.ragged.constant([["a", "b"], [], ["c"]])
    assert _run(words.to_tensor()).tolist() == [[b"a", b"b"], [b"", b""], [b"c", b""]]
    nested = tw.ragged.constant([[[1.5], [2.5, 3.5]], [[4.5, 5.5, 6.5]]])
    dense = _run(nested.to_tensor(default_value=9.0))
    expected = [[[1.5, 9, 9], [2.5, 3.5, 9]], [[4.5, 5.5, 6.5], [9, 9, 9]]]
    np.testing.assert_array_equal(dense, expected)
    assert dense.dtype == np.float32


def test_to_tensor_of_no_rows_is_empty() -> None:
    empty = RaggedTensor.from_row_splits(tw.zeros([0, 2]), [0])
    assert _run(empty.to_tensor()).shape == (0, 0, 2)


def test_to_tensor_default_must_fit_the_inner_shape() -> None:
    rt = RaggedTensor.from_row_splits(tw.zeros([2, 3]), [0, 2])
    with pytest.raises(ValueError, match="does not broadcast"):
        rt.to_tensor(default_value=[[1.0, 2.0, 3.0]])
    assert _run(rt.to_tensor(default_value=[1.0, 2.0, 3.0])).shape == (1, 2, 3)


def test_to_sparse_indexes_every_value_in_row_major_order() -> None:
    rt = tw.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])
    st = _run(rt.to_sparse())
    assert st.indices.tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [2, 0, 0], [2, 0, 1],
                                   [2, 0, 2]]
    assert st.values.tolist() == [1, 2, 3, 4, 5, 6]
    assert st.dense_shape.tolist() == [3, 2, 3]
    inner = RaggedTensor.from_row_lengths([[1, 2], [3, 4], [5, 6]], [1, 2])
    st = _run(inner.to_sparse())
    assert st.indices.tolist() == [[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 0, 1], [1, 1, 0],
                                   [1, 1, 1]]
    assert st.dense_shape.tolist() == [2, 2, 2]


def test_sparse_round_trip() -> None:
    rt = tw.ragged.constant(ROWS)
    back = RaggedTensor.from_sparse(rt.to_sparse())
    assert _rows(back) == ROWS


def test_row_partition_conversions_match_python() -> None:
    ids = tw.ragged.row_splits_to_segment_ids([0, 2, 2, 5, 5])
    assert _run(ids).tolist() == [0, 0, 2, 2, 2] and ids.dtype == tw.int64
    splits = tw.ragged.segment_ids_to_row_splits([0, 0, 2, 2, 2], num_segments=5)
    assert _run(splits).tolist() == [0, 2, 2, 5, 5, 5]
    assert _run(tw.ragged.segment_ids_to_row_splits([1, 1])).tolist() == [0, 0, 2]
    assert _run(tw.ragged.row_splits_to_segment_ids([0])).tolist() == []


# --- session: fetch and feed -----------------------------------------------------------------

def test_fetch_gives_a_nested_ragged_tensor_value() -> None:
    rt = tw.ragged.constant([[[1, 2], [3]], [[4]]])
    value, plain = _run([rt, rt.flat_values])
    assert isinstance(value, RaggedTensorValue) and isinstance(value.values, RaggedTensorValue)
    assert value.ragged_rank == 2 and value.shape == (2, None, None)
    assert value.row_splits.tolist() == [0, 2, 3]
    assert value.flat_values.tolist() == plain.tolist() == [1, 2, 3, 4]
    assert [s.tolist() for s in value.nested_row_splits] == [[0, 2, 3], [0, 2, 3, 4]]
    assert value.dtype == np.int32
    assert str(value) == "<tf.RaggedTensorValue [[[1, 2], [3]], [[4]]]>"


def test_feed_a_ragged_placeholder() -> None:
    p = tw.ragged.placeholder(tw.float32, 1, value_shape=[2])
    assert p.shape.as_list() == [None, None, 2]
    feed = RaggedTensorValue(np.arange(6, dtype=np.float32).reshape(3, 2),
                             np.array([0, 2, 2, 3]))
    assert _rows(p * 2.0, {p: feed}) == [[[0, 2], [4, 6]], [], [[8, 10]]]
    with tw.Session() as sess:
        runner = sess.make_callable(tw.reduce_sum(p, axis=1), [p])
        assert runner(feed).tolist() == [[2, 4], [0, 0], [4, 5]]


def test_feed_refuses_other_values_and_ranks() -> None:
    p = tw.ragged.placeholder(tw.int32, 2)
    with pytest.raises(TypeError, match="RaggedTensorValue is expected"):
        _run(p.flat_values, {p: [[1]]})
    flat = RaggedTensorValue(np.array([1], np.int32), np.array([0, 1]))
    with pytest.raises(ValueError, match="ragged_rank 1 to a RaggedTensor of ragged_rank 2"):
        _run(p.flat_values, {p: flat})


def test_ragged_tensor_value_checks_its_parts() -> None:
    with pytest.raises(TypeError, match="row_splits"):
        RaggedTensorValue(np.array([1]), [0, 1])
    with pytest.raises(TypeError, match="values"):
        RaggedTensorValue([1], np.array([0, 1]))
    inner = RaggedTensorValue(np.array([1]), np.array([0, 1], np.int32))
    with pytest.raises(ValueError, match="same dtype"):
        RaggedTensorValue(inner, np.array([0, 1], np.int64))
