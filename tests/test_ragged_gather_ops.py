"""Ragged gather_nd, batch_gather, one_hot, segment ops, deep concat/stack and reductions over
outer axes of ragged_rank > 1 tensors, against Python-list references and TF's examples."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors

P2 = [[b"000", b"001"], [b"010"]]
P3 = [[[b"000", b"001"], [b"010"]], [[b"100"], [b"110", b"111", b"112"], [b"120", b"121"]]]


def run(x, feed=None):
    with tw.Session() as s:
        out = s.run(x, feed)
    return out.to_list() if hasattr(out, "to_list") else out


def test_gather_nd_tf_examples():
    p2, p3 = tw.ragged.constant(P2), tw.ragged.constant(P3)
    assert run(tw.gather_nd(p2, [[1], [0]])) == [[b"010"], [b"000", b"001"]]
    assert run(tw.gather_nd(p2, [1])) == [b"010"]
    assert list(run(tw.gather_nd(p2, [[1, 0], [0, 1]]))) == [b"010", b"001"]
    assert list(run(tw.gather_nd(p3, [[1, 1, 2], [0, 0, 1]]))) == [b"112", b"001"]
    assert run(tw.gather_nd(p3, [[1, 1], [0, 0]])) == [[b"110", b"111", b"112"],
                                                       [b"000", b"001"]]


def test_gather_nd_ragged_and_deep_indices():
    p3 = tw.ragged.constant(P3)
    idx = tw.ragged.constant([[[1, 1, 2]], [], [[0, 0, 1], [1, 2, 0]]], ragged_rank=1)
    assert run(tw.gather_nd(p3, idx)) == [[b"112"], [], [b"001", b"120"]]
    dense = run(tw.gather_nd(tw.ragged.constant(P2), np.array([[[1, 0]], [[0, 0]]])))
    assert isinstance(dense, np.ndarray) and dense.tolist() == [[b"010"], [b"000"]]
    whole = run(tw.gather_nd(tw.ragged.constant(P2), tw.zeros([2, 0], tw.int32)))
    assert whole == [P2, P2]


def test_gather_nd_dense_params_with_uniform_values_and_errors():
    rt = tw.ragged.constant([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]], ragged_rank=1)
    out = run(tw.gather_nd(rt, [[0, 1, 0], [1, 0, 1]]))
    np.testing.assert_array_equal(out, [3.0, 6.0])
    with pytest.raises(ValueError, match="innermost dimension"):
        tw.gather_nd(rt, tw.ragged.constant([[0], [1, 0]]))
    with pytest.raises(TypeError):
        tw.gather_nd(rt, [[0.5]])


def test_gather_nd_gradient():
    flat = tw.constant([1.0, 2.0, 3.0, 4.0])
    rt = tw.RaggedTensor.from_row_splits(flat, [0, 3, 4])
    y = tw.gather_nd(rt, [[0, 2], [1, 0], [0, 2]])
    (g,) = tw.gradients(tw.reduce_sum(y * [1.0, 10.0, 100.0]), [flat])
    np.testing.assert_allclose(run(tw.convert_to_tensor(g)), [0.0, 0.0, 101.0, 10.0])


def test_batch_gather():
    params = tw.ragged.constant([[b"a", b"b", b"c"], [b"d"], [], [b"e"]])
    idx = tw.ragged.constant([[1, 2, 0], [], [], [0, 0]])
    assert run(tw.ragged.batch_gather(params, idx)) == [[b"b", b"c", b"a"], [], [],
                                                        [b"e", b"e"]]
    out = run(tw.ragged.batch_gather(tw.ragged.constant([[1, 2, 3], [4]]), [[2, 0], [0, 0]]))
    assert out.tolist() == [[3, 1], [4, 4]]
    dense = tw.ragged.batch_gather(tw.constant([[1, 2, 3], [4, 5, 6]]),
                                   tw.ragged.constant([[2], [0, 1]]))
    assert run(dense) == [[3], [4, 5]]
    with pytest.raises(ValueError, match="batch shape"):
        tw.ragged.batch_gather(tw.constant([1, 2]), tw.ragged.constant([[0], [0]]))


def test_one_hot():
    out = run(tw.one_hot(tw.ragged.constant([[0, 2], [1]]), 3, dtype=tw.int32))
    assert out == [[[1, 0, 0], [0, 0, 1]], [[0, 1, 0]]]
    with pytest.raises(ValueError):
        tw.one_hot(tw.ragged.constant([[0, 2], [1]]), 3, axis=1)


def test_segment_ops_over_ragged_data():
    data = tw.ragged.constant([[1.0, 2.0, 3.0], [4.0], [5.0, 6.0], []])
    ids = [0, 1, 0, 0]
    assert run(tw.unsorted_segment_sum(data, ids, 3)) == [[6.0, 8.0, 3.0], [4.0], []]
    assert run(tw.math.unsorted_segment_max(data, ids, 2)) == [[5.0, 6.0, 3.0], [4.0]]
    assert run(tw.math.unsorted_segment_min(data, ids, 2)) == [[1.0, 2.0, 3.0], [4.0]]
    assert run(tw.math.unsorted_segment_prod(data, ids, 2)) == [[5.0, 12.0, 3.0], [4.0]]
    assert run(tw.math.unsorted_segment_mean(data, ids, 2)) == [[3.0, 4.0, 3.0], [4.0]]
    sqrt_n = run(tw.math.unsorted_segment_sqrt_n(data, ids, 2))
    np.testing.assert_allclose(sqrt_n[0], [6 / np.sqrt(2), 8 / np.sqrt(2), 3.0])
    ragged_ids = tw.ragged.constant([[0, 1, 1], [0], [1, 1], []])
    assert run(tw.unsorted_segment_sum(data, ragged_ids, 2)).tolist() == [5.0, 16.0]
    with pytest.raises(ValueError, match="prefix"):
        tw.unsorted_segment_sum(tw.constant([1.0]), ragged_ids, 2)


def test_segment_ragged_ids_partition_checked_at_run_time():
    data = tw.ragged.constant([[1, 2], [3]])
    with pytest.raises(errors.InvalidArgumentError):
        run(tw.unsorted_segment_sum(data, tw.ragged.constant([[0], [1, 1]]), 2))


def test_segment_sum_gradient():
    flat = tw.constant([1.0, 2.0, 3.0])
    data = tw.RaggedTensor.from_row_splits(flat, [0, 2, 3])
    out = tw.unsorted_segment_sum(data, [0, 0], 1)
    (g,) = tw.gradients(tw.reduce_sum(out.flat_values * [1.0, 2.0]), [flat])
    np.testing.assert_allclose(run(tw.convert_to_tensor(g)), [1.0, 2.0, 1.0])


RT3 = [[[1.0, 2.0], [3.0]], [[4.0, 5.0, 6.0]], [], [[7.0], [], [8.0, 9.0]]]


def _ref_reduce(rows, fn):
    """Item-wise `fn` over a list of ragged rows (Python reference)."""
    width = max((len(r) for r in rows), default=0)
    return [fn([r[j] for r in rows if j < len(r)]) for j in range(width)]


def test_reductions_over_outer_axes_of_ragged_rank_2():
    rt = tw.ragged.constant(RT3)
    axis0 = [_ref_reduce([row[j] for row in RT3 if j < len(row)], sum)
             for j in range(max(len(r) for r in RT3))]
    assert run(tw.reduce_sum(rt, axis=0)) == axis0
    assert run(tw.reduce_sum(rt, axis=1)) == [_ref_reduce(row, sum) for row in RT3]
    assert run(tw.reduce_max(rt, axis=1)) == [_ref_reduce(row, max) for row in RT3]
    assert run(tw.reduce_mean(rt, axis=1)) == [_ref_reduce(row, np.mean) for row in RT3]
    np.testing.assert_array_equal(run(tw.reduce_sum(rt, axis=[0, 1])), [23.0, 16.0, 6.0])
    kept = run(tw.reduce_sum(rt, axis=1, keepdims=True))
    assert kept == [[r] for r in run(tw.reduce_sum(rt, axis=1))]


def test_reduction_gradient_ragged_rank_2():
    flat = tw.constant([1.0, 2.0, 3.0, 4.0])
    rt = tw.RaggedTensor.from_nested_row_splits(flat, [[0, 2], [0, 2, 4]])
    total = tw.reduce_sum(rt, axis=1)
    (g,) = tw.gradients(tw.reduce_sum(total.flat_values * [1.0, 10.0]), [flat])
    np.testing.assert_allclose(run(tw.convert_to_tensor(g)), [1.0, 10.0, 1.0, 10.0])


def test_concat_and_stack_along_deep_ragged_axes():
    a = tw.ragged.constant([[[1, 2], [3]], [[4]]])
    b = tw.ragged.constant([[[5], [6, 7]], [[8, 9]]])
    assert run(tw.concat([a, b], 2)) == [[[1, 2, 5], [3, 6, 7]], [[4, 8, 9]]]
    assert run(tw.stack([a, b], 2)) == [[[[1, 2], [5]], [[3], [6, 7]]], [[[4], [8, 9]]]]
    x, y = tw.ragged.constant([[1, 2], [3]]), tw.ragged.constant([[4, 5], [6]])
    assert run(tw.stack([x, y], 2)) == [[[1, 4], [2, 5]], [[3, 6]]]
    c = tw.ragged.constant([[[5]], [[6], [7]]])
    with pytest.raises(errors.InvalidArgumentError):
        run(tw.concat([a, c], 2))
