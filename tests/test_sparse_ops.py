"""Sparse ops against numpy references (values and dtypes), static shapes, TF's construction
and run-time errors (naming the node), and gradients against numerical Jacobians."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tests import sparse_support
from tests.sparse_support import run

RNG = np.random.default_rng(11)
InvalidArgument = errors.InvalidArgumentError


def random_sparse(shape: tuple[int, ...], density: float = 0.4,
                  dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted indices, their values and the dense array they make."""
    if np.dtype(dtype).kind == "f":
        return sparse_support.random_sparse(RNG, shape, density, dtype, RNG.standard_normal)
    return sparse_support.random_sparse(RNG, shape, density, dtype,
                                        lambda n: RNG.integers(-5, 6, n))


# -- to_dense ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
def test_to_dense_matches_numpy(dtype: type) -> None:
    indices, values, dense = random_sparse((4, 3, 5), dtype=dtype)
    sp = tw.SparseTensor(indices, values, dense.shape)
    out = tw.sparse.to_dense(sp, default_value=0)
    filled = tw.sparse_tensor_to_dense(sp, default_value=7)
    assert out.shape.as_list() == [4, 3, 5] and out.dtype == tw.as_dtype(dtype)
    got, got_filled = run(out, filled)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, dense)
    expected = np.full(dense.shape, 7, dtype)
    expected[tuple(indices.T)] = values
    np.testing.assert_array_equal(got_filled, expected)


def test_sparse_to_dense_takes_vector_indices_and_a_scalar_value() -> None:
    out = tw.sparse_to_dense([1, 3], [5], 2.0, default_value=-1.0)
    matrix = tw.sparse_to_dense([[0, 1], [1, 0]], [2, 2], [4, 5])
    assert out.shape.as_list() == [5] and matrix.dtype == tw.int32
    got, got_matrix = run(out, matrix)
    np.testing.assert_array_equal(got, np.array([-1, 2, -1, 2, -1], np.float32))
    np.testing.assert_array_equal(got_matrix, [[0, 4], [5, 0]])


@pytest.mark.parametrize("indices, message", [
    ([[0, 1], [3, 0]], r"indices\[1\] = \[3,0\] is out of bounds: need 0 <= index < \[3,4\]"),
    ([[1, 1], [0, 2]], r"indices\[1\] = \[0,2\] is out of order"),
    ([[1, 1], [1, 1]], r"indices\[1\] = \[1,1\] is repeated"),
    ([[-1, 0], [1, 1]], r"indices\[0\] = \[-1,0\] is out of bounds"),
])
def test_to_dense_validates_indices_as_tf(indices: list, message: str) -> None:
    sp = tw.SparseTensor(indices, [1.0, 2.0], [3, 4])
    out = tw.sparse.to_dense(sp, name="densify")
    with pytest.raises(InvalidArgument, match=rf"(?s){message}.*densify"):
        run(out)


def test_unvalidated_indices_may_be_unsorted_but_not_out_of_bounds() -> None:
    unsorted = tw.SparseTensor([[1, 1], [0, 2]], [1.0, 2.0], [2, 3])
    outside = tw.SparseTensor([[5, 1]], [1.0], [2, 3])
    got, = run(tw.sparse.to_dense(unsorted, validate_indices=False))
    np.testing.assert_array_equal(got, [[0, 0, 2], [0, 1, 0]])
    with pytest.raises(InvalidArgument, match=r"out of bounds\)\.  Shape: \[2,3\]"):
        run(tw.sparse.to_dense(outside, validate_indices=False))


def test_sparse_to_dense_construction_and_run_time_shape_errors() -> None:
    with pytest.raises(ValueError, match="must be rank 0"):
        tw.sparse_to_dense([[0, 0]], [2, 2], [1.0], default_value=[0.0, 1.0])
    n = tw.placeholder(tw.float32, [None])
    out = tw.sparse_to_dense([[0, 0], [1, 1]], [2, 2], n, name="scatter")
    with pytest.raises(InvalidArgument, match=r"sparse_values has incorrect shape \[3\], should "
                                              r"be \[\] or \[2\]"):
        run(out, feed={n: [1.0, 2.0, 3.0]})


