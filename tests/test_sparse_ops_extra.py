"""The extra sparse API (`tensorweave.api.sparse_ops_extra`) against dense numpy references,
TF's documented examples, static shapes and TF's construction and run-time errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.engine.graph.tensor_proto import parse_tensor
from tests import sparse_support
from tests.sparse_support import run

RNG = np.random.default_rng(5)
InvalidArgument = errors.InvalidArgumentError


def random_sparse(shape: tuple[int, ...], density: float = 0.4,
                  dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted indices, their (non-zero) values and the dense array they make."""
    def draw(n: int) -> np.ndarray:
        values = (RNG.random(n) + 0.5).astype(dtype) * RNG.choice([-1, 1], n)
        return values.astype(dtype)

    return sparse_support.random_sparse(RNG, shape, density, dtype, draw)


def dense_of(value: tw.SparseTensorValue) -> np.ndarray:
    out = np.zeros(value.dense_shape, value.values.dtype)
    out[tuple(np.asarray(value.indices).T)] = value.values
    return out


def assert_row_major(indices: np.ndarray) -> None:
    keys = [tuple(row) for row in indices.tolist()]
    assert keys == sorted(keys)


# -- concat ------------------------------------------------------------------------------------

def test_concat_documented_example() -> None:
    a = tw.SparseTensor([[0, 2], [1, 0], [1, 1]], [b"a", b"b", b"c"], [2, 3])
    b = tw.SparseTensor([[0, 1], [0, 2]], [b"d", b"e"], [2, 4])
    out = tw.sparse_concat(1, [a, b])
    assert out.shape.as_list() == [2, 7]
    (value,) = run(out)
    np.testing.assert_array_equal(value.indices, [[0, 2], [0, 4], [0, 5], [1, 0], [1, 1]])
    assert list(value.values) == [b"a", b"d", b"e", b"b", b"c"]
    np.testing.assert_array_equal(value.dense_shape, [2, 7])


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_concat_matches_numpy(axis: int) -> None:
    parts = [random_sparse((3, 2, 4)), random_sparse((3, 2, 4)), random_sparse((3, 2, 4))]
    out = tw.sparse.concat(axis, [tw.SparseTensor(i, v, d.shape) for i, v, d in parts])
    (value,) = run(out)
    assert value.values.dtype == np.float32 and value.indices.dtype == np.int64
    np.testing.assert_array_equal(dense_of(value), np.concatenate([d for *_, d in parts], axis))
    assert_row_major(value.indices)


def test_concat_expand_nonconcat_dim() -> None:
    a_idx, a_val, a = random_sparse((2, 3))
    b_idx, b_val, b = random_sparse((3, 4))
    out = tw.sparse_concat(1, [tw.SparseTensor(a_idx, a_val, a.shape),
                               tw.SparseTensor(b_idx, b_val, b.shape)],
                           expand_nonconcat_dim=True)
    assert out.shape.as_list() == [3, 7]
    (value,) = run(out)
    want = np.zeros((3, 7), np.float32)
    want[:2, :3], want[:, 3:] = a, b
    np.testing.assert_array_equal(dense_of(value), want)


def test_concat_errors() -> None:
    a = tw.SparseTensor([[0, 0]], [1.0], [2, 3])
    with pytest.raises(TypeError, match="Inputs must be a list"):
        tw.sparse_concat(1, (a, a))
    with pytest.raises(ValueError, match="not compatible"):
        tw.sparse_concat(1, [a, tw.SparseTensor([[0, 0]], [1.0], [3, 3])])
    shape = tw.placeholder(tw.int64, [2])
    out = tw.sparse_concat(1, [a, tw.SparseTensor([[0, 0]], [1.0], shape)])
    with pytest.raises(InvalidArgument, match="Input shapes must match: expected 2 for "
                                              "dimension 0 but got 3 at position 1"):
        run(out, feed={shape: [3, 3]})


# -- split, slice ------------------------------------------------------------------------------

@pytest.mark.parametrize("axis,num", [(1, 3), (0, 2), (-1, 7), (0, 1)])
def test_split_matches_numpy(axis: int, num: int) -> None:
    indices, values, dense = random_sparse((4, 7))
    pieces = tw.sparse_split(sp_input=tw.SparseTensor(indices, values, dense.shape),
                             num_split=num, axis=axis)
    assert len(pieces) == num
    got = run(*pieces)
    for value, want in zip(got, np.array_split(dense, num, axis)):
        np.testing.assert_array_equal(value.dense_shape, want.shape)
        np.testing.assert_array_equal(dense_of(value), want)


