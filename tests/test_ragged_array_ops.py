"""Ragged array ops and elementwise dispatch (tensorweave.api.ragged_array_ops): ``tile``,
``expand_dims``, ``stack``, ``size``, ``rank``, ``boolean_mask``, ``where``, string and math ops
and ``embedding_lookup`` on RaggedTensors, against references built from Python lists."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api.ragged_tensor import RaggedTensor
from tensorweave.engine import errors
from tests.numeric import run
from tests.ragged_support import value

ROWS = [[1, 2], [], [3]]
DEEP = [[[1, 2], [3]], [[4]]]
PAIRS = [[[1, 2], [3, 4]], [[5, 6]]]
WORDS = [["a", "bc"], ["def"]]


def _tile_rows(rows: list[Any], multiples: list[int]) -> list[Any]:
    """Python reference of tile over nested lists (every level a list)."""
    if not multiples:
        return rows
    return [_tile_rows(r, multiples[1:]) if isinstance(r, list) else r
            for r in rows] * multiples[0]


# --- tile ------------------------------------------------------------------------------------

@pytest.mark.parametrize("rows, ragged_rank, multiples", [
    (ROWS, 1, [2, 3]), (ROWS, 1, [1, 1]), (ROWS, 1, [3, 0]), (DEEP, 2, [1, 2, 2]),
    (DEEP, 2, [2, 1, 3]), (PAIRS, 1, [2, 1, 2]), (PAIRS, 1, [1, 2, 1]),
])
def test_tile_matches_python(rows: list[Any], ragged_rank: int, multiples: list[int]) -> None:
    rt = tw.ragged.constant(rows, ragged_rank=ragged_rank)
    tiled = tw.tile(rt, multiples)
    assert isinstance(tiled, RaggedTensor) and tiled.ragged_rank == ragged_rank
    assert tiled.dtype == tw.int32
    assert value(tiled) == _tile_rows(rows, multiples)


def test_tile_takes_tensor_multiples_and_checks_their_shape() -> None:
    rt = tw.ragged.constant(ROWS)
    assert value(tw.tile(rt, tw.constant([1, 2], tw.int32))) == _tile_rows(ROWS, [1, 2])
    with pytest.raises(ValueError):
        tw.tile(rt, [1, 2, 3])
    with pytest.raises(TypeError, match="multiples must be integers"):
        tw.tile(rt, tw.constant([1.0, 2.0]))


# --- expand_dims, stack, size, rank ----------------------------------------------------------

@pytest.mark.parametrize("axis, expected", [
    (0, [ROWS]), (1, [[r] for r in ROWS]), (2, [[[v] for v in r] for r in ROWS]),
    (-1, [[[v] for v in r] for r in ROWS]), (-3, [ROWS]),
])
def test_expand_dims(axis: int, expected: list[Any]) -> None:
    rt = tw.ragged.constant(ROWS)
    expanded = tw.expand_dims(rt, axis)
    assert expanded.shape.ndims == 3 and value(expanded) == expected
    with pytest.raises(ValueError, match="out of bounds"):
        tw.expand_dims(rt, 3)


def test_expand_dims_between_ragged_dimensions() -> None:
    rt = tw.ragged.constant(DEEP)
    assert value(tw.expand_dims(rt, 2)) == [[[r] for r in row] for row in DEEP]


def test_stack_along_each_supported_axis() -> None:
    a, b = tw.ragged.constant(ROWS), tw.ragged.constant([[10, 20], [], [30]])
    rows_b = [[10, 20], [], [30]]
    assert value(tw.stack([a, b])) == [ROWS, rows_b]
    assert value(tw.stack([a, b], axis=1)) == [[x, y] for x, y in zip(ROWS, rows_b)]
    assert value(tw.stack([a, b], axis=-1)) == [
        [[u, v] for u, v in zip(x, y)] for x, y in zip(ROWS, rows_b)]
    assert value(tw.ragged.stack([a])) == [ROWS]
    mixed = tw.stack([tw.ragged.constant([[1], [2, 3]]), tw.constant([[4, 5], [6, 7]])])
    assert value(mixed) == [[[1], [2, 3]], [[4, 5], [6, 7]]]
    with pytest.raises(ValueError, match="Rank of all input tensors should match"):
        tw.stack([a, tw.constant([1, 2, 3])])


def test_size_and_rank() -> None:
    rt = tw.ragged.constant(PAIRS, ragged_rank=1)
    size, rank = run([tw.size(rt), tw.rank(rt)])
    assert size == 6 and rank == 3
    assert tw.size(rt, out_type=tw.int64).dtype == tw.int64
    assert run(tw.rank(tw.ragged.constant(DEEP))) == 3


# --- boolean_mask ----------------------------------------------------------------------------

def test_boolean_mask_with_a_vector_picks_rows() -> None:
    rt = tw.ragged.constant(ROWS)
    assert value(tw.boolean_mask(rt, [True, False, True])) == [[1, 2], [3]]
    assert value(tw.ragged.boolean_mask(rt, tw.constant([False, False, False]))) == []


def test_boolean_mask_with_a_ragged_mask_keeps_items_per_row() -> None:
    rt = tw.ragged.constant(ROWS)
    mask = [[True, False], [], [True]]
    masked = tw.boolean_mask(rt, tw.ragged.constant(mask))
    assert value(masked) == [[v for v, m in zip(r, ms) if m] for r, ms in zip(ROWS, mask)]
    dense = [[1, 2, 3], [4, 5, 6]]
    dense_mask = [[True, False, True], [False, True, True]]
    assert value(tw.ragged.boolean_mask(tw.constant(dense), tw.ragged.constant(dense_mask))) \
        == [[1, 3], [5, 6]]
    deep = tw.ragged.constant(DEEP)
    deep_mask = [[[True, False], [True]], [[False]]]
    assert value(tw.boolean_mask(deep, tw.ragged.constant(deep_mask))) == [[[1], [3]], [[]]]
    assert value(tw.boolean_mask(deep, tw.ragged.constant([[True, False], [True]]))) \
        == [[[1, 2]], [[4]]]


def test_boolean_mask_rejects_bad_masks() -> None:
    rt = tw.ragged.constant(ROWS)
    with pytest.raises(ValueError, match="is not bool"):
        tw.boolean_mask(rt, tw.ragged.constant([[1, 0], [], [1]]))
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tw.boolean_mask(rt, True)
    with pytest.raises(ValueError, match="deeper than data"):
        tw.boolean_mask(rt, tw.ragged.constant([[[True]], [], [[True]]]))
    with pytest.raises(ValueError, match="only axis=0"):
        tw.boolean_mask(rt, [True, True, True], axis=1)
    with pytest.raises(errors.InvalidArgumentError):
        run(tw.boolean_mask(rt, tw.ragged.constant([[True], [True], [True]])))


# --- where -----------------------------------------------------------------------------------

def test_where_elementwise_rows_and_coordinates() -> None:
    x, y = tw.ragged.constant(ROWS), tw.ragged.constant([[10, 20], [], [30]])
    condition = tw.ragged.constant([[True, False], [], [False]])
    assert value(tw.where(condition, x, y)) == [[1, 20], [], [30]]
    assert value(tw.where([False, True, True], x, y)) == [[10, 20], [], [3]]
    coordinates = run(tw.where(tw.ragged.constant([[False, True], [], [True]])))
    assert coordinates.dtype == np.int64 and coordinates.tolist() == [[0, 1], [2, 0]]
    with pytest.raises(ValueError, match="both None or both non-None"):
        tw.where(condition, x)
    with pytest.raises(ValueError, match="must be a vector"):
        tw.where([[True]], x, y)


# --- elementwise dispatch --------------------------------------------------------------------

def test_string_ops_map_over_flat_values() -> None:
    words = tw.ragged.constant(WORDS)
    flat = [w for row in WORDS for w in row]
    results = run({
        "substr": tw.strings.substr(words, 0, 2), "join": tw.string_join([words, words], "-"),
        "scalar": tw.strings.join([words, "!"]), "length": tw.strings.length(words),
        "upper": tw.strings.upper(words), "regex": tw.regex_replace(words, "b", "X"),
        "hash": tw.strings.to_hash_bucket_fast(words, 7),
        "dense_hash": tw.strings.to_hash_bucket_fast(flat, 7),
    })
    assert results["substr"].to_list() == [[b"a", b"bc"], [b"de"]]
    assert results["join"].to_list() == [[b"a-a", b"bc-bc"], [b"def-def"]]
    assert results["scalar"].to_list() == [[b"a!", b"bc!"], [b"def!"]]
    assert results["length"].to_list() == [[1, 2], [3]]
    assert results["upper"].to_list() == [[b"A", b"BC"], [b"DEF"]]
    assert results["regex"].to_list() == [[b"a", b"Xc"], [b"def"]]
    assert results["hash"].flat_values.tolist() == results["dense_hash"].tolist()
    numbers = tw.strings.to_number(tw.ragged.constant([["1.5"], ["2", "3"]]), tw.float64)
    assert numbers.dtype == tw.float64 and value(numbers) == [[1.5], [2.0, 3.0]]


def test_math_and_like_ops_dispatch() -> None:
    rt = tw.ragged.constant(ROWS)
    assert value(tw.add_n([rt, rt, rt])) == [[3 * v for v in r] for r in ROWS]
    assert value(tw.clip_by_value(rt, 2, 2)) == [[2 for _ in r] for r in ROWS]
    ones = tw.ones_like(rt, dtype=tw.float32)
    assert ones.dtype == tw.float32 and value(ones) == [[1.0 for _ in r] for r in ROWS]
    assert value(tw.round(tw.ragged.constant([[1.4], [2.6]]))) == [[1.0], [3.0]]
    assert value(tw.math.logical_xor(rt > 1, rt > 2)) == [[False, True], [], [False]]


def test_dense_arguments_must_broadcast_and_partitions_must_match() -> None:
    words = tw.ragged.constant(WORDS)
    with pytest.raises(ValueError, match="must broadcast"):
        tw.strings.substr(words, tw.constant([0, 1]), 1)
    other = tw.ragged.constant([["x"], ["y", "z"]])
    with pytest.raises(errors.InvalidArgumentError):
        run(tw.string_join([words, other]))


def test_embedding_lookup_of_ragged_ids() -> None:
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    ids = [[3, 0], [], [1]]
    embedded = tw.nn.embedding_lookup(tw.constant(table), tw.ragged.constant(ids))
    assert embedded.shape.as_list() == [3, None, 2]
    assert value(embedded) == [[table[i].tolist() for i in row] for row in ids]