# -- reorder / reshape -------------------------------------------------------------------------

def test_reorder_sorts_row_major_and_carries_the_values() -> None:
    indices, values, dense = random_sparse((5, 6))
    perm = RNG.permutation(len(indices))
    sp = tw.sparse.reorder(tw.SparseTensor(indices[perm], values[perm], dense.shape))
    assert sp.shape.as_list() == [5, 6]
    value, = run(sp)
    np.testing.assert_array_equal(value.indices, indices)
    np.testing.assert_array_equal(value.values, values)
    assert value.values.dtype == np.float32


def test_reshape_matches_the_dense_reshape() -> None:
    indices, values, dense = random_sparse((4, 6))
    sp = tw.SparseTensor(indices, values, dense.shape)
    reshaped = tw.sparse.reshape(sp, [3, -1, 2])
    assert reshaped.shape.as_list() == [3, 4, 2]
    value, out = run(reshaped, tw.sparse.to_dense(reshaped))
    np.testing.assert_array_equal(value.dense_shape, [3, 4, 2])
    np.testing.assert_array_equal(out, dense.reshape(3, 4, 2))


def test_reshape_errors_at_construction_and_at_run_time() -> None:
    sp = tw.SparseTensor([[0, 0]], [1.0], [4, 6])
    with pytest.raises(ValueError, match=r"Cannot reshape a tensor with 24 elements to shape "
                                         r"\[5, 5\] \(25 elements\)"):
        tw.sparse.reshape(sp, [5, 5])
    with pytest.raises(ValueError, match="At most one dimension can be inferred"):
        tw.sparse.reshape(sp, [-1, -1])
    shape = tw.placeholder(tw.int64, [2])
    out = tw.sparse.reshape(sp, shape, name="reshaped")
    with tw.Session() as sess:
        with pytest.raises(InvalidArgument, match=r"(?s)requested shape requires a multiple of "
                                                  r"5.*reshaped"):
            sess.run(out, {shape: [5, -1]})
        with pytest.raises(InvalidArgument, match="only one output dimension may be -1"):
            sess.run(out, {shape: [-1, -1]})
        value = sess.run(out, {shape: [2, 12]})
    np.testing.assert_array_equal(value.dense_shape, [2, 12])


# -- sparse_tensor_dense_matmul ----------------------------------------------------------------

@pytest.mark.parametrize("adjoint_a, adjoint_b", [(False, False), (True, False), (False, True),
                                                  (True, True)])
def test_matmul_matches_numpy(adjoint_a: bool, adjoint_b: bool) -> None:
    a_shape = (5, 3) if adjoint_a else (3, 5)
    indices, values, a = random_sparse(a_shape)
    b = RNG.standard_normal((2, 5) if adjoint_b else (5, 2)).astype(np.float32)
    out = tw.sparse_tensor_dense_matmul(tw.SparseTensor(indices, values, a_shape), b,
                                        adjoint_a=adjoint_a, adjoint_b=adjoint_b)
    assert out.shape.as_list() == [3, 2]
    got, = run(out)
    expected = (a.T if adjoint_a else a) @ (b.T if adjoint_b else b)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_matmul_of_integers_and_of_unsorted_repeated_entries() -> None:
    sp = tw.SparseTensor([[1, 0], [0, 1], [1, 0]], np.array([2, 3, 4], np.int32), [2, 2])
    got, = run(tw.sparse.sparse_dense_matmul(sp, np.array([[1, 2], [3, 4]], np.int32)))
    assert got.dtype == np.int32  # repeated entries add up, as TF's kernel
    np.testing.assert_array_equal(got, [[9, 12], [6, 12]])