def test_split_errors() -> None:
    sp = tw.SparseTensor([[0, 0]], [1.0], [2, 3])
    with pytest.raises(ValueError, match="Keyword arguments are required"):
        tw.sparse_split(sp, 2, 1)
    with pytest.raises(ValueError, match="num_split is required"):
        tw.sparse.split(sp_input=sp, axis=1)
    with pytest.raises(InvalidArgument, match=r"num_split should be between 1 and the "
                                              r"splitting dimension size \(3\), got 4"):
        run(*tw.sparse_split(sp_input=sp, num_split=4, axis=1))


@pytest.mark.parametrize("start,size", [([0, 1, 0], [2, 2, 5]), ([1, 0, 2], [9, 9, 9]),
                                        ([3, 0, 0], [1, 1, 1])])
def test_slice_matches_numpy(start: list[int], size: list[int]) -> None:
    indices, values, dense = random_sparse((3, 4, 5))
    out = tw.sparse.slice(tw.SparseTensor(indices, values, dense.shape), start, size)
    box = tuple(slice(b, b + s) for b, s in zip(start, size))
    assert out.shape.as_list() == list(dense[box].shape)
    (value,) = run(out)
    np.testing.assert_array_equal(dense_of(value), dense[box])


def test_slice_errors() -> None:
    sp = tw.SparseTensor([[0, 0]], [1.0], [2, 3])
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.sparse.slice(sp, [0], [1, 1])
    start = tw.placeholder(tw.int64, [None])
    with pytest.raises(InvalidArgument, match="Expected start to be a vector of length 2 but "
                                              "got length 3"):
        run(tw.sparse.slice(sp, start, [1, 1]), feed={start: [0, 0, 0]})


# -- softmax, maximum, minimum -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_over_present_entries(dtype: type) -> None:
    indices, values, dense = random_sparse((2, 3, 5), density=0.6, dtype=dtype)
    out = tw.sparse_softmax(tw.SparseTensor(indices, values, dense.shape))
    (value,) = run(out)
    present = np.zeros(dense.shape, bool)
    present[tuple(indices.T)] = True
    logits = np.where(present, dense, -np.inf)
    with np.errstate(invalid="ignore"):
        peak = np.max(logits, axis=-1, keepdims=True)
        exps = np.where(present, np.exp(logits - peak), 0)
        want = exps / exps.sum(-1, keepdims=True)
    assert value.values.dtype == dtype
    np.testing.assert_allclose(value.values, want[tuple(indices.T)], rtol=1e-6)
    np.testing.assert_array_equal(value.indices, indices)


def test_softmax_needs_rank_two() -> None:
    with pytest.raises(ValueError, match="at least rank 2"):
        tw.sparse.softmax(tw.SparseTensor([[0]], [1.0], [3]))


@pytest.mark.parametrize("fn,ref", [(tw.sparse_maximum, np.maximum),
                                    (tw.sparse.minimum, np.minimum)])
def test_maximum_minimum_match_numpy(fn: object, ref: object) -> None:
    a_idx, a_val, a = random_sparse((4, 5))
    b_idx, b_val, b = random_sparse((4, 5))
    out = fn(tw.SparseTensor(a_idx, a_val, a.shape), tw.SparseTensor(b_idx, b_val, b.shape))
    (value,) = run(out)
    np.testing.assert_array_equal(dense_of(value), ref(a, b))
    union = np.argwhere((a != 0) | (b != 0))
    np.testing.assert_array_equal(value.indices, union)


def test_maximum_shape_mismatch() -> None:
    shape = tw.placeholder(tw.int64, [2])
    out = tw.sparse_maximum(tw.SparseTensor([[0, 0]], [1.0], [2, 3]),
                            tw.SparseTensor([[0, 0]], [1.0], shape))
    with pytest.raises(InvalidArgument, match="Operands' shapes do not match: got 3 and 4 for "
                                              "dimension 1"):
        run(out, feed={shape: [2, 4]})


# -- transpose, expand_dims, eye, mask, indicators ---------------------------------------------

@pytest.mark.parametrize("perm", [None, [1, 0, 2], [2, 0, 1]])
def test_transpose_matches_numpy(perm: list[int] | None) -> None:
    indices, values, dense = random_sparse((2, 3, 4))
    out = tw.sparse.transpose(tw.SparseTensor(indices, values, dense.shape), perm)
    want = np.transpose(dense, perm)
    assert out.shape.as_list() == list(want.shape)
    (value,) = run(out)
    np.testing.assert_array_equal(dense_of(value), want)
    assert_row_major(value.indices)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3, None])
