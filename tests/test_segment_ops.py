"""Segment reductions: values and dtypes against numpy, empty-segment fill values, shape
inference, bad ids at construction and at run time, and gradients against numerical Jacobians."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors

RNG = np.random.default_rng(5)


def run(*fetches):
    with tw.Session() as sess:
        return sess.run(list(fetches))


def sorted_reference(reduce, data: np.ndarray, ids: list[int], empty) -> np.ndarray:
    n = ids[-1] + 1 if ids else 0
    out = np.full((n,) + data.shape[1:], empty, dtype=data.dtype)
    for s in range(n):
        rows = data[np.asarray(ids) == s]
        if len(rows):
            out[s] = reduce(rows, axis=0)
    return out


def unsorted_reference(reduce, data: np.ndarray, ids: np.ndarray, n: int, empty) -> np.ndarray:
    flat_ids = ids.reshape(-1)
    rows = data.reshape((flat_ids.size,) + data.shape[ids.ndim:])
    out = np.full((n,) + rows.shape[1:], empty, dtype=data.dtype)
    for s in range(n):
        chosen = rows[flat_ids == s]
        if len(chosen):
            out[s] = reduce(chosen, axis=0)
    return out


SORTED = [
    (tw.segment_sum, np.sum, 0), (tw.segment_prod, np.prod, 1), (tw.segment_max, np.max, 0),
    (tw.segment_min, np.min, 0),
]


@pytest.mark.parametrize(("fn", "reduce", "empty"), SORTED)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.float64])
def test_sorted_reductions_match_numpy_with_empty_segments(fn, reduce, empty, dtype) -> None:
    data = RNG.integers(-5, 6, (6, 2, 3)).astype(dtype)
    ids = [0, 0, 2, 2, 2, 4]
    out = fn(data, ids)
    assert out.dtype == tw.as_dtype(dtype) and out.shape.as_list() == [None, 2, 3]
    (got,) = run(out)
    expected = sorted_reference(reduce, data, ids, empty)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == dtype


def test_segment_mean_of_floats_and_truncated_integers() -> None:
    floats = np.array([1.0, 2.0, 4.0, -3.0], np.float32)
    ints = np.array([1, 2, -7, 2], np.int32)
    ids = np.array([0, 0, 2, 2], np.int64)
    got_f, got_i = run(tw.segment_mean(floats, ids), tw.math.segment_mean(ints, ids))
    np.testing.assert_array_equal(got_f, [1.5, 0.0, 0.5])
    np.testing.assert_array_equal(got_i, [1, 0, -2])
    assert got_f.dtype == np.float32 and got_i.dtype == np.int32


def test_sorted_ids_are_checked_at_run_time() -> None:
    data = tw.constant([1.0, 2.0, 3.0])
    ids = tw.placeholder(tw.int32, [None])
    total = tw.segment_sum(data, ids, name="total")
    with tw.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"segment ids are not increasing[\s\S]*total \(op: SegmentSum\)"):
            sess.run(total, {ids: [0, 2, 1]})
        with pytest.raises(errors.InvalidArgumentError, match="must be >= 0"):
            sess.run(total, {ids: [-1, 0, 0]})
        with pytest.raises(errors.InvalidArgumentError, match="same size as dimension 0"):
            sess.run(total, {ids: [0, 0]})
        np.testing.assert_array_equal(sess.run(total, {ids: [1, 1, 1]}), [0.0, 6.0])
        assert sess.run(total, {ids: [0, 1, 1]}).tolist() == [1.0, 5.0]


def test_sorted_shape_checks_at_construction() -> None:
    with pytest.raises(ValueError, match="rank 1"):
        tw.segment_sum([[1.0, 2.0]], [[0, 0]])
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.segment_max([1.0, 2.0, 3.0], [0, 1])
    with pytest.raises(ValueError, match="at least rank 1"):
        tw.segment_min(1.0, [0])
    with pytest.raises(TypeError):
        tw.segment_sum([1.0], [0.0])
    with pytest.raises(TypeError):
        tw.segment_prod([True], [0])
    out = tw.segment_sum(tw.placeholder(tw.float32), [0, 1])
    assert out.shape.dims is None


def test_op_names_and_attrs() -> None:
    out = tw.segment_sum([1.0, 2.0], np.array([0, 0], np.int64))
    assert out.op.type == "SegmentSum" and out.op.name == "SegmentSum"
    assert out.op.get_attr("Tindices") == tw.int64
    named = tw.unsorted_segment_prod([1.0], [0], 2, name="p")
    assert (named.op.type, named.op.name) == ("UnsortedSegmentProd", "p")
    assert tw.math.unsorted_segment_min is tw.unsorted_segment_min


UNSORTED = [
    (tw.unsorted_segment_min, np.min, "max"), (tw.unsorted_segment_prod, np.prod, 1),
]


@pytest.mark.parametrize(("fn", "reduce", "empty"), UNSORTED)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
def test_unsorted_reductions_match_numpy(fn, reduce, empty, dtype) -> None:
    data = RNG.integers(-3, 4, (2, 3, 2)).astype(dtype)
    ids = np.array([[3, -1, 0], [3, 0, 3]], np.int32)  # -1: dropped; segments 1 and 4 empty
    out = fn(data, ids, 5)
    assert out.shape.as_list() == [5, 2]
    (got,) = run(out)
    fill = tw.as_dtype(dtype).max if empty == "max" else empty
    np.testing.assert_array_equal(got, unsorted_reference(reduce, data, ids, 5, fill))
    assert got.dtype == dtype


def test_unsorted_ids_out_of_range_at_run_time() -> None:
    ids = tw.placeholder(tw.int32, [2])
    out = tw.unsorted_segment_min([1.0, 2.0], ids, 2)
    with tw.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                             match=r"segment_ids\[1\] = 2 is out of range"):
        sess.run(out, {ids: [0, 2]})


def test_unsorted_segment_mean_and_sqrt_n() -> None:
    data = np.arange(12.0).reshape(4, 3)
    ids = np.array([2, 0, 2, -1])
    mean, sqrt_n = run(tw.unsorted_segment_mean(data, ids, 4),
                       tw.math.unsorted_segment_sqrt_n(data, ids, 4))
    sums = unsorted_reference(np.sum, data, ids, 4, 0.0)
    counts = np.maximum(np.bincount(ids[ids >= 0], minlength=4), 1)[:, None]
    np.testing.assert_allclose(mean, sums / counts)
    np.testing.assert_allclose(sqrt_n, sums / np.sqrt(counts))
    assert mean.dtype == sqrt_n.dtype == np.float64


def test_unsorted_segment_mean_with_unknown_ranks() -> None:
    data = tw.placeholder(tw.float32)
    ids = tw.placeholder(tw.int32)
    mean = tw.unsorted_segment_mean(data, ids, 2)
    with tw.Session() as sess:
        got = sess.run(mean, {data: [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], ids: [1, 1, 0]})
    np.testing.assert_allclose(got, [[5.0, 6.0], [2.0, 3.0]])


def grad_error(fn, shape, out_shape, init=None) -> float:
    x = tw.placeholder(tw.float64, shape)
    init = RNG.uniform(-1, 1, shape) if init is None else init
    return tw.test.compute_gradient_error(x, shape, fn(x), out_shape, x_init_value=init,
                                          delta=1e-6)


@pytest.mark.parametrize(("fn", "out_shape"), [
    (lambda x: tw.segment_sum(x, [0, 0, 1, 3]), [4, 3]),
    (lambda x: tw.segment_mean(x, [0, 0, 1, 3]), [4, 3]),
    (lambda x: tw.segment_max(x, [0, 0, 0, 2]), [3, 3]),
    (lambda x: tw.segment_min(x, [1, 1, 2, 2]), [3, 3]),
    (lambda x: tw.unsorted_segment_min(x, [2, -1, 0, 2], 3), [3, 3]),
    (lambda x: tw.unsorted_segment_prod(x, [2, -1, 0, 2], 4), [4, 3]),
    (lambda x: tw.unsorted_segment_mean(x, [2, 1, 2, 2], 3), [3, 3]),
])
def test_gradients_match_numerical_jacobians(fn, out_shape) -> None:
    assert grad_error(fn, [4, 3], out_shape) < 1e-6


def test_unsorted_segment_prod_gradient_with_zeros() -> None:
    init = np.array([[0.0, 2.0], [3.0, 0.0], [0.5, 0.0], [-1.5, 4.0]])
    # column 0: one zero in segment 0; column 1: two zeros in segment 0
    fn = lambda x: tw.unsorted_segment_prod(x, [0, 0, 0, 1], 2)  # noqa: E731
    assert grad_error(fn, [4, 2], [2, 2], init) < 1e-6
    x = tw.constant(init)
    (grad,) = run(tw.gradients(tw.reduce_sum(fn(x)), x)[0])
    np.testing.assert_allclose(grad, [[1.5, 0.0], [0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])


def test_segment_max_gradient_is_shared_by_ties() -> None:
    x = tw.constant([[1.0], [3.0], [3.0], [2.0]])
    (grad,) = run(tw.gradients(tw.reduce_sum(tw.segment_max(x, [0, 0, 0, 1])), x)[0])
    np.testing.assert_array_equal(grad, [[0.0], [0.5], [0.5], [1.0]])