def test_matmul_errors() -> None:
    sp = tw.SparseTensor([[0, 0]], [1.0], [2, 3])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tw.sparse_tensor_dense_matmul(sp, tw.zeros([4, 2]))
    with pytest.raises(TypeError, match="Input must be a SparseTensor"):
        tw.sparse_tensor_dense_matmul(tw.zeros([2, 3]), tw.zeros([3, 2]))
    outside = tw.SparseTensor([[0, 0], [0, 7]], [1.0, 2.0], [2, 3])
    with pytest.raises(InvalidArgument, match=r"k \(7\) from index\[1,1\] out of bounds \(>=3\)"):
        run(tw.sparse_tensor_dense_matmul(outside, tw.zeros([3, 2])))
    b = tw.placeholder(tw.float32, [None, 2])
    out = tw.sparse_tensor_dense_matmul(sp, b, name="mm")
    with pytest.raises(InvalidArgument, match=r"(?s)inner dimension does not match: 3 vs\. 4.*mm"):
        run(out, feed={b: np.zeros((4, 2), np.float32)})


def test_matmul_gradients_wrt_values_and_dense() -> None:
    indices, values, _ = random_sparse((3, 4), density=0.6, dtype=np.float64)
    for adjoint_a, adjoint_b in [(False, False), (True, True)]:
        tw.reset_default_graph()
        a_shape = (4, 3) if adjoint_a else (3, 4)
        rows = indices[:, ::-1] if adjoint_a else indices
        v = tw.constant(values)
        b = tw.constant(RNG.standard_normal((2, 4) if adjoint_b else (4, 2)))
        out = tw.sparse_tensor_dense_matmul(tw.SparseTensor(rows, v, a_shape), b,
                                            adjoint_a=adjoint_a, adjoint_b=adjoint_b)
        error = tw.test.compute_gradient_error([v, b], [values.shape, b.shape.as_list()], out,
                                               [3, 2])
        assert error < 1e-6


# -- reduce_sum --------------------------------------------------------------------------------

@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (-1, True), ([0, 2], False),
                                            (0, True)])
def test_reduce_sum_matches_numpy(axis: object, keepdims: bool) -> None:
    indices, values, dense = random_sparse((3, 4, 2))
    out = tw.sparse_reduce_sum(tw.SparseTensor(indices, values, dense.shape), axis=axis,
                               keepdims=keepdims)
    expected = dense.sum(axis=None if axis is None else tuple(np.atleast_1d(axis)),
                         keepdims=keepdims)
    assert out.shape.as_list() == list(expected.shape)
    got, = run(out)
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_reduce_sum_of_integers_with_an_unknown_shape() -> None:
    sp = tw.sparse_placeholder(tw.int32)
    out = tw.sparse.reduce_sum(sp, axis=0, name="total")
    assert out.shape.ndims is None
    feed = {sp: ([[0, 1], [2, 1], [1, 0]], np.array([1, 2, 3], np.int32), [3, 2])}
    got, = run(out, feed=feed)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [3, 3])
    bad = tw.sparse.reduce_sum(sp, axis=2, name="wide")
    with pytest.raises(InvalidArgument, match=r"(?s)Invalid reduction dimension 2, for input "
                                              r"with 2 dimensions.*wide"):
        run(bad, feed=feed)


def test_reduce_sum_static_axis_error_and_gradient() -> None:
    with pytest.raises(ValueError, match="Invalid reduction dimension 3"):
        tw.sparse_reduce_sum(tw.SparseTensor([[0, 0]], [1.0], [2, 2]), axis=3)
    indices, values, _ = random_sparse((3, 4, 2), density=0.5, dtype=np.float64)
    v = tw.constant(values)
    out = tw.sparse_reduce_sum(tw.SparseTensor(indices, v, [3, 4, 2]), axis=[0, 2])
    assert tw.test.compute_gradient_error(v, values.shape, out, [4]) < 1e-6


