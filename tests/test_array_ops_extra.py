"""The data-movement ops of ``api.array_ops_extra``, against numpy references and TF's
documented examples, with static shapes, shapes known only at run time, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(5)


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def fed(value, dtype=None):
    """A placeholder of unknown shape for `value`, and its feed."""
    value = np.asarray(value)
    p = tf.placeholder(dtype or tf.as_dtype(value.dtype.name), None)
    return p, {p: value}


def np_space_to_depth(x, b):
    n, h, w, c = x.shape
    return x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5).reshape(
        n, h // b, w // b, b * b * c)


# -- space <-> depth -------------------------------------------------------------------------

def test_space_to_depth_documented_examples():
    x = np.array([[[[1], [2]], [[3], [4]]]], np.float32)
    out = tf.space_to_depth(x, 2)
    assert out.shape.as_list() == [1, 1, 1, 4]
    np.testing.assert_array_equal(run(out), [[[[1, 2, 3, 4]]]])
    x = np.array([[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]], np.float32)
    np.testing.assert_array_equal(run(tf.space_to_depth(x, 2)), [[[np.arange(1, 13)]]])
    x = np.arange(1, 17, dtype=np.int32).reshape(1, 4, 4, 1)
    np.testing.assert_array_equal(run(tf.space_to_depth(x, 2))[0, :, :, :].tolist(),
                                  [[[1, 2, 5, 6], [3, 4, 7, 8]],
                                   [[9, 10, 13, 14], [11, 12, 15, 16]]])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_space_to_depth_round_trip_and_dtype(dtype):
    x = RNG.integers(0, 100, (2, 6, 4, 3)).astype(dtype)
    s = tf.space_to_depth(x, 2)
    back = tf.depth_to_space(s, 2)
    got, again = run([s, back])
    assert got.dtype == dtype and s.shape.as_list() == [2, 3, 2, 12]
    np.testing.assert_array_equal(got, np_space_to_depth(x, 2))
    np.testing.assert_array_equal(again, x)


def test_space_to_depth_nchw_is_nhwc_transposed():
    x = RNG.normal(size=(2, 3, 4, 6)).astype(np.float32)  # NCHW
    out = tf.space_to_depth(x, 2, data_format="NCHW")
    assert out.shape.as_list() == [2, 12, 2, 3]
    want = np_space_to_depth(x.transpose(0, 2, 3, 1), 2).transpose(0, 3, 1, 2)
    np.testing.assert_array_equal(run(out), want)
    np.testing.assert_array_equal(run(tf.depth_to_space(out, 2, data_format="NCHW")), x)


def test_space_to_depth_unknown_shape_and_errors():
    p, feed = fed(np.ones((1, 4, 4, 2), np.float32))
    out = tf.space_to_depth(p, 2)
    assert out.shape.ndims == 4
    assert run(out, feed).shape == (1, 2, 2, 8)
    with pytest.raises(ValueError, match="Dimension size must be evenly divisible by 2 but is 3"):
        tf.space_to_depth(tf.zeros([1, 3, 4, 1]), 2)
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        tf.space_to_depth(tf.zeros([3, 4, 1]), 2)
    with pytest.raises(ValueError, match="must be at least minimum 2"):
        tf.space_to_depth(tf.zeros([1, 4, 4, 1]), 1)
    with pytest.raises(ValueError, match="evenly divisible by 4 but is 3"):
        tf.depth_to_space(tf.zeros([1, 2, 2, 3]), 2)
    bad = tf.space_to_depth(p, 2)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Image width 4 and height 3 should be divisible by block_size: 2"):
        run(bad, {p: np.ones((1, 3, 4, 1), np.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Input depth dimension 3 should be divisible by: 4"):
        run(tf.depth_to_space(p, 2), {p: np.ones((1, 2, 2, 3), np.float32)})


# -- space <-> batch -------------------------------------------------------------------------

def np_space_to_batch(x, block, pads):
    m = len(block)
    padded = np.pad(x, [(0, 0), *pads] + [(0, 0)] * (x.ndim - m - 1))
    batch = x.shape[0]
    out = []
    for offsets in np.ndindex(*block):  # block offsets outermost, then the batch
        index = (slice(None),) + tuple(slice(o, None, b) for o, b in zip(offsets, block))
        out.append(padded[index])
    return np.concatenate(out, axis=0).reshape(
        (int(np.prod(block)) * batch,) + out[0].shape[1:])


@pytest.mark.parametrize("shape,block,pads", [
    ((1, 2, 2, 1), [2, 2], [[0, 0], [0, 0]]),
    ((2, 4, 6, 3), [2, 3], [[0, 2], [3, 0]]),
    ((3, 5, 2), [4], [[1, 2]]),
])
def test_space_to_batch_nd_matches_numpy_and_inverts(shape, block, pads):
    x = RNG.normal(size=shape).astype(np.float32)
    out = tf.space_to_batch_nd(x, block, pads)
    back = tf.batch_to_space_nd(out, block, pads)
    want = np_space_to_batch(x, block, pads)
    assert out.shape.as_list() == list(want.shape)
    assert back.shape.as_list() == list(shape)
    got, again = run([out, back])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(again, x)


def test_space_to_batch_documented_example():
    x = np.array([[[[1], [2]], [[3], [4]]]], np.float32)
    out = tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]])
    np.testing.assert_array_equal(run(out).ravel(), [1, 2, 3, 4])
    assert out.shape.as_list() == [4, 1, 1, 1]


def test_space_to_batch_v1_wrappers():
    x = RNG.normal(size=(1, 4, 4, 2)).astype(np.float32)
    s = tf.space_to_batch(x, [[0, 0], [2, 0]], block_size=2)
    raw = tf.raw_ops.SpaceToBatch(input=x, paddings=[[0, 0], [2, 0]], block_size=2)
    b = tf.batch_to_space(s, [[0, 0], [2, 0]], 2)
    assert s.shape.as_list() == [4, 2, 3, 2] and b.shape.as_list() == [1, 4, 4, 2]
    got, got_raw, again = run([s, raw, b])
    np.testing.assert_array_equal(got, np_space_to_batch(x, [2, 2], [[0, 0], [2, 0]]))
    np.testing.assert_array_equal(got_raw, got)
    np.testing.assert_array_equal(again, x)
    assert tf.nn.space_to_batch is tf.space_to_batch


def test_space_to_batch_unknown_shape_and_errors():
    p, feed = fed(np.ones((2, 3, 4), np.float32))
    out = tf.space_to_batch_nd(p, [2], [[1, 0]])
    assert run(out, feed).shape == (4, 2, 4)
    with pytest.raises(ValueError, match="Dimension size must be evenly divisible by 2 but is 3"):
        tf.space_to_batch_nd(tf.zeros([1, 3, 2]), [2], [[0, 0]])
    with pytest.raises(ValueError, match="paddings cannot be negative"):
        tf.space_to_batch_nd(tf.zeros([1, 4, 2]), [2], [[-1, 1]])
    with pytest.raises(ValueError, match="block_shape must be positive"):
        tf.space_to_batch_nd(tf.zeros([1, 4, 2]), [0], [[0, 0]])
    with pytest.raises(ValueError, match="Dimension size must be evenly divisible by 4 but is 6"):
        tf.batch_to_space_nd(tf.zeros([6, 2, 2]), [4], [[0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"padded_shape\[0\]=3 is not divisible by block_shape\[0\]=2"):
        run(tf.space_to_batch_nd(p, [2], [[0, 0]]), feed)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Input batch dimension \(2\) is not divisible by product of block "
                             r"sizes \(4\)"):
        run(tf.batch_to_space_nd(p, [4], [[0, 0]]), feed)


def test_required_space_to_batch_paddings():
    paddings, crops = tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [0, 2]])
    np.testing.assert_array_equal(run(paddings), [[1, 0], [0, 2]])
    np.testing.assert_array_equal(run(crops), [[0, 0], [0, 0]])
    paddings, crops = tf.required_space_to_batch_paddings([5, 7], [2, 4])
    np.testing.assert_array_equal(run([paddings, crops]), [[[0, 1], [0, 1]], [[0, 1], [0, 1]]])
    shape = tf.placeholder(tf.int32, [2])
    paddings, crops = tf.required_space_to_batch_paddings(shape, [3, 3], [[1, 1], [0, 0]])
    got = run([paddings, crops], {shape: [5, 9]})
    np.testing.assert_array_equal(got[0], [[1, 3], [0, 0]])
    np.testing.assert_array_equal(got[1], [[0, 2], [0, 0]])


# -- partitioning and stitching --------------------------------------------------------------

def test_dynamic_partition_documented_examples():
    parts = tf.dynamic_partition([10, 20, 30, 40, 50], [0, 0, 1, 1, 0], 2)
    got = run(parts)
    np.testing.assert_array_equal(got[0], [10, 20, 50])
    np.testing.assert_array_equal(got[1], [30, 40])
    parts = tf.dynamic_partition([10, 20, 30, 40, 50], [1, 3, 1, 2, 2], 4)
    got = run(parts)
    assert [g.tolist() for g in got] == [[], [10, 30], [40, 50], [20]]
    assert parts[0].shape.as_list() == [None]


def test_dynamic_partition_multi_dim_and_unknown_shapes():
    data = RNG.normal(size=(2, 3, 4)).astype(np.float64)
    ids = np.array([[0, 2, 1], [2, 2, 0]], np.int32)
    parts = tf.dynamic_partition(data, ids, 3)
    assert parts[1].shape.as_list() == [None, 4]
    for i, got in enumerate(run(parts)):
        np.testing.assert_array_equal(got, data[ids == i])
    p, feed = fed(data)
    q = tf.placeholder(tf.int32, None)
    got = run(tf.dynamic_partition(p, q, 3), {**feed, q: ids})
    np.testing.assert_array_equal(got[2], data[ids == 2])


def test_dynamic_partition_errors():
    with pytest.raises(ValueError, match="does not start with partitions.shape"):
        tf.dynamic_partition(tf.zeros([3, 2]), [0, 1], 2)
    q = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"partitions\[2\] = 5 is not in \[0, 2\)"):
        run(tf.dynamic_partition([1, 2, 3], q, 2), {q: [0, 1, 5]})


def test_dynamic_stitch_documented_example():
    indices = [6, [4, 1], [[5, 2], [0, 3]]]
    data = [[61.0, 62.0], [[41.0, 42.0], [11.0, 12.0]],
            [[[51.0, 52.0], [21.0, 22.0]], [[1.0, 2.0], [31.0, 32.0]]]]
    for fn in (tf.dynamic_stitch, tf.parallel_dynamic_stitch):
        merged = fn(indices, data)
        assert merged.shape.as_list() == [7, 2]
        np.testing.assert_array_equal(run(merged), [[1, 2], [11, 12], [21, 22], [31, 32],
                                                    [41, 42], [51, 52], [61, 62]])


def test_dynamic_stitch_inverts_partition_and_later_wins():
    x = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.int64)
    ids = [0, 1, 0, 1]
    positions = tf.dynamic_partition(tf.range(4), ids, 2)
    parts = tf.dynamic_partition(x, ids, 2)
    np.testing.assert_array_equal(run(tf.dynamic_stitch(positions, parts)), x)
    out = run(tf.dynamic_stitch([[0, 1], [1]], [[1.0, 2.0], [9.0]]))
    np.testing.assert_array_equal(out, [1.0, 9.0])
    q = tf.placeholder(tf.int32, [None])
    merged = tf.dynamic_stitch([q], [tf.constant([5.0, 6.0])])
    assert merged.shape.as_list() == [None]
    np.testing.assert_array_equal(run(merged, {q: [2, 0]}), [6.0, 0.0, 5.0])


def test_dynamic_stitch_errors():
    with pytest.raises(ValueError, match="must match length"):
        tf.dynamic_stitch([[0]], [[1.0], [2.0]])
    with pytest.raises(ValueError, match=r"data\[0\].shape = \[3\] does not start with"):
        tf.dynamic_stitch([[0, 1]], [[1.0, 2.0, 3.0]])
    q = tf.placeholder(tf.int32, None)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] is out of range"):
        run(tf.dynamic_stitch([q], [tf.constant([5.0, 6.0])]), {q: [-1, 0]})


# -- reversing, rolling and sorting ----------------------------------------------------------

def np_reverse_sequence(x, lengths, seq, batch):
    out = x.copy()
    for b, n in enumerate(lengths):
        index = [slice(None)] * x.ndim
        index[batch] = b
        index[seq] = slice(0, n)
        src = [slice(None)] * x.ndim
        src[batch] = b
        src[seq] = slice(n - 1, None, -1) if n else slice(0, 0)
        out[tuple(index)] = x[tuple(src)]
    return out


def test_reverse_sequence_documented_example():
    x = RNG.normal(size=(4, 8, 2, 3)).astype(np.float32)  # [batch, seq, ...] in TF's doc 2
    lengths = [7, 2, 3, 5]
    out = tf.reverse_sequence(x, lengths, seq_axis=1, batch_axis=0)
    np.testing.assert_array_equal(run(out), np_reverse_sequence(x, lengths, 1, 0))
    y = RNG.normal(size=(2, 8, 4, 3)).astype(np.float32)  # batch_dim 2 > seq_dim 1
    out = tf.reverse_sequence(y, [7, 2, 3, 5], seq_dim=1, batch_dim=2)
    np.testing.assert_array_equal(run(out), np_reverse_sequence(y, [7, 2, 3, 5], 1, 2))
    assert out.shape.as_list() == [2, 8, 4, 3]


def test_reverse_sequence_unknown_shape_and_errors():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    p, feed = fed(x)
    out = tf.reverse_sequence(p, tf.constant([4, 0, 1], tf.int32), seq_axis=1)
    np.testing.assert_array_equal(run(out, feed), np_reverse_sequence(x, [4, 0, 1], 1, 0))
    with pytest.raises(ValueError, match="seq_dim must be < input rank: 2 vs. 2"):
        tf.reverse_sequence(x, [1, 1, 1], seq_axis=2)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.reverse_sequence(x, [1, 1], seq_axis=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"seq_lens\(1\) > input.dims\(1\)"):
        run(tf.reverse_sequence(p, [1, 5, 1], seq_axis=1), feed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch_dim == seq_dim == 0"):
        run(tf.reverse_sequence(p, [1, 1, 1], seq_axis=0, batch_axis=0), feed)


def test_roll_matches_numpy():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(run(tf.roll([0, 1, 2, 3, 4], shift=2, axis=0)),
                                  [3, 4, 0, 1, 2])
    out = tf.roll(x, [1, -2, 5], [0, 2, -1])
    np.testing.assert_array_equal(run(out), np.roll(x, (1, -2, 5), (0, 2, 2)))
    p, feed = fed(x)
    shift = tf.placeholder(tf.int64, None)
    np.testing.assert_array_equal(run(tf.roll(p, shift, tf.constant(1, tf.int64)),
                                      {**feed, shift: 4}), np.roll(x, 4, 1))
    with pytest.raises(ValueError, match="shift and axis must have the same size"):
        tf.roll(x, [1, 2], [0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="axis 3 is out of range"):
        run(tf.roll(p, 1, 3), feed)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8,
                                   np.int8])
def test_sort_and_argsort_match_numpy_stable(dtype):
    info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else None
    x = RNG.integers(0, 5, (3, 7)).astype(dtype)
    if info is not None:
        x[0, :2] = [info.min, info.max]  # negation would overflow at the extremes
    got = run([tf.sort(x), tf.argsort(x), tf.sort(x, direction="DESCENDING"),
               tf.argsort(x, axis=0, direction="DESCENDING"), tf.sort(x, axis=0)])
    np.testing.assert_array_equal(got[0], np.sort(x, axis=-1))
    assert got[0].dtype == dtype and got[1].dtype == np.int32
    np.testing.assert_array_equal(got[1], np.argsort(x, axis=-1, kind="stable"))
    np.testing.assert_array_equal(got[2], -np.sort(-x.astype(np.float64), axis=-1))
    np.testing.assert_array_equal(got[3], np.argsort(-x.astype(np.float64), axis=0,
                                                     kind="stable"))
    np.testing.assert_array_equal(got[4], np.sort(x, axis=0))


def test_sort_errors_and_unknown_shape():
    with pytest.raises(ValueError, match="UP should be one of ASCENDING, DESCENDING"):
        tf.sort([1, 2], direction="UP")
    with pytest.raises(ValueError, match="axis must be a constant scalar"):
        tf.sort([1, 2], axis=tf.placeholder(tf.int32, []))
    p = tf.placeholder(tf.float32, [None, None])
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_array_equal(run(tf.sort(p, axis=0), {p: x}), np.sort(x, axis=0))


def test_searchsorted_documented_example_and_shapes():
    seq = [[0, 3, 9, 9, 10], [1, 2, 3, 4, 5]]
    values = [[2, 4, 9], [0, 2, 6]]
    np.testing.assert_array_equal(run(tf.searchsorted(seq, values)), [[1, 2, 2], [0, 1, 5]])
    np.testing.assert_array_equal(run(tf.searchsorted(seq, values, side="right")),
                                  [[1, 2, 4], [0, 2, 5]])
    edges = np.array([0.0, 1.0, 2.5, 4.0])
    vals = RNG.uniform(-1, 5, (2, 3, 4))
    out = tf.searchsorted(np.broadcast_to(edges, (2, 3, 4)), vals, out_type=tf.int64)
    assert out.shape.as_list() == [2, 3, 4] and out.dtype == tf.int64
    np.testing.assert_array_equal(run(out), np.searchsorted(edges, vals))
    p = tf.placeholder(tf.float64, None)
    got = run(tf.searchsorted(edges, p, side="right"), {p: [0.0, 2.5, 9.0]})
    np.testing.assert_array_equal(got, [1, 3, 4])
    with pytest.raises(ValueError, match="side must be either 'right' or 'left'"):
        tf.searchsorted(edges, [1.0], side="middle")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Leading dim_size of both tensors must match"):
        run(tf.raw_ops.LowerBound(sorted_inputs=[[1, 2], [3, 4]], values=[[1, 2, 3]]))


# -- sets, indices and shapes ----------------------------------------------------------------

def test_unique_with_counts_documented_example():
    y, idx, count = tf.unique_with_counts([1, 1, 2, 4, 4, 4, 7, 8, 8], out_idx=tf.int64)
    got = run([y, idx, count])
    np.testing.assert_array_equal(got[0], [1, 2, 4, 7, 8])
    np.testing.assert_array_equal(got[1], [0, 0, 1, 2, 2, 2, 3, 4, 4])
    np.testing.assert_array_equal(got[2], [2, 1, 3, 1, 2])
    assert got[1].dtype == np.int64 and got[2].dtype == np.int64
    x = RNG.integers(0, 4, 20).astype(np.float32)
    y, idx, count = run(tf.unique_with_counts(x))
    np.testing.assert_array_equal(y[idx], x)
    np.testing.assert_array_equal(count, [np.sum(x == v) for v in y])
    assert list(y) == list(dict.fromkeys(x.tolist()))  # order of first occurrence


def test_unique_v2_along_an_axis():
    x = np.array([[1, 0, 0], [1, 0, 0], [2, 0, 0]], np.int32)
    y, idx = tf.raw_ops.UniqueV2(x=x, axis=tf.constant([0], tf.int64))
    got = run([y, idx])
    np.testing.assert_array_equal(got[0], [[1, 0, 0], [2, 0, 0]])
    np.testing.assert_array_equal(got[1], [0, 0, 1])
    y, idx = tf.raw_ops.UniqueV2(x=x, axis=tf.constant([1], tf.int64))
    got = run([y, idx])
    np.testing.assert_array_equal(got[0], [[1, 0], [1, 0], [2, 0]])
    np.testing.assert_array_equal(got[1], [0, 1, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="axis has to be between"):
        run(tf.raw_ops.UniqueV2(x=x, axis=tf.constant([2], tf.int64)))


def test_setdiff1d_documented_example():
    out, idx = tf.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5])
    got = run([out, idx])
    np.testing.assert_array_equal(got[0], [2, 4, 6])
    np.testing.assert_array_equal(got[1], [1, 3, 5])
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.setdiff1d([[1]], [1])


def test_unravel_index():
    out = tf.unravel_index([2, 5, 7], [3, 3])
    assert out.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(run(out), np.stack(np.unravel_index([2, 5, 7], (3, 3))))
    scalar = tf.unravel_index(tf.constant(1621, tf.int64), tf.constant([6, 7, 8, 9], tf.int64))
    assert scalar.shape.as_list() == [4] and scalar.dtype == tf.int64
    np.testing.assert_array_equal(run(scalar), np.unravel_index(1621, (6, 7, 8, 9)))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="index is out of bound as with dims"):
        run(tf.unravel_index([9], [3, 3]))


def test_shape_n_and_identity_n():
    a, b = tf.placeholder(tf.float32, [None, 3]), tf.zeros([4])
    shapes = tf.shape_n([a, b], out_type=tf.int64)
    assert [s.shape.as_list() for s in shapes] == [[2], [1]]
    got = run(shapes, {a: np.zeros((5, 3))})
    np.testing.assert_array_equal(got[0], [5, 3])
    assert got[1].dtype == np.int64
    with pytest.raises(TypeError, match="does not match expected type float32"):
        tf.shape_n([a, tf.zeros([2], tf.int32)])
    outs = tf.identity_n([tf.constant([1, 2]), tf.constant(2.5)])
    assert [o.dtype for o in outs] == [tf.int32, tf.float32]
    got = run(outs)
    np.testing.assert_array_equal(got[0], [1, 2])
    assert got[1] == 2.5


def test_parallel_stack():
    out = tf.parallel_stack([tf.constant([1, 4]), tf.constant([2, 5]), tf.constant([3, 6])])
    assert out.shape.as_list() == [3, 2]
    np.testing.assert_array_equal(run(out), [[1, 4], [2, 5], [3, 6]])
    with pytest.raises(ValueError, match="must be fully defined"):
        tf.parallel_stack([tf.placeholder(tf.float32, [None])])


def test_broadcast_shapes():
    out = tf.broadcast_dynamic_shape([2, 1, 3], [4, 1])
    assert out.shape.as_list() == [3]
    np.testing.assert_array_equal(run(out), [2, 4, 3])
    s = tf.placeholder(tf.int64, [None])
    got = run(tf.broadcast_dynamic_shape(s, tf.constant([5, 1], tf.int64)), {s: [3, 1, 7]})
    np.testing.assert_array_equal(got, [3, 5, 7])
    with pytest.raises(ValueError, match=r"Incompatible shapes: \[2\] vs. \[3\]"):
        tf.broadcast_dynamic_shape([2], [3])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Incompatible shapes: \[2,3\] vs. \[4\]"):
        run(tf.broadcast_dynamic_shape(s, tf.constant([4], tf.int64)), {s: [2, 3]})
    static = tf.broadcast_static_shape(tf.TensorShape([None, 3, 1]), tf.TensorShape([2, 1, 5]))
    assert static.as_list() == [2, 3, 5]
    assert tf.broadcast_static_shape(tf.TensorShape([None]), tf.TensorShape([1])).as_list() \
        == [None]
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))


# -- histograms, bit casts, sampling and checks ----------------------------------------------

def test_histogram_fixed_width_documented_example():
    values = [-1.0, 0.0, 1.5, 2.0, 5.0, 15]
    hist = tf.histogram_fixed_width(values, [0.0, 5.0], nbins=5)
    assert hist.shape.as_list() == [5] and hist.dtype == tf.int32
    np.testing.assert_array_equal(run(hist), [2, 1, 1, 0, 2])
    bins = tf.histogram_fixed_width_bins(values, [0.0, 5.0], nbins=5)
    np.testing.assert_array_equal(run(bins), [0, 0, 1, 2, 4, 4])
    x = RNG.uniform(-2, 12, (4, 25))
    hist = tf.histogram_fixed_width(x, [0.0, 10.0], nbins=7, dtype=tf.int64)
    ref = np.bincount(np.clip(np.floor(x.ravel() / (10 / 7)), 0, 6).astype(int), minlength=7)
    np.testing.assert_array_equal(run(hist), ref)
    np.testing.assert_array_equal(
        run(tf.histogram_fixed_width_bins(x, [0.0, 10.0], nbins=7)),
        np.clip(np.floor(x / (10 / 7)), 0, 6))


def test_histogram_fixed_width_errors():
    n = tf.placeholder(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="nbins should be a positive number, but got '0'"):
        run(tf.histogram_fixed_width([1.0], [0.0, 1.0], nbins=n), {n: 0})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"value_range should satisfy value_range\[0\] < value_range\[1\]"):
        run(tf.histogram_fixed_width([1.0], [1.0, 0.0], nbins=3))


def test_bitcast():
    x = np.array([1.0, -2.5], np.float32)
    out = tf.bitcast(x, tf.int32)
    np.testing.assert_array_equal(run(out), x.view(np.int32))
    wide = tf.bitcast(tf.constant(x), tf.uint8)
    assert wide.shape.as_list() == [2, 4]
    np.testing.assert_array_equal(run(wide), x.view(np.uint8).reshape(2, 4))
    narrow = tf.bitcast(wide, tf.float32)
    assert narrow.shape.as_list() == [2]
    np.testing.assert_array_equal(run(narrow), x)
    with pytest.raises(ValueError, match="Cannot bitcast due to shape. 3 does not match 4"):
        tf.bitcast(tf.zeros([2, 3], tf.uint8), tf.int32)
    p = tf.placeholder(tf.uint8, None)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot bitcast from uint8 to"):
        run(tf.bitcast(p, tf.int32), {p: np.zeros(3, np.uint8)})


def test_multinomial_and_categorical():
    logits = np.array([[np.log(0.7), np.log(0.3), -np.inf], [-np.inf, -np.inf, 0.0]])
    draws = tf.multinomial(logits, 4000, seed=7)
    assert draws.dtype == tf.int64 and draws.shape.as_list() == [2, 4000]
    got = run(draws)
    assert set(np.unique(got[0])) <= {0, 1} and np.all(got[1] == 2)
    assert abs(np.mean(got[0] == 0) - 0.7) < 0.04
    cat = tf.random.categorical(tf.constant(logits, tf.float32), 5, dtype=tf.int32, seed=1)
    assert cat.dtype == tf.int32
    tf.reset_default_graph()
    tf.set_random_seed(3)
    a = tf.multinomial(tf.zeros([2, 10]), 6)
    first = run(a)
    tf.reset_default_graph()
    tf.set_random_seed(3)
    b = tf.multinomial(tf.zeros([2, 10]), 6)
    np.testing.assert_array_equal(run(b), first)  # seeded like the other random ops
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.multinomial([0.5, 0.5], 3)
    n = tf.placeholder(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="num_samples should be nonnegative, got -1"):
        run(tf.multinomial([[0.0, 1.0]], n), {n: -1})


def test_monotonicity_checks_and_is_numeric_tensor():
    cases = {(1, 1, 2): (True, False), (1, 2, 3): (True, True), (3, 2): (False, False),
             (5,): (True, True), (): (True, True)}
    for values, (nd, si) in cases.items():
        x = tf.constant(list(values), tf.float32)
        assert run([tf.is_non_decreasing(x), tf.is_strictly_increasing(x)]) == [nd, si]
    assert run(tf.math.is_non_decreasing([[1, 2], [2, 3]]))
    assert not run(tf.is_strictly_increasing([[1, 2], [2, 3]]))
    assert tf.is_numeric_tensor(tf.constant(1.0)) and not tf.is_numeric_tensor([1.0])
    assert not tf.is_numeric_tensor(tf.constant(True))
    with pytest.raises(TypeError, match="Expected x to be numeric"):
        tf.is_non_decreasing(tf.constant([True, False]))
