"""Gradients of the extra sparse ops (`standard_ops.sparse_extra_grad`) against numerical
Jacobians and dense references; ops TF leaves without gradients stay so."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw

RNG = np.random.default_rng(9)


def run(*fetches: object, feed: dict | None = None) -> list:
    with tw.Session() as sess:
        return sess.run(list(fetches), feed)


INDICES = np.array([[0, 0, 1], [0, 1, 0], [0, 1, 2], [1, 0, 0], [1, 0, 3], [1, 2, 2]], np.int64)
SHAPE = [2, 3, 4]


def values_placeholder(dtype: tw.DType = tw.float64) -> tw.Tensor:
    return tw.placeholder(dtype, [len(INDICES)])


def test_slice_gradient_routes_to_sliced_entries() -> None:
    values = values_placeholder()
    out = tw.sparse.slice(tw.SparseTensor(INDICES, values, SHAPE), [0, 1, 0], [2, 2, 3])
    weights = tw.constant(np.array([3.0, 5.0, 7.0]))  # the three sliced entries
    loss = tw.reduce_sum(out.values * weights)
    (grad,) = tw.gradients(loss, values)
    (got,) = run(grad, feed={values: RNG.standard_normal(len(INDICES))})
    np.testing.assert_array_equal(got, [0, 3, 5, 0, 0, 7])
    error = tw.test.compute_gradient_error(values, [len(INDICES)], out.values, [3])
    assert error < 1e-6


def test_softmax_gradient_matches_numerical() -> None:
    values = values_placeholder()
    out = tw.sparse_softmax(tw.SparseTensor(INDICES, values, SHAPE))
    error = tw.test.compute_gradient_error(values, [len(INDICES)], out.values, [len(INDICES)],
                                           x_init_value=RNG.standard_normal(len(INDICES)))
    assert error < 1e-6


@pytest.mark.parametrize("kind", ["sum", "mean", "sqrt_n"])
@pytest.mark.parametrize("num_segments", [None, 5])
def test_segment_gradients_match_numerical(kind: str, num_segments: int | None) -> None:
    data = tw.placeholder(tw.float64, [4, 2])
    fn = getattr(tw.sparse, f"segment_{kind}")
    out = fn(data, [0, 2, 2, 3, 0], [0, 0, 1, 3, 3], num_segments=num_segments)
    rows = 4 if num_segments is None else num_segments
    error = tw.test.compute_gradient_error(data, [4, 2], out, [rows, 2],
                                           x_init_value=RNG.standard_normal((4, 2)))
    assert error < 1e-6


def test_segment_mean_grad_op_matches_numpy() -> None:
    grad = RNG.standard_normal((3, 2)).astype(np.float32)
    indices, ids = [1, 1, 4, 0], [0, 0, 0, 2]
    out = tw.raw_ops.SparseSegmentSqrtNGrad(grad=grad, indices=indices, segment_ids=ids,
                                            output_dim0=5)
    assert out.shape.as_list() == [5, 2]
    (got,) = run(out)
    want = np.zeros((5, 2), np.float32)
    want[1] += 2 * grad[0] / np.sqrt(3)
    want[4] += grad[0] / np.sqrt(3)
    want[0] += grad[2]
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_sparse_matmul_gradients_match_matmul(ta: bool, tb: bool) -> None:
    a = tw.constant(RNG.standard_normal((4, 3) if ta else (3, 4)).astype(np.float32))
    b = tw.constant(RNG.standard_normal((5, 4) if tb else (4, 5)).astype(np.float32))
    sparse = tw.sparse_matmul(a, b, transpose_a=ta, transpose_b=tb, b_is_sparse=True)
    dense = tw.matmul(a, b, transpose_a=ta, transpose_b=tb)
    weights = tw.constant(RNG.standard_normal((3, 5)).astype(np.float32))
    got = run(*tw.gradients(tw.reduce_sum(sparse * weights), [a, b]))
    want = run(*tw.gradients(tw.reduce_sum(dense * weights), [a, b]))
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_concat_is_not_differentiable() -> None:
    values = values_placeholder(tw.float32)
    sp = tw.SparseTensor(INDICES, values, SHAPE)
    out = tw.sparse_concat(0, [sp, sp])
    assert tw.gradients(tw.reduce_sum(out.values), values) == [None]


def test_maximum_gradient_is_not_implemented() -> None:
    values = values_placeholder(tw.float32)
    sp = tw.SparseTensor(INDICES, values, SHAPE)
    out = tw.sparse_maximum(sp, sp)
    with pytest.raises(NotImplementedError, match="SparseSparseMaximum"):
        tw.gradients(tw.reduce_sum(out.values), values)