# -- sparse + dense, retain, fill_empty_rows, from_dense -----------------------------------------

def test_sparse_add_with_a_dense_operand_either_side() -> None:
    indices, values, dense = random_sparse((3, 4))
    sp = tw.SparseTensor(indices, values, dense.shape)
    other = RNG.standard_normal((3, 4)).astype(np.float32)
    left, right = run(tw.sparse_add(sp, other), tw.sparse.add(other, sp))
    np.testing.assert_allclose(left, dense + other, rtol=1e-6)
    np.testing.assert_allclose(right, dense + other, rtol=1e-6)
    with pytest.raises(TypeError, match="At least one input should be SparseTensor"):
        tw.sparse_add(other, other)


def test_sparse_add_shape_mismatch_and_gradient() -> None:
    sp = tw.SparseTensor([[0, 1]], [1.0], [2, 3])
    b = tw.placeholder(tw.float32, [None, 3])
    out = tw.sparse_add(sp, b, name="plus")
    with pytest.raises(InvalidArgument, match=r"(?s)Dimension 0 does not equal \(no "
                                              r"broadcasting is supported\).*plus"):
        run(out, feed={b: np.zeros((4, 3), np.float32)})
    tw.reset_default_graph()
    v = tw.constant(np.array([1.0, 2.0]))
    d = tw.constant(RNG.standard_normal((2, 3)))
    out = tw.sparse_add(tw.SparseTensor([[0, 1], [1, 2]], v, [2, 3]), d)
    assert tw.test.compute_gradient_error([v, d], [[2], [2, 3]], out * out, [2, 3]) < 1e-6


def test_sparse_add_of_two_sparse_tensors_merges_and_thresholds() -> None:
    a = tw.SparseTensor([[0, 1], [1, 0], [2, 2]], [1.0, 2.0, 0.5], [3, 3])
    b = tw.SparseTensor([[2, 2], [0, 0], [1, 0]], [-0.25, 4.0, -2.0], [3, 3])
    total = tw.sparse.add(a, b)
    kept = tw.sparse_add(a, b, thresh=0.3)
    assert total.shape.as_list() == [3, 3] and total.dtype == tw.float32
    value, dense, thresholded = run(total, tw.sparse.to_dense(total), kept)
    np.testing.assert_array_equal(value.indices, [[0, 0], [0, 1], [1, 0], [2, 2]])
    np.testing.assert_array_equal(value.values, np.array([4.0, 1.0, 0.0, 0.25], np.float32))
    np.testing.assert_array_equal(dense, [[4, 1, 0], [0, 0, 0], [0, 0, 0.25]])
    np.testing.assert_array_equal(thresholded.indices, [[0, 0], [0, 1]])
    with pytest.raises(ValueError, match="incompatible"):
        tw.sparse_add(a, tw.SparseTensor([[0, 0]], [1.0], [3, 4]))
    wide = tw.sparse_placeholder(tw.float32)
    with pytest.raises(InvalidArgument, match="Operands' shapes do not match: got 3 and 4 for "
                                              "dimension 1"):
        run(tw.sparse_add(a, wide, name="both"), feed={wide: ([[0, 0]], [1.0], [3, 4])})


def test_sparse_add_of_two_sparse_tensors_gradient() -> None:
    va = tw.constant(np.array([1.0, 2.0, 3.0]))
    vb = tw.constant(np.array([-1.0, 5.0]))
    total = tw.sparse_add(tw.SparseTensor([[0, 1], [1, 0], [2, 2]], va, [3, 3]),
                          tw.SparseTensor([[1, 0], [2, 1]], vb, [3, 3]))
    dense = tw.sparse.to_dense(total)
    assert tw.test.compute_gradient_error([va, vb], [[3], [2]], dense * dense, [3, 3]) < 1e-6