def test_expand_dims_matches_numpy(axis: int | None) -> None:
    indices, values, dense = random_sparse((2, 3))
    out = tw.sparse.expand_dims(tw.SparseTensor(indices, values, dense.shape), axis)
    want = np.expand_dims(dense, -1 if axis is None else axis)
    assert out.shape.as_list() == list(want.shape)
    (value,) = run(out)
    np.testing.assert_array_equal(dense_of(value), want)


def test_expand_dims_tensor_axis() -> None:
    indices, values, dense = random_sparse((2, 3))
    axis = tw.placeholder(tw.int32, [])
    out = tw.sparse.expand_dims(tw.SparseTensor(indices, values, dense.shape), axis)
    (value,) = run(out, feed={axis: 1})
    np.testing.assert_array_equal(dense_of(value), dense[:, None, :])


@pytest.mark.parametrize("rows,cols", [(3, None), (3, 5), (4, 2)])
def test_eye(rows: int, cols: int | None) -> None:
    out = tw.sparse.eye(rows, cols, dtype=tw.float64)
    (value,) = run(out)
    assert value.values.dtype == np.float64
    np.testing.assert_array_equal(dense_of(value), np.eye(rows, cols))


def test_mask_documented_example() -> None:
    values = RNG.standard_normal((4, 10)).astype(np.float32)
    a = tw.IndexedSlices(tw.constant(values), tw.constant([12, 26, 37, 45]),
                         tw.constant([100, 10]))
    out = tw.sparse_mask(a, [12, 45])
    got_values, got_indices = run(out.values, out.indices)
    np.testing.assert_array_equal(got_indices, [26, 37])
    np.testing.assert_array_equal(got_values, values[1:3])


def test_to_indicator_documented_example() -> None:
    ids = tw.SparseTensor([[0, 0, 0], [0, 1, 0], [1, 0, 3], [1, 1, 1], [1, 1, 2], [1, 1, 3],
                           [1, 2, 1]], np.array([0, 10, 103, 150, 149, 150, 121], np.int64),
                          [2, 3, 4])
    (got,) = run(tw.sparse_to_indicator(ids, 200))
    want = np.zeros((2, 3, 200), bool)
    for position in [(0, 0, 0), (0, 1, 10), (1, 0, 103), (1, 1, 149), (1, 1, 150),
                     (1, 2, 121)]:
        want[position] = True
    assert got.dtype == bool
    np.testing.assert_array_equal(got, want)


def test_merge_documented_example() -> None:
    ids = tw.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1]],
                          np.array([0, 10, 12, 11, 5], np.int64), [3, 2])
    weights = tw.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1]],
                              np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32), [3, 2])
    (value,) = run(tw.sparse_merge(ids, weights, 13))
    want = np.zeros((3, 13), np.float32)
    want[0, 0], want[0, 10], want[1, 12], want[2, 11], want[2, 5] = 1, 2, 3, 4, 5
    np.testing.assert_array_equal(dense_of(value), want)
    assert_row_major(value.indices)


# -- reductions --------------------------------------------------------------------------------

def test_reduce_max_documented_example() -> None:
    x = tw.SparseTensor([[0, 0], [0, 2], [1, 1]], [1, 2, 3], [2, 3])
    got = run(tw.sparse_reduce_max(x), tw.sparse.reduce_max(x, 0),
              tw.sparse.reduce_max(x, 1), tw.sparse.reduce_max(x, -1, keepdims=True))
    assert got[0] == 3 and got[0].dtype == np.int32
    np.testing.assert_array_equal(got[1], [1, 3, 2])
    np.testing.assert_array_equal(got[2], [2, 3])
    np.testing.assert_array_equal(got[3], [[2], [3]])


def test_reduce_max_empty_group_is_zero() -> None:
    x = tw.SparseTensor([[0, 0], [1, 0], [1, 1]], [-7.0, 4.0, 3.0], [3, 2])
    (got,) = run(tw.sparse.reduce_max(x, 1))
    np.testing.assert_array_equal(got, [-7.0, 4.0, 0.0])


