"""Ragged ops (tensorweave.api.ragged_ops, ``tw.ragged``): ``constant``, ``range``,
``map_flat_values``, elementwise dispatch, reductions against Python, ``concat``, ``gather``
and ``tw.strings.split(..., result_type="RaggedTensor")``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api.ragged_tensor import RaggedTensor
from tensorweave.engine import errors

ROWS = [[3, 1, 4, 1], [], [5, 9, 2], [6]]


def _run(fetches: Any, feed: dict | None = None) -> Any:
    with tw.Session() as sess:
        return sess.run(fetches, feed)


def _rows(rt: Any) -> list[Any]:
    assert isinstance(rt, RaggedTensor)
    return _run(rt).to_list()


# --- constant --------------------------------------------------------------------------------

def test_constant_infers_dtype_and_ragged_rank() -> None:
    rt = tw.ragged.constant(ROWS)
    assert rt.dtype == tw.int32 and rt.ragged_rank == 1 and rt.row_splits.dtype == tw.int64
    assert rt.shape.as_list() == [4, None]
    assert _rows(rt) == ROWS
    deep = tw.ragged.constant([[[1.0], [2.0, 3.0]], []])
    assert deep.dtype == tw.float32 and deep.ragged_rank == 2
    assert _rows(deep) == [[[1.0], [2.0, 3.0]], []]
    empty = tw.ragged.constant([[], []])
    assert empty.dtype == tw.float32 and _rows(empty) == [[], []]


def test_constant_with_inner_shape_and_explicit_ragged_rank() -> None:
    rt = tw.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert rt.ragged_rank == 1 and rt.shape.as_list() == [2, None, 2]
    assert _rows(rt) == [[[1, 2], [3, 4]], [[5, 6]]]
    shaped = tw.ragged.constant([[1, 2], []], inner_shape=(), dtype=tw.float64,
                                row_splits_dtype=tw.int32)
    assert shaped.dtype == tw.float64 and shaped.row_splits.dtype == tw.int32


def test_constant_of_fewer_than_two_levels_is_dense() -> None:
    flat = tw.ragged.constant([1, 2, 3])
    assert isinstance(flat, tw.Tensor) and _run(flat).tolist() == [1, 2, 3]
    assert isinstance(tw.ragged.constant([[1, 2]], ragged_rank=0), tw.Tensor)


@pytest.mark.parametrize("pylist, kwargs, message", [
    ([[1, [2]]], {}, "same nesting depth"),
    ([[1, 2], [[]]], {}, "empty list nesting is greater"),
    ([[[1, 2], [3]]], {"ragged_rank": 1}, "inconsistent shape"),
    ([[1]], {"ragged_rank": -1}, "must be nonnegative"),
    (5, {"ragged_rank": 1}, "incompatible with ragged_rank"),
])
def test_constant_refuses_inconsistent_lists(pylist: Any, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tw.ragged.constant(pylist, **kwargs)


# --- range -----------------------------------------------------------------------------------

def test_range_matches_python_per_row() -> None:
    starts, limits, deltas = [3, 5, 0, 7], [5, 5, 4, 1], [1, 1, 2, -3]
    rt = tw.ragged.range(starts, limits, deltas)
    assert rt.dtype == tw.int32
    assert _rows(rt) == [list(range(s, lim, d)) for s, lim, d in zip(starts, limits, deltas)]
    assert _rows(tw.ragged.range([2, 0])) == [[0, 1], []]


def test_range_of_floats_broadcasts_scalars() -> None:
    rt = tw.ragged.range([0.0, 1.0], 2, 0.5)
    assert rt.dtype == tw.float32
    assert _rows(rt) == [[0.0, 0.5, 1.0, 1.5], [1.0, 1.5]]
    assert tw.ragged.range(3, dtype=tw.int64).dtype == tw.int64


def test_range_with_zero_delta_fails_the_step() -> None:
    delta = tw.placeholder(tw.int32, [])
    with pytest.raises(errors.InvalidArgumentError, match="Requires delta != 0"):
        _run(tw.ragged.range([1], [3], delta).flat_values, {delta: 0})


# --- elementwise -----------------------------------------------------------------------------

def test_map_flat_values_keeps_the_partitions() -> None:
    rt = tw.ragged.constant([[[1, 2], [3]], [[4]]])
    ones = tw.ragged.map_flat_values(tw.ones_like, rt)
    assert _rows(ones) == [[[1, 1], [1]], [[1]]]
    summed = tw.ragged.map_flat_values(tw.add_n, [rt, rt, rt])
    assert _rows(summed) == [[[3, 6], [9]], [[12]]]
    assert _run(tw.ragged.map_flat_values(tw.add, 1, 2)) == 3


def test_map_flat_values_checks_the_partitions_match() -> None:
    a = tw.ragged.constant([[1, 2], [3]])
    with pytest.raises(ValueError, match="same ragged_rank"):
        tw.ragged.map_flat_values(tw.add, a, tw.ragged.constant([[[1, 2], [3]]]))
    splits = tw.placeholder(tw.int64, [3])
    b = RaggedTensor.from_row_splits([10, 20, 30], splits, validate=False)
    total = a + b
    assert _run(total, {splits: [0, 2, 3]}).to_list() == [[11, 22], [33]]
    with pytest.raises(errors.InvalidArgumentError, match="identical ragged splits"):
        _run(total, {splits: [0, 1, 3]})


def test_operators_and_math_functions_dispatch_on_ragged_tensors() -> None:
    rt = tw.ragged.constant([[1.0, 4.0], [], [9.0]])
    assert _rows(rt + 1) == [[2.0, 5.0], [], [10.0]]
    assert _rows(2 * rt) == [[2.0, 8.0], [], [18.0]]
    assert _rows(rt * rt - rt) == [[0.0, 12.0], [], [72.0]]
    assert _rows(-rt / 2) == [[-0.5, -2.0], [], [-4.5]]
    assert _rows(tw.sqrt(rt)) == [[1.0, 2.0], [], [3.0]]
    assert _rows(tw.math.maximum(rt, 3.0)) == [[3.0, 4.0], [], [9.0]]
    assert _rows(rt > 2.0) == [[False, True], [], [True]]
    casted = tw.cast(rt, tw.int64)
    assert casted.dtype == tw.int64 and _rows(casted) == [[1, 4], [], [9]]
    ints = tw.ragged.constant([[1, 2], [3]])
    divided = ints / 2
    assert divided.dtype == tw.float64 and _rows(divided) == [[0.5, 1.0], [1.5]]


def test_dense_operands_must_broadcast_through_the_inner_dimensions() -> None:
    rt = RaggedTensor.from_row_lengths([[1, 2], [3, 4], [5, 6]], [2, 1])
    assert _rows(rt + tw.constant([10, 20])) == [[[11, 22], [13, 24]], [[15, 26]]]
    with pytest.raises(ValueError, match="uniform inner dimensions"):
        rt + tw.constant([[1, 2], [3, 4]])
    with pytest.raises(TypeError):
        tw.ragged.constant([[1]]) + tw.constant(1.0)


# --- reductions ------------------------------------------------------------------------------

def _py_reduce(kind: str, rows: list[list[float]]) -> list[float]:
    fn = {"sum": sum, "max": lambda r: max(r) if r else None,
          "min": lambda r: min(r) if r else None, "prod": math.prod,
          "mean": lambda r: sum(r) / len(r) if r else math.nan}[kind]
    return [fn(r) for r in rows]


@pytest.mark.parametrize("kind", ["sum", "max", "min", "prod", "mean"])
def test_reduction_over_the_ragged_axis_matches_python(kind: str) -> None:
    rows = [[3.0, 1.0, 4.0, 1.0], [], [5.0, 9.0, 2.0], [6.0]]
    rt = tw.ragged.constant(rows)
    public = getattr(tw, f"reduce_{kind}")(rt, axis=1)
    own = getattr(tw.ragged, f"reduce_{kind}")(rt, axis=-1)
    got, again = _run([public, own])
    expected = _py_reduce(kind, rows)
    np.testing.assert_array_equal(got, again)
    assert got.dtype == np.float32
    for value, want in zip(got.tolist(), expected):
        if want is None:  # empty row: the dtype's lowest (max) or highest (min), as TF
            assert abs(value) == np.finfo(np.float32).max or math.isinf(value)
        elif math.isnan(want):
            assert math.isnan(value)
        else:
            assert value == pytest.approx(want)


def test_reductions_over_rows_and_all_values() -> None:
    rt = tw.ragged.constant(ROWS)
    by_column, total, mean, top = _run([tw.reduce_sum(rt, axis=0), tw.reduce_sum(rt),
                                        tw.reduce_mean(rt), tw.reduce_max(rt, axis=0)])
    assert by_column.tolist() == [14, 10, 6, 1] and by_column.dtype == np.int32
    assert total == sum(sum(r) for r in ROWS)
    assert mean == pytest.approx(total / 8) and mean.dtype == np.float64
    assert top.tolist() == [6, 9, 4, 1]
    assert _run(tw.reduce_sum(rt, axis=[0, 1])) == total
    kept = tw.reduce_sum(rt, axis=1, keepdims=True)
    assert _run(kept).tolist() == [[9], [0], [16], [6]]
    assert _run(tw.reduce_sum(rt, keepdims=True)).tolist() == [[total]]


def test_reductions_of_nested_and_inner_axes() -> None:
    rt = tw.ragged.constant([[[1, 2], [3]], [[4, 5, 6]], []])
    inner = tw.reduce_sum(rt, axis=2)
    assert isinstance(inner, RaggedTensor) and _rows(inner) == [[3, 3], [15], []]
    assert _run(tw.reduce_sum(rt, axis=[1, 2])).tolist() == [6, 15, 0]
    assert _rows(tw.reduce_sum(rt, axis=1)) == [[4, 2], [4, 5, 6], []]
    uniform = RaggedTensor.from_row_lengths([[1, 2], [3, 4], [5, 6]], [2, 1])
    assert _rows(tw.reduce_max(uniform, axis=2)) == [[2, 4], [6]]
    assert _run(tw.reduce_sum(uniform, axis=1)).tolist() == [[4, 6], [5, 6]]


def test_logical_reductions() -> None:
    rt = tw.ragged.constant([[True, False], [], [True]])
    every, some = _run([tw.reduce_all(rt, axis=1), tw.reduce_any(rt, axis=1)])
    assert every.tolist() == [False, True, True] and every.dtype == np.bool_
    assert some.tolist() == [True, False, True]


def test_reduction_axes_are_checked() -> None:
    rt = tw.ragged.constant(ROWS)
    with pytest.raises(ValueError, match="out of bounds"):
        tw.reduce_sum(rt, axis=2)
    with pytest.raises(ValueError, match="graph construction time"):
        tw.reduce_sum(rt, axis=tw.constant(1))


def test_dense_reductions_are_unchanged() -> None:
    x = tw.constant([[1, 2], [3, 4]])
    assert _run(tw.reduce_sum(x, axis=1)).tolist() == [3, 7]
    assert _run(tw.ragged.reduce_sum(x, axis=0)).tolist() == [4, 6]


# --- concat and gather -----------------------------------------------------------------------

def test_concat_rows_and_within_rows() -> None:
    a = tw.ragged.constant([[1, 2], [3]])
    b = tw.ragged.constant([[4], [], [5, 6]])
    assert _rows(tw.concat([a, b], 0)) == [[1, 2], [3], [4], [], [5, 6]]
    c = tw.ragged.constant([[7], [8, 9]])
    assert _rows(tw.concat([a, c], axis=1)) == [[1, 2, 7], [3, 8, 9]]
    assert _rows(tw.concat([a, tw.constant([[0, 0], [1, 1]])], 1)) == [[1, 2, 0, 0], [3, 1, 1]]
    with pytest.raises(errors.InvalidArgumentError, match="incompatible shapes"):
        _run(tw.concat([a, tw.ragged.constant([[1]])], 1))


def test_concat_of_nested_rows_and_inner_axes() -> None:
    a = tw.ragged.constant([[[1], [2, 3]], [[4]]])
    b = tw.ragged.constant([[[5, 6]], []])
    assert _rows(tw.concat([a, b], 0)) == [[[1], [2, 3]], [[4]], [[5, 6]], []]
    assert _rows(tw.concat([a, b], 1)) == [[[1], [2, 3], [5, 6]], [[4]]]
    uniform = RaggedTensor.from_row_lengths([[1, 2], [3, 4]], [1, 1])
    assert _rows(tw.concat([uniform, uniform * 10], -1)) == [[[1, 2, 10, 20]], [[3, 4, 30, 40]]]
    with pytest.raises(ValueError, match="Rank of all input tensors should match"):
        tw.concat([tw.ragged.constant([[1]]), uniform], 0)


def test_gather_rows_by_dense_and_ragged_indices() -> None:
    rt = tw.ragged.constant(ROWS)
    assert _rows(tw.gather(rt, [3, 0, 0, 1])) == [ROWS[3], ROWS[0], ROWS[0], ROWS[1]]
    assert _run(tw.gather(rt, 2)).tolist() == ROWS[2]
    grid = tw.gather(rt, [[3, 0], [1, 2]])
    assert grid.ragged_rank == 2 and _rows(grid) == [[ROWS[3], ROWS[0]], [ROWS[1], ROWS[2]]]
    by_ragged = tw.gather(tw.constant([10, 20, 30]), tw.ragged.constant([[2, 0], [], [1]]))
    assert _rows(by_ragged) == [[30, 10], [], [20]]
    nested = tw.ragged.constant([[[1], [2, 3]], [], [[4]]])
    assert _rows(tw.gather(nested, [2, 0])) == [[[4]], [[1], [2, 3]]]
    with pytest.raises(errors.InvalidArgumentError):
        _run(tw.gather(rt, [7]))
    with pytest.raises(ValueError, match="axis=0"):
        tw.gather(rt, [0], axis=1)


# --- strings.split ---------------------------------------------------------------------------

def test_strings_split_gives_one_row_per_string() -> None:
    source = ["hello world", "", "a  b c"]
    rt = tw.strings.split(source, result_type="RaggedTensor")
    assert isinstance(rt, RaggedTensor) and rt.dtype == tw.string
    assert _rows(rt) == [s.encode().split() for s in source]
    by_comma = tw.strings.split(["a,b,,c", "d"], sep=",", result_type="RaggedTensor")
    assert _rows(by_comma) == [[b"a", b"b", b"", b"c"], [b"d"]]
    v1 = tw.string_split(["a b", "", "c"], result_type="RaggedTensor")
    assert _rows(v1) == [[b"a", b"b"], [], [b"c"]]


def test_strings_split_of_scalars_and_matrices() -> None:
    assert _run(tw.strings.split("x y z", result_type="RaggedTensor")).tolist() == [b"x", b"y",
                                                                                     b"z"]
    rt = tw.strings.split([["a b", ""], ["c", "d e f"]], result_type="RaggedTensor")
    assert rt.ragged_rank == 2
    assert _rows(rt) == [[[b"a", b"b"], []], [[b"c"], [b"d", b"e", b"f"]]]
    p = tw.placeholder(tw.string, [None])
    fed = tw.strings.split(p, result_type="RaggedTensor")
    assert _run(fed, {p: ["u v", "w"]}).to_list() == [[b"u", b"v"], [b"w"]]
    with pytest.raises(ValueError, match="result_type must be"):
        tw.strings.split(["a"], result_type="Ragged")


# --- reduce_join -------------------------------------------------------------------------------

WORD_ROWS = [["a", "b", "c"], [], ["d"], ["e", "f"]]


def test_reduce_join_over_the_ragged_and_outer_axes() -> None:
    rt = tw.ragged.constant(WORD_ROWS)
    by_row = _run(tw.strings.reduce_join(rt, axis=1, separator="-"))
    assert by_row.tolist() == [b"-".join(w.encode() for w in row) for row in WORD_ROWS]
    width = max(len(r) for r in WORD_ROWS)
    columns = [b"-".join(r[j].encode() for r in WORD_ROWS if j < len(r)) for j in range(width)]
    assert _run(tw.strings.reduce_join(rt, axis=0, separator="-")).tolist() == columns
    assert _run(tw.reduce_join(rt)) == b"abcdef"
    kept = _run(tw.strings.reduce_join(rt, axis=1, keepdims=True))
    assert kept.tolist() == [[b"abc"], [b""], [b"d"], [b"ef"]]
    # several axes are reduced last to first, as TF does: the rows, then across them
    assert _run(tw.strings.reduce_join(rt, axis=[0, 1], separator=",")) == b"a,b,c,,d,e,f"


def test_reduce_join_deeper_ragged_and_uniform_axes() -> None:
    rt = tw.ragged.constant([[["a", "b"], ["c"]], [], [["d", "e", "f"]]])
    assert _rows(tw.strings.reduce_join(rt, axis=2)) == [[b"ab", b"c"], [], [b"def"]]
    assert _rows(tw.strings.reduce_join(rt, axis=1, separator="+")) \
        == [[b"a+c", b"b"], [], [b"d", b"e", b"f"]]
    inner = tw.ragged.constant([[["a", "b"]], [], [["c", "d"], ["e", "f"]]], ragged_rank=1)
    assert _rows(tw.strings.reduce_join(inner, axis=2)) == [[b"ab"], [], [b"cd", b"ef"]]
    assert _run(tw.strings.reduce_join(inner, axis=1)).tolist() == [[b"a", b"b"], [b"", b""],
                                                                     [b"ce", b"df"]]
    with pytest.raises(ValueError, match="out of bounds"):
        tw.strings.reduce_join(rt, axis=3)