def test_retain_keeps_the_chosen_entries() -> None:
    sp = tw.SparseTensor([[0, 0], [1, 2], [2, 1]], [1, 2, 3], [3, 3])
    value, = run(tw.sparse.retain(sp, [True, False, True]))
    np.testing.assert_array_equal(value.indices, [[0, 0], [2, 1]])
    np.testing.assert_array_equal(value.values, [1, 3])
    np.testing.assert_array_equal(value.dense_shape, [3, 3])
    with pytest.raises(ValueError, match="Dimensions 3 and 2 are not compatible"):
        tw.sparse_retain(sp, [True, False])


def test_fill_empty_rows_and_its_gradient() -> None:
    v = tw.constant(np.array([1.0, 2.0, 3.0]))
    default = tw.constant(np.float64(-1.0))
    sp = tw.SparseTensor([[1, 0], [1, 3], [3, 2]], v, [5, 4])
    filled, empty = tw.sparse.fill_empty_rows(sp, default)
    value, got_empty = run(filled, empty)
    np.testing.assert_array_equal(value.indices, [[0, 0], [1, 0], [1, 3], [2, 0], [3, 2], [4, 0]])
    np.testing.assert_array_equal(value.values, [-1, 1, 2, -1, 3, -1])
    np.testing.assert_array_equal(got_empty, [True, False, True, False, True])
    dense = tw.sparse.to_dense(filled)
    assert tw.test.compute_gradient_error([v, default], [[3], []], dense * dense, [5, 4]) < 1e-6


def test_from_dense_keeps_the_non_zero_elements() -> None:
    x = np.array([[0, 3, 0], [4, 0, 5]], np.int32)
    sp = tw.sparse.from_dense(x)
    assert sp.dtype == tw.int32
    value, back = run(sp, tw.sparse.to_dense(sp))
    np.testing.assert_array_equal(value.indices, [[0, 1], [1, 0], [1, 2]])
    np.testing.assert_array_equal(value.values, [3, 4, 5])
    np.testing.assert_array_equal(back, x)


def test_to_dense_gradient_reaches_values_and_default() -> None:
    v = tw.constant(np.array([1.0, 2.0]))
    default = tw.constant(np.float64(0.5))
    out = tw.sparse.to_dense(tw.SparseTensor([[0, 1], [2, 0]], v, [3, 2]), default)
    assert tw.test.compute_gradient_error([v, default], [[2], []], out * out, [3, 2]) < 1e-6


def test_reorder_gradient_follows_the_permutation() -> None:
    v = tw.constant(np.array([1.0, 2.0, 3.0]))
    sp = tw.sparse.reorder(tw.SparseTensor([[2, 0], [0, 1], [1, 1]], v, [3, 2]))
    weights = tw.constant(np.array([10.0, 20.0, 30.0]))
    grad, = tw.gradients(tw.reduce_sum(sp.values * weights), [v])
    got, = run(grad)
    np.testing.assert_array_equal(got, [30.0, 10.0, 20.0])


# -- embedding_lookup_sparse -------------------------------------------------------------------

IDS = ([[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]], [3, 1, 1, 0, 1])
WEIGHTS = [2.0, 1.0, 0.5, 1.0, 3.0]