@pytest.mark.parametrize("fn,ref", [(tw.sparse_reduce_max_sparse, np.max),
                                    (tw.sparse_reduce_sum_sparse, np.sum)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_sparse_matches_numpy(fn: object, ref: object, keepdims: bool) -> None:
    indices, values, dense = random_sparse((3, 4, 5), density=0.5)
    out = fn(tw.SparseTensor(indices, values, dense.shape), axis=[1], keepdims=keepdims)
    (value,) = run(out)
    present = np.zeros(dense.shape, bool)
    present[tuple(indices.T)] = True
    masked = np.where(present, dense, -np.inf if ref is np.max else 0)
    want = np.where(present.any(1, keepdims=keepdims), ref(masked, 1, keepdims=keepdims), 0)
    np.testing.assert_allclose(dense_of(value), want, rtol=1e-6)
    np.testing.assert_array_equal(value.indices, np.argwhere(present.any(1, keepdims=keepdims)))


def test_reduce_max_bad_axis() -> None:
    x = tw.SparseTensor([[0, 0]], [1.0], [2, 3])
    with pytest.raises(ValueError, match="Invalid reduction dimension 2"):
        tw.sparse_reduce_max(x, 2)


# -- segment reductions ------------------------------------------------------------------------

def segment_reference(data: np.ndarray, indices: list[int], ids: list[int], rows: int,
                      kind: str) -> np.ndarray:
    out = np.zeros((rows,) + data.shape[1:], data.dtype)
    counts = np.zeros(rows)
    for index, segment in zip(indices, ids):
        out[segment] += data[index]
        counts[segment] += 1
    scale = {"sum": np.ones(rows), "mean": np.maximum(counts, 1),
             "sqrt_n": np.sqrt(np.maximum(counts, 1))}[kind]
    return (out / scale.reshape((-1,) + (1,) * (data.ndim - 1))).astype(data.dtype)


@pytest.mark.parametrize("kind", ["sum", "mean", "sqrt_n"])
@pytest.mark.parametrize("num_segments", [None, 6])
def test_segment_reductions_match_numpy(kind: str, num_segments: int | None) -> None:
    data = RNG.standard_normal((5, 3)).astype(np.float32)
    indices, ids = [0, 3, 3, 1, 4, 0], [0, 0, 1, 3, 3, 3]
    fn = getattr(tw, f"sparse_segment_{kind}")
    out = fn(data, indices, ids, num_segments=num_segments)
    rows = 4 if num_segments is None else num_segments
    assert out.shape.as_list() == [num_segments, 3]
    (got,) = run(out)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, segment_reference(data, indices, ids, rows, kind),
                               rtol=1e-6)


def test_segment_sum_int_and_int64_indices() -> None:
    data = np.arange(12, dtype=np.int32).reshape(4, 3)
    (got,) = run(tw.sparse.segment_sum(data, np.array([3, 1, 2], np.int64), [0, 2, 2]))
    np.testing.assert_array_equal(got, [data[3], np.zeros(3), data[1] + data[2]])
    assert got.dtype == np.int32


def test_segment_errors() -> None:
    data = np.ones((3, 2), np.float32)
    with pytest.raises(InvalidArgument, match="segment ids are not increasing"):
        run(tw.sparse_segment_sum(data, [0, 1], [1, 0]))
    with pytest.raises(InvalidArgument, match=r"Bad: indices\[1\] == 5 out of range \[0, 3\)"):
        run(tw.sparse_segment_mean(data, [0, 5], [0, 0]))
    with pytest.raises(InvalidArgument, match="segment ids must be < num_segments"):
        run(tw.sparse_segment_sum(data, [0, 1], [0, 4], num_segments=3))
    with pytest.raises(ValueError, match="Cannot specify a negative value for num_segments"):
        tw.sparse_segment_sum(data, [0, 1], [0, 1], num_segments=-2)
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tw.sparse_segment_mean(np.ones((3, 2), np.int32), [0], [0])


# -- sparse_matmul -----------------------------------------------------------------------------

@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_sparse_matmul_matches_numpy(ta: bool, tb: bool) -> None:
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal((4, 5)).astype(np.float32)
    a_in, b_in = (a.T.copy() if ta else a), (b.T.copy() if tb else b)
    out = tw.sparse_matmul(a_in, b_in, transpose_a=ta, transpose_b=tb, a_is_sparse=True)
    assert out.shape.as_list() == [3, 5] and out.op.get_attr("a_is_sparse")
    (got,) = run(out)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, a @ b, rtol=1e-5)


def test_sparse_matmul_errors() -> None:
    with pytest.raises(TypeError, match="float64"):
        tw.sparse_matmul(tw.constant(np.ones((2, 2))), tw.constant(np.ones((2, 2))))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.sparse_matmul(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))


# -- serialization -----------------------------------------------------------------------------

def test_serialize_sparse_is_tensor_protos() -> None:
    sp = tw.SparseTensor([[0, 1], [2, 0]], np.array([1.5, -2.0], np.float32), [3, 4])
    out = tw.serialize_sparse(sp)
    assert out.dtype == tw.string and out.shape.as_list() == [3]
    (got,) = run(out)
    np.testing.assert_array_equal(parse_tensor(got[0]), [[0, 1], [2, 0]])
    np.testing.assert_array_equal(parse_tensor(got[1]), [1.5, -2.0])
    np.testing.assert_array_equal(parse_tensor(got[2]), [3, 4])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, object])