def embedding_reference(params: np.ndarray, weights: list[float] | None,
                        combiner: str) -> np.ndarray:
    indices, ids = IDS
    weighted = weights is not None
    weights = [1.0] * len(ids) if weights is None else weights
    out = np.zeros((3, params.shape[1]), params.dtype)
    for row in range(3):
        chosen = [i for i, (r, _) in enumerate(indices) if r == row]
        if not chosen:  # TF divides by the weights' sum (0) there, or by max(count, 1)
            out[row] = np.nan if weighted and combiner != "sum" else 0.0
            continue
        total = sum(weights[i] * params[ids[i]] for i in chosen)
        norm = {"sum": 1.0, "mean": sum(weights[i] for i in chosen),
                "sqrtn": np.sqrt(sum(weights[i] ** 2 for i in chosen))}[combiner]
        out[row] = total / norm
    return out


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
def test_embedding_lookup_sparse_matches_numpy(combiner: str, weighted: bool) -> None:
    params = RNG.standard_normal((4, 3)).astype(np.float32)
    sp_ids = tw.SparseTensor(IDS[0], np.array(IDS[1], np.int64), [3, 3])
    sp_weights = tw.SparseTensor(IDS[0], WEIGHTS, [3, 3]) if weighted else None
    out = tw.nn.embedding_lookup_sparse(params, sp_ids, sp_weights, combiner=combiner)
    got, = run(out)
    assert got.dtype == np.float32
    expected = embedding_reference(params, WEIGHTS if weighted else None, combiner)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_embedding_lookup_sparse_gradient_and_errors() -> None:
    params = tw.constant(RNG.standard_normal((4, 3)))
    rows = [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]]  # no empty row: no 0 / 0 anywhere
    sp_ids = tw.SparseTensor(rows, np.array(IDS[1], np.int64), [2, 3])
    sp_weights = tw.SparseTensor(rows, np.array(WEIGHTS), [2, 3])
    out = tw.nn.embedding_lookup_sparse(params, sp_ids, sp_weights, combiner="sqrtn")
    theoretical, numerical = tw.test.compute_gradient(params, [4, 3], out, [2, 3])
    assert np.isfinite(numerical).all() and theoretical[9:].any()  # id 3 is used
    np.testing.assert_allclose(theoretical, numerical, atol=1e-6)
    with pytest.raises(ValueError, match="combiner must be one of"):
        tw.nn.embedding_lookup_sparse(params, sp_ids, None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
        tw.nn.embedding_lookup_sparse(params, [1, 2], None)


def test_sparse_times_and_over_dense_broadcast_the_dense_side() -> None:
    # sparse_ops_test.SparseMathOpsTest (cwise mul/div): the dense operand is broadcast to the
    # sparse shape and read at each sparse index; the result keeps the sparse indices.
    values = tw.constant([1.0, 2.0, 3.0])
    sp = tw.SparseTensor([[0, 0], [1, 2], [1, 0]], values, [2, 3])
    row = tw.constant([[1.0, 2.0, 3.0]])
    product, quotient = sp * row, sp / tw.constant([2.0, 4.0, 8.0])
    assert isinstance(product, tw.SparseTensor) and product.indices is sp.indices
    assert product.values.op.type == "SparseDenseCwiseMul"
    scaled = sp * 2.0
    loss = tw.reduce_sum(product.values * tw.constant([1.0, 10.0, 100.0])) + \
        tw.reduce_sum(quotient.values)
    g_values, g_row = tw.gradients(loss, [values, row])
    got = run(product.values, quotient.values, scaled.values, g_values, g_row)
    np.testing.assert_allclose(got[0], [1.0, 6.0, 3.0])
    np.testing.assert_allclose(got[1], [0.5, 0.25, 1.5])
    np.testing.assert_allclose(got[2], [2.0, 4.0, 6.0])
    np.testing.assert_allclose(got[3], [1.5, 30.125, 100.5])
    np.testing.assert_allclose(got[4], [[301.0, 0.0, 20.0]])
    ints = tw.SparseTensor([[0], [2]], tw.constant([7, -7]), [3])
    true_div = ints / tw.constant([2, 2, 2])
    assert true_div.values.dtype == tw.float64  # truediv casts int32 as TF's table says
    old_div = ints.__div__(tw.constant([2, 2, 2]))
    np.testing.assert_array_equal(run(true_div.values, old_div.values)[1], [3, -3])
    wide = sp * tw.placeholder_with_default(np.ones(4, np.float32), [None])
    with pytest.raises(errors.InvalidArgumentError, match="broadcasts dense to sparse only"):
        run(wide.values)