def test_serialize_many_round_trip(dtype: type) -> None:
    indices, values, dense = random_sparse((4, 3, 2))
    values = values.astype(np.int64) * 3 + 1 if dtype is np.int64 else values
    if dtype is object:
        values = np.array([f"v{i}".encode() for i in range(len(values))], object)
    sp = tw.SparseTensor(indices, values, dense.shape)
    serialized = tw.serialize_many_sparse(sp)
    assert serialized.shape.as_list() == [None, 3]
    tw_dtype = tw.string if dtype is object else tw.as_dtype(dtype)
    out = tw.io.deserialize_many_sparse(serialized, tw_dtype, rank=3)
    assert out.indices.shape.as_list() == [None, 3]
    got_rows, (value,) = run(serialized)[0], run(out)
    assert got_rows.shape == (4, 3)
    np.testing.assert_array_equal(value.indices, indices)
    np.testing.assert_array_equal(value.values, values)
    np.testing.assert_array_equal(value.dense_shape, dense.shape)


def test_deserialize_stacks_widest_shape() -> None:
    rows = tw.stack([tw.serialize_sparse(tw.SparseTensor([[0, 1]], [1.0], [1, 2])),
                     tw.serialize_sparse(tw.SparseTensor([[2, 0]], [2.0], [3, 1]))])
    (value,) = run(tw.deserialize_many_sparse(rows, tw.float32))
    np.testing.assert_array_equal(value.indices, [[0, 0, 1], [1, 2, 0]])
    np.testing.assert_array_equal(value.dense_shape, [2, 3, 2])


def test_deserialize_errors() -> None:
    row = tw.serialize_sparse(tw.SparseTensor([[0]], [1.0], [2]))
    with pytest.raises(InvalidArgument, match=r"Requested SparseTensor of type int32 but "
                                              r"SparseTensor\[0\].values.dtype\(\) == float"):
        run(tw.deserialize_many_sparse(tw.stack([row]), tw.int32))
    with pytest.raises(InvalidArgument, match=r"Could not parse serialized_sparse\[0, 1\]: "
                                              r"TensorProto: Malformed"):
        parts = run(row)[0]
        run(tw.deserialize_many_sparse([[parts[0], b"\xff\xff", parts[2]]], tw.float32))
    with pytest.raises(ValueError, match="Dimension must be 3"):
        tw.deserialize_many_sparse(tw.constant([["a", "b"]]), tw.float32)
    with pytest.raises(TypeError):
        tw.serialize_sparse(tw.SparseTensor([[0]], [1.0], [2]), out_type=tw.int32)


# -- edit_distance -----------------------------------------------------------------------------

def test_edit_distance_documented_example() -> None:
    hypothesis = tw.SparseTensor([[0, 0, 0], [1, 0, 0]], ["a", "b"], (2, 1, 1))
    truth = tw.SparseTensor([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]],
                            ["a", "b", "c", "a"], (2, 2, 2))
    normalized = tw.edit_distance(hypothesis, truth, normalize=True)
    assert normalized.shape.as_list() == [2, 2] and normalized.dtype == tw.float32
    raw = tw.edit_distance(hypothesis, truth, normalize=False)
    got, got_raw = run(normalized, raw)
    np.testing.assert_array_equal(got, [[np.inf, 1.0], [0.5, 1.0]])
    np.testing.assert_array_equal(got_raw, [[1.0, 1.0], [1.0, 1.0]])


def test_edit_distance_matches_levenshtein() -> None:
    h = [[1, 2, 3, 4], [5, 6]]
    t = [[1, 3, 4, 5], [7, 5, 6, 8, 9]]
    def sparse(seqs: list[list[int]]) -> tw.SparseTensor:
        indices = [[i, j] for i, s in enumerate(seqs) for j in range(len(s))]
        return tw.SparseTensor(indices, np.array([v for s in seqs for v in s], np.int64),
                               [len(seqs), max(map(len, seqs))])
    (got,) = run(tw.edit_distance(sparse(h), sparse(t)))
    np.testing.assert_allclose(got, [2 / 4, 3 / 5])


def test_edit_distance_errors() -> None:
    sp = tw.SparseTensor([[0, 0]], [1], [1, 1])
    with pytest.raises(TypeError, match="Hypothesis must be a SparseTensor."):
        tw.edit_distance(tw.constant([1]), sp)
    with pytest.raises(TypeError, match="Truth must be a SparseTensor."):
        tw.edit_distance(sp, [1])
