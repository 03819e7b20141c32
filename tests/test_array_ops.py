"""Array ops (``tensorweave.api.array_ops``, their OpDefs and CPU kernels) against numpy:
values, dtypes, static shapes, TF's masks and errors at construction and at run time."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.api.array_ops import slice_helper
from tensorweave.engine import errors

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def run(fetches: Any, feed_dict: dict | None = None) -> Any:
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def check(tensor: tf.Tensor, expected: Any, feed_dict: dict | None = None) -> None:
    """`tensor` evaluates to `expected` (values and dtype), and its static shape agrees."""
    expected = np.asarray(expected)
    got = run(tensor, feed_dict)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected)
    assert tensor.dtype.np_type == expected.dtype
    assert tensor.shape.is_compatible_with(expected.shape), (tensor.shape, expected.shape)


def unknown(value: np.ndarray, rank: bool = False) -> tuple[tf.Tensor, dict]:
    """A placeholder of unknown shape (or known rank only) fed with `value`."""
    shape = [None] * value.ndim if rank else None
    p = tf.placeholder(tf.as_dtype(value.dtype), shape)
    return p, {p: value}


# -- reshaping -------------------------------------------------------------------------------

def test_reshape_infers_wildcard_and_static_shape() -> None:
    t = tf.reshape(X, [4, -1])
    assert t.shape.as_list() == [4, 6]
    check(t, X.reshape(4, -1))
    check(tf.reshape(tf.constant(5), []), np.array(5, np.int32))
    check(tf.reshape(X, tf.TensorShape([6, 4])), X.reshape(6, 4))


def test_reshape_shape_from_tensors_and_unknown_input() -> None:
    p, feed = unknown(X)
    t = tf.reshape(p, [tf.constant(2), 12])
    assert t.shape.as_list() == [2, 12]
    check(t, X.reshape(2, 12), feed)
    dynamic = tf.reshape(p, tf.placeholder_with_default(tf.constant([3, 8]), [2]))
    assert dynamic.shape.as_list() == [None, None]
    check(dynamic, X.reshape(3, 8), feed)


def test_reshape_errors() -> None:
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 24 elements"):
        tf.reshape(X, [5, 5])
    # reshape_op_test.testErrors: TF's shape function words a -1 that cannot be inferred so
    with pytest.raises(ValueError, match="Dimension size must be evenly divisible by 7 but is 24"):
        tf.reshape(X, [7, -1])
    # two -1s are two unknown dims when built; the kernel refuses them
    twice = tf.reshape(X, [-1, -1])
    assert twice.shape.as_list() == [None, None]
    with pytest.raises(errors.InvalidArgumentError,
                       match="Only one input size may be -1, not both 0 and 1"):
        run(twice)
    with pytest.raises(TypeError):
        tf.reshape(X, [2.0, 12.0])
    p, feed = unknown(X)
    with pytest.raises(errors.InvalidArgumentError, match="24 values, but the requested shape"):
        run(tf.reshape(p, [5, 5]), feed)
    with pytest.raises(errors.InvalidArgumentError, match="requires a multiple of 5"):
        run(tf.reshape(p, [5, -1]), feed)


def test_transpose_default_explicit_and_unknown_rank() -> None:
    check(tf.transpose(X), X.transpose())
    check(tf.transpose(X, [1, 0, 2]), X.transpose(1, 0, 2))
    check(tf.transpose(X, [-1, 0, 1]), X.transpose(2, 0, 1))
    p, feed = unknown(X)
    t = tf.transpose(p)
    assert t.shape.ndims is None
    check(t, X.transpose(), feed)
    with pytest.raises(ValueError, match="Dimension must be 3 but is 2"):
        tf.transpose(X, [1, 0])
    with pytest.raises(ValueError):
        tf.transpose(X, [0, 0, 1])
    with pytest.raises(errors.InvalidArgumentError):
        run(tf.transpose(p, [1, 0]), feed)


def test_expand_dims_and_squeeze() -> None:
    check(tf.expand_dims(X, -1), X[..., None])
    check(tf.expand_dims(X, axis=0), X[None])
    check(tf.expand_dims(X, dim=1), X[:, None])
    with pytest.raises(ValueError, match="Tried to expand dim index 4"):
        tf.expand_dims(X, 4)
    with pytest.raises(ValueError, match="Must specify an axis"):
        tf.expand_dims(X)
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.expand_dims(X, 0, dim=0)
    y = X.reshape(2, 1, 3, 1, 4)
    check(tf.squeeze(y), X)
    check(tf.squeeze(y, [1]), y[:, 0])
    check(tf.squeeze(y, axis=-2), y[:, :, :, 0])
    check(tf.squeeze(y, squeeze_dims=[1, 3]), X)
    with pytest.raises(ValueError, match="Can not squeeze dim\\[0\\]"):
        tf.squeeze(y, [0])
    p, feed = unknown(y)
    assert tf.squeeze(p).shape.ndims is None
    with pytest.raises(errors.InvalidArgumentError, match="Can not squeeze dim\\[2\\]"):
        run(tf.squeeze(p, [2]), feed)
    partial = tf.placeholder(tf.float32, [None, 1, 3])
    assert tf.squeeze(partial, [1]).shape.as_list() == [None, 3]
    assert tf.squeeze(partial).shape.ndims is None


def test_tile_broadcast_to_and_reverse() -> None:
    check(tf.tile(X, [1, 2, 3]), np.tile(X, [1, 2, 3]))
    check(tf.tile(X, [1, 0, 1]), np.tile(X, [1, 0, 1]))
    with pytest.raises(ValueError):
        tf.tile(X, [1, 2])
    row = np.arange(3, dtype=np.int64)
    check(tf.broadcast_to(row, [2, 3]), np.broadcast_to(row, (2, 3)))
    check(tf.broadcast_to(row[:, None], tf.constant([3, 4])), np.broadcast_to(row[:, None], (3, 4)))
    with pytest.raises(ValueError):
        tf.broadcast_to(row, [2, 4])
    p, feed = unknown(row)
    with pytest.raises(errors.InvalidArgumentError, match="Unable to broadcast"):
        run(tf.broadcast_to(p, [2, 4]), feed)
    check(tf.reverse(X, [0, -1]), X[::-1, :, ::-1])
    check(tf.reverse_v2(X, [1]), X[:, ::-1])
    with pytest.raises(ValueError, match="specified more than once"):
        tf.reverse(X, [0, -3])
    with pytest.raises(ValueError, match="out of valid range"):
        tf.reverse(X, [3])


@pytest.mark.parametrize("mode", ["CONSTANT", "reflect", "SYMMETRIC"])
def test_pad_modes(mode: str) -> None:
    paddings = [[1, 0], [0, 2], [1, 1]]
    expected = np.pad(X, paddings, mode=mode.lower())
    check(tf.pad(X, paddings, mode=mode), expected)
    p, feed = unknown(X)
    t = tf.pad(p, tf.constant(paddings, tf.int64), mode=mode)
    assert t.shape.as_list() == [None] * 3  # the rank comes from the paddings' shape
    check(t, expected, feed)


def test_pad_and_tile_read_partly_known_paddings_and_multiples() -> None:
    # As TF: a pack of known and unknown values still fixes the dims it can.
    x = tf.placeholder(tf.float32, [4, None])
    n = tf.placeholder(tf.int32, [])
    assert tf.pad(x, tf.stack([[1, 2], tf.placeholder(tf.int32, [2])])).shape.as_list() == \
        [7, None]
    assert tf.pad(x, [[1, 2], [n, 1]]).shape.as_list() == [7, None]
    five = tf.placeholder(tf.float32, [5, 3])
    assert tf.pad(five, [[1, 2], [n, 1]], mode="SYMMETRIC").shape.as_list() == [8, None]
    assert tf.pad(five, [[n, 2], [0, 1]], constant_values=1.0).shape.as_list() == [None, 4]
    assert tf.tile(x, tf.stack([2, n])).shape.as_list() == [8, None]
    assert tf.tile(x, [n, 3]).shape.as_list() == [None, None]
    assert tf.tile(five, [n, 3]).shape.as_list() == [None, 9]
    value = np.ones((4, 2), np.float32)
    got = run([tf.pad(x, [[1, 2], [n, 1]]), tf.tile(x, tf.stack([2, n]))], {x: value, n: 2})
    assert got[0].shape == (7, 5) and got[1].shape == (8, 4)


def test_split_errors_word_tf() -> None:
    # split_op_test.testShapeFunctionEdgeCases and the SplitV shape function
    with pytest.raises(ValueError, match="should evenly divide"):
        tf.split([0, 1, 2, 3], 3, axis=0)
    with pytest.raises(ValueError, match="size_splits can only have one -1"):
        tf.split(X, [1, -1, -1], axis=1)
    with pytest.raises(ValueError, match="Attr 'num_split' of 'Split' Op passed 0 less than "
                                         "minimum 1."):
        tf.split(X, 0)


def test_pad_strings_and_uint8_like_tf() -> None:
    # pad_op_test.testString: the padding of a string tensor is the empty string.
    words = np.array([[b"Hello", b"World"]], dtype=object)
    t = tf.pad(words, [[1, 1], [0, 1]])
    assert t.dtype == tf.string and t.shape.as_list() == [3, 3]
    expected = np.array([[b""] * 3, [b"Hello", b"World", b""], [b""] * 3], dtype=object)
    np.testing.assert_array_equal(run(t), expected)
    p, feed = unknown(words)
    np.testing.assert_array_equal(run(tf.pad(p, [[0, 0], [1, 0]]), feed),
                                  [[b"", b"Hello", b"World"]])
    np.testing.assert_array_equal(run(tf.pad(words, [[0, 0], [1, 1]], "SYMMETRIC")),
                                  [[b"Hello", b"Hello", b"World", b"World"]])
    small = np.array([[1, 2]], np.uint8)
    check(tf.pad(small, [[1, 0], [0, 1]]), np.pad(small, [[1, 0], [0, 1]]))
    check(tf.pad(small, [[0, 0], [1, 1]], constant_values=9),
          np.pad(small, [[0, 0], [1, 1]], constant_values=9))


def test_pad_constant_values_and_errors() -> None:
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = tf.pad(ints, [[1, 1], [2, 0]], constant_values=-7)
    assert t.op.type == "PadV2"
    check(t, np.pad(ints, [[1, 1], [2, 0]], constant_values=-7))
    assert tf.pad(ints, [[1, 1], [0, 0]]).op.type == "Pad"
    with pytest.raises(ValueError, match="Unknown padding mode"):
        tf.pad(ints, [[1, 1], [0, 0]], mode="wrap")
    with pytest.raises(ValueError, match="less than the dimension size"):
        tf.pad(ints, [[2, 0], [0, 0]], mode="REFLECT")
    with pytest.raises(ValueError):
        tf.pad(ints, [[1, 1]])
    with pytest.raises(TypeError):
        tf.pad(ints, [[1, 1], [0, 0]], constant_values=0.5)
    p, feed = unknown(ints)
    with pytest.raises(errors.InvalidArgumentError, match="paddings must be the rank"):
        run(tf.pad(p, [[1, 1]]), feed)
    with pytest.raises(errors.InvalidArgumentError, match="no greater than"):
        run(tf.pad(p, [[3, 0], [0, 0]], mode="SYMMETRIC"), feed)


# -- joining and splitting -------------------------------------------------------------------

def test_concat_static_and_negative_axis() -> None:
    a, b = X, X[:, :2]
    t = tf.concat([a, b], axis=-2)
    assert t.shape.as_list() == [2, 5, 4]
    check(t, np.concatenate([a, b], axis=-2))
    check(tf.concat([X], 0), X)
    partial = tf.placeholder(tf.float32, [None, 3, 4])
    t = tf.concat([partial, X], 0)
    assert t.shape.as_list() == [None, 3, 4]
    check(t, np.concatenate([X, X]), {partial: X})
    unknown_axis = tf.concat([X, X], tf.placeholder_with_default(1, []))
    assert unknown_axis.shape.as_list() == [None, None, None]
    check(unknown_axis, np.concatenate([X, X], axis=1))


def test_concat_errors() -> None:
    with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal"):
        tf.concat([X, X[:, :2]], 2)
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
        tf.concat([X, X[0]], 0)
    with pytest.raises(ValueError, match="range \\[-3, 3\\)"):
        tf.concat([X, X], 3)
    with pytest.raises(TypeError):
        tf.concat([X, X.astype(np.int32)], 0)
    t = tf.constant(X)
    with pytest.raises(TypeError, match="Expected int32"):  # TF 0.x's concat(axis, values)
        tf.concat(0, [t, t])
    with pytest.raises(ValueError, match="must have rank 0"):
        tf.concat([t], [0])
    p, feed = unknown(X)
    with pytest.raises(errors.InvalidArgumentError, match="Dimension 1 in both shapes"):
        run(tf.concat([p, X[:, :2]], 2), feed)


def test_stack_unstack_and_autopacking() -> None:
    check(tf.stack([X, X + 1], axis=-1), np.stack([X, X + 1], axis=-1))
    c = tf.stack([[1, 2], [3, 4]])
    assert c.op.type == "Const"
    t = tf.constant(2.5)
    check(tf.convert_to_tensor([t, 1]), np.array([2.5, 1], np.float32))
    check(tf.stack([[t, 1], [2, t]]), np.array([[2.5, 1], [2, 2.5]], np.float32))
    with pytest.raises(ValueError, match="not in range"):
        tf.stack([X, X], axis=4)
    with pytest.raises(ValueError, match="Shapes must be equal rank"):
        tf.stack([X, X[0]])
    parts = tf.unstack(X, axis=-2)
    assert len(parts) == 3 and parts[0].shape.as_list() == [2, 4]
    got = run(parts)
    for i, part in enumerate(got):
        np.testing.assert_array_equal(part, X[:, i])
    assert len(list(tf.constant(X))) == 2  # Tensor.__iter__ unstacks the first dimension
    with pytest.raises(ValueError, match="Cannot infer argument `num`"):
        tf.unstack(tf.placeholder(tf.float32, None))
    one = tf.raw_ops.Unpack(value=X[:1], num=1)
    assert isinstance(one, list) and len(one) == 1
    np.testing.assert_array_equal(run(one[0]), X[0])
    p, feed = unknown(X)
    with pytest.raises(errors.InvalidArgumentError, match="must equal 3"):
        run(tf.unstack(p, num=3), feed)


def test_split_even_sizes_and_wildcard() -> None:
    parts = tf.split(X, 2, axis=-1)
    assert [p.shape.as_list() for p in parts] == [[2, 3, 2]] * 2
    for got, want in zip(run(parts), np.split(X, 2, axis=-1)):
        np.testing.assert_array_equal(got, want)
    parts = tf.split(X, [1, -1, 1], axis=2)
    assert [p.shape.as_list() for p in parts] == [[2, 3, 1], [2, 3, 2], [2, 3, 1]]
    for got, want in zip(run(parts), np.split(X, [1, 3], axis=2)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="evenly divisible"):
        tf.split(X, 3, axis=2)
    with pytest.raises(ValueError, match="Determined shape must"):
        tf.split(X, [1, 1], axis=2)
    with pytest.raises(ValueError, match="Cannot infer argument `num`"):
        tf.split(X, tf.placeholder(tf.int32, None))
    p, feed = unknown(X)
    with pytest.raises(errors.InvalidArgumentError, match="evenly divide"):
        run(tf.split(p, 3, axis=2), feed)
    with pytest.raises(errors.InvalidArgumentError, match="Determined shape must"):
        run(tf.split(p, [3, 3], axis=2), feed)


# -- slicing ---------------------------------------------------------------------------------

def test_slice_with_minus_one_size() -> None:
    t = tf.slice(X, [0, 1, 1], [-1, 2, 2])
    assert t.shape.as_list() == [2, 2, 2]
    check(t, X[:, 1:3, 1:3])
    with pytest.raises(ValueError, match="Expected size\\[1\\] in \\[0, 2\\]"):
        tf.slice(X, [0, 1, 0], [1, 3, 1])
    p, feed = unknown(X)
    with pytest.raises(errors.InvalidArgumentError, match="Expected size\\[1\\]"):
        run(tf.slice(p, [0, 1, 0], [1, 3, 1]), feed)


Y = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)
N = None
INDEXES = [
    1, -1, (0, 2), (slice(None),), (slice(1, None),), (slice(None, -1),), (slice(None, None, -1),),
    (slice(None, None, 2), slice(None, None, -2)), (slice(-2, None, -1),), (slice(5, -10, -1),),
    (slice(10, 1, -2),), (slice(-100, 100),), (slice(3, 1),), (slice(2, 0, 1),), Ellipsis,
    (Ellipsis, 0), (0, Ellipsis, 1), (Ellipsis, slice(None, None, -1)), (N,), (N, 0), (0, N),
    (Ellipsis, N), (N, Ellipsis, N), (0, N, Ellipsis, N, -1), (slice(1, 3), N, 2, Ellipsis),
    (1, 2, 3, 4), (-2, -3, -4, -5), (slice(None), 1, slice(None, None, -3), -1),
    (N, N, slice(None, None, -1)), (Ellipsis, slice(0, 1), N), (slice(None, None, -3),),
    (slice(-1, -5, -2), Ellipsis, slice(-1, None, -4)), (), (N, 1, N, Ellipsis, 1),
]


@pytest.mark.parametrize("index", INDEXES, ids=repr)
def test_slice_helper_matches_numpy(index: Any) -> None:
    expected = Y[index]
    t = slice_helper(tf.constant(Y), index)
    assert t.shape.as_list() == list(expected.shape)
    check(t, expected)
    p, feed = unknown(Y)
    dynamic = slice_helper(p, index)
    check(dynamic, expected, feed)
    ranked, ranked_feed = unknown(Y, rank=True)
    assert slice_helper(ranked, index).shape.ndims == expected.ndim


def _random_index(rng: np.random.Generator) -> tuple:
    items: list[Any] = []
    for _ in range(rng.integers(0, 6)):
        kind = rng.choice(["int", "slice", "none", "ellipsis"], p=[0.25, 0.5, 0.15, 0.1])
        if kind == "int":
            items.append(int(rng.integers(-5, 5)))
        elif kind == "slice":
            bound = [None, *range(-7, 8)]
            items.append(slice(rng.choice(bound), rng.choice(bound),
                               rng.choice([None, 1, 2, 3, -1, -2, -3])))
        else:
            items.append(None if kind == "none" else Ellipsis)
    return tuple(items)


def test_slice_helper_random_sweep_matches_numpy() -> None:
    rng = np.random.default_rng(7)
    x = tf.constant(Y)
    p, feed = unknown(Y)
    tensors, expected = [], []
    for _ in range(300):
        index = _random_index(rng)
        try:
            want = Y[index]
        except IndexError:  # numpy rejects it; TF must too, at construction
            with pytest.raises(ValueError):
                slice_helper(x, index)
            continue
        t = slice_helper(x, index)
        assert t.shape.as_list() == list(want.shape), index
        tensors += [t, slice_helper(p, index)]
        expected += [want, want]
    for index, (got, want) in enumerate(zip(run(tensors, feed), expected)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want, err_msg=str(index))


def test_slice_helper_with_tensor_indices() -> None:
    i = tf.placeholder(tf.int32, [])
    t = slice_helper(tf.constant(Y), (slice(None), i))
    assert t.shape.as_list() == [2, 4, 5]
    check(t, Y[:, 2], {i: 2})
    j = tf.placeholder(tf.int64, [])
    t = slice_helper(tf.constant(Y), (1, slice(j, None), -1))
    assert t.shape.as_list() == [None, 5]
    check(t, Y[1, 1:, -1], {j: 1})
    m = tf.constant(np.array([[4, 3]]))
    assert slice_helper(m, (slice(None), 1)).shape.as_list() == [1]
    x43 = tf.zeros([4, 3])
    assert slice_helper(x43, (slice(None), 1)).shape.as_list() == [4]


def test_slice_helper_names_its_indices_as_tf() -> None:
    # TF's stack(): strided_slice/stack, stack_1, stack_2, constants or Packs, one each
    x = tf.placeholder(tf.float32, [4, 3])
    i = tf.placeholder(tf.int32, [])
    graph = tf.get_default_graph()
    before = len(graph.get_operations())
    x[1:], x[i], x[...]
    assert [(op.name, op.type) for op in graph.get_operations()[before:]] == [
        ("strided_slice/stack", "Const"), ("strided_slice/stack_1", "Const"),
        ("strided_slice/stack_2", "Const"), ("strided_slice", "StridedSlice"),
        ("add/y", "Const"), ("add", "AddV2"),
        ("strided_slice_1/stack", "Pack"), ("strided_slice_1/stack_1", "Pack"),
        ("strided_slice_1/stack_2", "Const"), ("strided_slice_1", "StridedSlice"),
        ("strided_slice_2/stack", "Const"), ("strided_slice_2/stack_1", "Const"),
        ("strided_slice_2/stack_2", "Const"), ("strided_slice_2", "StridedSlice")]


def test_slice_helper_boolean_mask_and_errors() -> None:
    mask = np.array([True, False])
    check(slice_helper(tf.constant(Y), tf.constant(mask)), Y[mask])
    with pytest.raises(TypeError, match="Only integers, slices"):
        slice_helper(tf.constant(Y), 1.5)
    with pytest.raises(TypeError, match="Only integers, slices"):
        slice_helper(tf.constant(Y), tf.constant([1, 2]))
    with pytest.raises(TypeError, match="Only integers, slices"):
        slice_helper(tf.constant(Y), (slice(0, 1.0),))
    with pytest.raises(ValueError, match="out of bounds"):
        slice_helper(tf.constant(Y), 2)
    with pytest.raises(ValueError, match="Multiple ellipses"):
        slice_helper(tf.constant(Y), (Ellipsis, 0, Ellipsis))
    with pytest.raises(ValueError, match="Index out of range"):
        slice_helper(tf.constant(Y), (0, 0, 0, 0, 0))
    with pytest.raises(ValueError, match="must be non-zero"):
        slice_helper(tf.constant(Y), slice(None, None, 0))
    p, feed = unknown(Y)
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        run(slice_helper(p, (0, 7)), feed)
    with pytest.raises(errors.InvalidArgumentError, match="must be non-zero"):
        run(slice_helper(p, slice(None, None, tf.placeholder_with_default(0, []))), feed)


def test_strided_slice_masks_directly() -> None:
    t = tf.strided_slice(Y, [0, 1], [0, -1], [1, 2], begin_mask=1, end_mask=1,
                         shrink_axis_mask=0)
    check(t, Y[:, 1:-1:2])
    t = tf.strided_slice(Y, [1, 0, 2], [2, 0, 3], [1, 1, 1], ellipsis_mask=2,
                         shrink_axis_mask=5)
    check(t, Y[1, ..., 2])
    t = tf.strided_slice(Y, [0, 0], [0, 0], new_axis_mask=1, ellipsis_mask=2)
    check(t, Y[None, ...])


# -- gathering and scattering ----------------------------------------------------------------

def test_gather_axes_and_batch_dims() -> None:
    idx = np.array([[2, 0], [1, 1]], np.int64)
    check(tf.gather(X, idx, axis=1), np.take(X, idx, axis=1))
    check(tf.gather(X, [3, 0], axis=-1), np.take(X, [3, 0], axis=-1))
    check(tf.gather(X, 1), X[1])
    params = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    batch_idx = np.array([[0, 2], [1, 1]])
    expected = np.stack([np.take(params[b], batch_idx[b], axis=1) for b in range(2)])
    t = tf.gather(params, batch_idx, axis=2, batch_dims=1)
    assert t.shape.as_list() == [2, 3, 2]
    check(t, expected)
    with pytest.raises(ValueError, match="range \\[-3, 3\\)"):
        tf.gather(X, [0], axis=3)
    p, feed = unknown(X)
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = 4 is not in \[0, 4\)"):
        run(tf.gather(p, [0, 4], axis=2), feed)


def test_gather_nd_and_scatter_nd() -> None:
    idx = np.array([[0, 1], [1, 2]], np.int32)
    check(tf.gather_nd(X, idx), X[idx[:, 0], idx[:, 1]])
    check(tf.gather_nd(X, [[[1]], [[0]]]), X[[[1], [0]]])
    with pytest.raises(ValueError, match="indices.shape\\[-1\\] must be <= params.rank"):
        tf.gather_nd(X, [[0, 0, 0, 0]])
    p, feed = unknown(X)
    with pytest.raises(errors.InvalidArgumentError, match="does not index into param shape"):
        run(tf.gather_nd(p, [[0, 3]]), feed)
    indices = np.array([[4], [3], [1], [7], [4]])
    updates = np.array([9, 10, 11, 12, 1], np.float64)
    t = tf.scatter_nd(indices, updates, [8])
    expected = np.zeros(8)
    np.add.at(expected, indices[:, 0], updates)  # duplicates add up, as in TF
    assert t.shape.as_list() == [8]
    check(t, expected)
    rows = tf.scatter_nd([[0], [2]], np.ones((2, 3), np.int32), tf.constant([4, 3]))
    check(rows, np.array([[1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 0]], np.int32))
    with pytest.raises(ValueError, match="The shape of updates"):
        tf.scatter_nd(indices, updates[:3], [8])
    pi, ifeed = unknown(indices)
    with pytest.raises(errors.InvalidArgumentError, match="does not index into shape"):
        run(tf.scatter_nd(pi, updates, [5]), ifeed)


@pytest.mark.parametrize("axis", [None, -1, 0, 1])
def test_one_hot(axis: int | None) -> None:
    indices = np.array([[0, 2], [-1, 1]], np.int64)
    hot = (indices[..., None] == np.arange(3)).astype(np.float32)
    expected = hot if axis in (None, -1) else np.moveaxis(hot, -1, axis)
    check(tf.one_hot(indices, 3, axis=axis), expected)


def test_one_hot_of_uint8_indices_and_string_values() -> None:
    # one_hot_op_test.testIndicesTypes: as uint8, -1 is 255, outside the depth like -1.
    indices = tf.constant([[0, 2, -1, 1], [1, 0, 1, -1]], dtype=tf.uint8)
    t = tf.one_hot(indices, 3, on_value=np.float32(1), off_value=np.float32(-1), axis=1)
    expected = np.where(np.arange(3)[None, :, None] == np.array(
        [[0, 2, 255, 1], [1, 0, 1, 255]])[:, None, :], 1, -1).astype(np.float32)
    check(t, expected)
    large = tf.constant(np.random.default_rng(0).random(256) * 10, tf.uint8, shape=[256])
    assert run(tf.one_hot(large, depth=10, axis=0)).shape == (10, 256)
    words = tf.one_hot([0, 1, 2], 3, on_value=tf.constant(b"1.0"), off_value=b"0.0",
                       dtype=tf.string)
    np.testing.assert_array_equal(run(words), np.where(np.eye(3, dtype=bool), b"1.0", b"0.0"))


def test_one_hot_values_and_dtypes() -> None:
    check(tf.one_hot([1, 0], 2, on_value=5, off_value=-1),
          np.array([[-1, 5], [5, -1]], np.int32))
    check(tf.one_hot([1], 2, dtype=tf.bool), np.array([[False, True]]))
    check(tf.one_hot([1], 2, on_value=3.0, dtype=tf.float32),
          np.array([[0, 3]], np.float32))
    with pytest.raises(TypeError, match="does not match"):
        tf.one_hot([1], 2, on_value=1.0, off_value=0)
    with pytest.raises(TypeError, match="does not match"):
        tf.one_hot([1], 2, on_value=1.0, dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.one_hot([1.0], 2)
    with pytest.raises(ValueError, match="Expected axis to be -1"):
        tf.one_hot([1], 2, axis=3)


def test_unsorted_segments() -> None:
    data = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.float32)
    ids = np.array([0, 2, 0, -1])
    t = tf.unsorted_segment_sum(data, ids, 3)
    assert t.shape.as_list() == [3, 2]
    check(t, np.array([[6, 8], [0, 0], [3, 4]], np.float32))
    lowest = np.finfo(np.float32).min
    check(tf.unsorted_segment_max(data, ids, 3),
          np.array([[5, 6], [lowest, lowest], [3, 4]], np.float32))
    ints = tf.unsorted_segment_max(np.array([3, 9], np.int16), [1, 1], 2)
    check(ints, np.array([np.iinfo(np.int16).min, 9], np.int16))
    with pytest.raises(ValueError, match="does not start with"):
        tf.unsorted_segment_sum(data, [0, 1], 2)
    p, feed = unknown(ids)
    with pytest.raises(errors.InvalidArgumentError, match="out of range \\[0, 2\\)"):
        run(tf.unsorted_segment_sum(data, p, 2), feed)


# -- selection -------------------------------------------------------------------------------

def test_where_one_argument_gives_int64_coordinates() -> None:
    cond = np.array([[True, False, True], [False, False, True]])
    t = tf.where(cond)
    assert t.shape.as_list() == [None, 2]
    check(t, np.argwhere(cond).astype(np.int64))
    check(tf.where(np.array([0, 3, 0, 1], np.int32)), np.array([[1], [3]], np.int64))


def test_where_select_semantics() -> None:
    x, y = X, -X
    cond = X > 10
    check(tf.where(cond, x, y), np.where(cond, x, y))
    rows = np.array([True, False])
    t = tf.where(rows, x, y)
    assert t.shape.as_list() == [2, 3, 4]
    check(t, np.where(rows[:, None, None], x, y))
    check(tf.where(False, x[0], y[0]), y[0])
    with pytest.raises(ValueError):
        tf.where(np.array([True, False, True]), x, y)
    with pytest.raises(ValueError, match="both be non-None"):
        tf.where(cond, x)
    pc, feed = unknown(np.array([True, False, True]))
    with pytest.raises(errors.InvalidArgumentError):
        run(tf.where(pc, x, y), feed)


def test_where_v2_broadcasts() -> None:
    cond = np.array([True, False, False, True])
    check(tf.where_v2(cond, X, 0.0), np.where(cond, X, np.float32(0)))
    check(tf.where_v2(np.array([[True], [False]]), 1, np.zeros((2, 3), np.int32)),
          np.where([[True], [False]], 1, np.zeros((2, 3), np.int32)))
    check(tf.where_v2([False, True]), np.array([[1]], np.int64))
    with pytest.raises(ValueError):
        tf.where_v2(np.array([True, False]), X, 0.0)


# -- creation --------------------------------------------------------------------------------

def test_fill_zeros_ones() -> None:
    check(tf.fill([2, 3], 7), np.full((2, 3), 7, np.int32))
    check(tf.zeros([2, 3]), np.zeros((2, 3), np.float32))
    check(tf.zeros((2,), tf.int64), np.zeros(2, np.int64))
    check(tf.ones(tf.constant([3, 1]), tf.bool), np.ones((3, 1), bool))
    check(tf.ones(tf.TensorShape([40, 40]), tf.float64), np.ones((40, 40)))
    big = tf.zeros([40, 40])
    assert big.op.type == "Fill" and big.shape.as_list() == [40, 40]
    n = tf.placeholder(tf.int32, [])
    dynamic = tf.ones([n, 2], tf.int32)
    assert dynamic.shape.as_list() == [None, 2]
    check(dynamic, np.ones((3, 2), np.int32), {n: 3})
    with pytest.raises(ValueError):
        tf.fill([2, 3], [1, 2])
    with pytest.raises(ValueError, match="Fill dimensions must be >= 0"):
        tf.fill([-1], 1)
    pd, feed = unknown(np.array([2, -3], np.int32))
    with pytest.raises(errors.InvalidArgumentError, match="Fill dimensions"):
        run(tf.fill(pd, 1.0), feed)


def test_zeros_like_ones_like() -> None:
    ints = np.arange(6, dtype=np.int16).reshape(2, 3)
    check(tf.zeros_like(ints), np.zeros_like(ints))
    check(tf.ones_like(ints, dtype=tf.float32), np.ones((2, 3), np.float32))
    p, feed = unknown(ints)
    z, o = tf.zeros_like(p), tf.ones_like(p)
    # TF: zeros_like is a ZerosLike op, ones_like a Fill of the Shape (ones_like_impl)
    assert z.op.type == "ZerosLike" and o.op.type == "Fill"
    assert o.op.inputs[0].op.type == "Shape"
    check(z, np.zeros_like(ints), feed)
    check(o, np.ones_like(ints), feed)
    check(tf.ones_like(p, dtype=tf.bool), np.ones((2, 3), bool), feed)
    check(tf.zeros_like(p, dtype=tf.float64), np.zeros((2, 3)), feed)


@pytest.mark.parametrize("args, kwargs, expected", [
    ((5,), {}, np.arange(5, dtype=np.int32)),
    ((2, 11, 3), {}, np.arange(2, 11, 3, dtype=np.int32)),
    ((10, 2, -3), {}, np.arange(10, 2, -3, dtype=np.int32)),
    ((1, 2.0, 0.25), {}, np.arange(1, 2, 0.25, dtype=np.float32)),
    ((3,), {"dtype": tf.float64}, np.arange(3, dtype=np.float64)),
    ((0, 3), {"dtype": tf.int64}, np.arange(3, dtype=np.int64)),
    ((4, 4), {}, np.arange(4, 4, dtype=np.int32)),
])
def test_range(args: tuple, kwargs: dict, expected: np.ndarray) -> None:
    t = tf.range(*args, **kwargs)
    assert t.shape.as_list() == [len(expected)]
    check(t, expected)


def test_range_errors_and_tensor_limits() -> None:
    with pytest.raises(ValueError, match="Requires delta != 0"):
        tf.range(0, 5, 0)
    with pytest.raises(ValueError, match="Requires start <= limit"):
        tf.range(5, 2)
    limit = tf.placeholder(tf.int64, [])
    t = tf.range(limit)
    assert t.dtype == tf.int64 and t.shape.as_list() == [None]
    check(t, np.arange(4, dtype=np.int64), {limit: 4})
    with pytest.raises(errors.InvalidArgumentError, match="Requires start >= limit"):
        run(tf.range(0, limit, -1), {limit: 4})


def test_linspace() -> None:
    t = tf.linspace(0.0, 1.0, 5)
    assert t.shape.as_list() == [5]
    check(t, np.linspace(0, 1, 5, dtype=np.float32))
    check(tf.lin_space(np.float64(2), np.float64(3), 1), np.array([2.0]))
    with pytest.raises(ValueError, match="Requires num > 0"):
        tf.linspace(0.0, 1.0, 0)
    with pytest.raises(TypeError):
        tf.linspace(0, 1, 3)


def test_shape_size_rank() -> None:
    check(tf.shape(X), np.array([2, 3, 4], np.int32))
    check(tf.size(X, out_type=tf.int64), np.array(24, np.int64))
    check(tf.rank(X), np.array(3, np.int32))
    p, feed = unknown(X)
    s = tf.shape(p, out_type=tf.int64)
    assert s.op.type == "Shape" and s.shape.as_list() == [None]
    check(s, np.array([2, 3, 4], np.int64), feed)
    check(tf.size(p), np.array(24, np.int32), feed)
    check(tf.rank(p), np.array(3, np.int32), feed)
    ranked, ranked_feed = unknown(X, rank=True)
    assert tf.shape(ranked).shape.as_list() == [3]
    with pytest.raises(TypeError):
        tf.raw_ops.Shape(input=p, out_type=tf.float32)


def test_sequence_mask() -> None:
    lengths = np.array([1, 3, 0])
    t = tf.sequence_mask(lengths, 4)
    assert t.shape.as_list() == [3, 4]
    check(t, np.arange(4) < lengths[:, None])
    check(tf.sequence_mask(lengths, dtype=tf.float32),
          (np.arange(3) < lengths[:, None]).astype(np.float32))
    with pytest.raises(ValueError, match="maxlen must be scalar"):
        tf.sequence_mask(lengths, [4])


def test_partial_shapes_from_mixed_lists() -> None:
    n = tf.placeholder(tf.int32, [])
    x = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.reshape(x, [n, 3, -1]).shape.as_list() == [None, 3, None]
    assert tf.reshape(x, [n, tf.constant(12)]).shape.as_list() == [None, 12]
    assert tf.fill([n, 2], 1.0).shape.as_list() == [None, 2]
    assert tf.broadcast_to(1, [2, n]).shape.as_list() == [2, None]
    check(tf.broadcast_to(np.int16(1), [2, n]), np.ones((2, 3), np.int16), {n: 3})


def test_boolean_mask() -> None:
    mask = np.array([[True, False, True], [False, False, True]])
    t = tf.boolean_mask(X, mask)
    assert t.shape.as_list() == [None, 4]
    check(t, X[mask])
    row_mask = np.array([True, False, True, True])
    check(tf.boolean_mask(X, row_mask, axis=2), X[:, :, row_mask])
    p, feed = unknown(X, rank=True)
    check(tf.boolean_mask(p, mask), X[mask], feed)
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tf.boolean_mask(X, True)
    with pytest.raises(ValueError):
        tf.boolean_mask(X, np.array([True, False, True]))


def test_unique_invert_permutation_meshgrid() -> None:
    x = np.array([4, 1, 4, 2, 1, 7], np.int64)
    y, idx = tf.unique(x)
    got_y, got_idx = run([y, idx])
    np.testing.assert_array_equal(got_y, [4, 1, 2, 7])
    np.testing.assert_array_equal(got_idx, [0, 1, 0, 2, 1, 3])
    assert got_y.dtype == np.int64 and got_idx.dtype == np.int32
    assert tf.unique(x, out_idx=tf.int64).idx.dtype == tf.int64
    perm = np.array([2, 0, 3, 1], np.int32)
    check(tf.invert_permutation(perm), np.argsort(perm).astype(np.int32))
    p, feed = unknown(np.array([0, 0, 1], np.int32))
    with pytest.raises(errors.InvalidArgumentError, match="duplicated"):
        run(tf.invert_permutation(p), feed)
    a, b = np.arange(3, dtype=np.int32), np.arange(4, 6, dtype=np.int32)
    for got, want in zip(tf.meshgrid(a, b), np.meshgrid(a, b)):
        check(got, want)
    for got, want in zip(tf.meshgrid(a, b, a, indexing="ij"),
                         np.meshgrid(a, b, a, indexing="ij")):
        check(got, want)


# -- raw ops and dtypes ----------------------------------------------------------------------

def test_raw_ops_access() -> None:
    check(tf.raw_ops.ConcatV2(values=[X, X], axis=0), np.concatenate([X, X]))
    check(tf.raw_ops.Fill(dims=[2], value=np.int8(3)), np.full(2, 3, np.int8))
    check(tf.raw_ops.ZerosLike(x=X), np.zeros_like(X))
    check(tf.raw_ops.Select(condition=[True, False], t=[1, 2], e=[3, 4]),
          np.array([1, 4], np.int32))
    y, idx = tf.raw_ops.Unique(x=[5, 5, 6])
    np.testing.assert_array_equal(run(idx), [0, 0, 1])
    check(tf.raw_ops.StridedSlice(input=Y, begin=[1], end=[0], strides=[-1], end_mask=1),
          Y[1::-1])
    parts = tf.raw_ops.Split(split_dim=0, value=X, num_split=2)
    assert len(parts) == 2
    with pytest.raises(ValueError, match="at least 2 values"):
        tf.raw_ops.ConcatV2(values=[X], axis=0)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int8, np.uint8, np.int64, bool])
def test_dtypes_are_preserved(dtype: type) -> None:
    x = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    check(tf.reshape(x, [-1]), x.reshape(-1))
    check(tf.transpose(x), x.T)
    check(tf.concat([x, x], 1), np.concatenate([x, x], 1))
    check(tf.gather(x, [2, 0]), x[[2, 0]])
    check(tf.pad(x, [[1, 0], [0, 1]]), np.pad(x, [[1, 0], [0, 1]]))
    check(tf.tile(x, [2, 1]), np.tile(x, [2, 1]))
    check(slice_helper(tf.constant(x), (slice(None, None, -1), 1)), x[::-1, 1])
    check(tf.stack([tf.constant(x), x]), np.stack([x, x]))


def test_kernels_do_not_write_into_inputs() -> None:
    value = X.copy()
    value.flags.writeable = False
    p = tf.placeholder(tf.float32, [2, 3, 4])
    fetches = [tf.pad(p, [[1, 1], [0, 0], [0, 0]]), tf.reverse(p, [0]), tf.transpose(p),
               tf.scatter_nd([[0]], slice_helper(p, slice(0, 1)), [2, 3, 4]),
               tf.unsorted_segment_sum(p, [1, 0], 2)]
    run(fetches, {p: value})
    np.testing.assert_array_equal(value, X)


def test_zeros_of_strings_are_empty_strings() -> None:
    n = tf.placeholder(tf.int32, [1])
    with tf.Session() as sess:
        static, dynamic = sess.run([tf.zeros([2, 1], tf.string), tf.zeros(n, tf.string)],
                                   {n: [3]})
    assert static.tolist() == [[b""], [b""]] and dynamic.tolist() == [b""] * 3


def test_reshape_to_a_shape_tensor_keeps_its_static_dims() -> None:
    x = tf.placeholder(tf.float32, [None, None, 3])
    flat = tf.reshape(x, [-1, 3])
    assert tf.reshape(flat, tf.shape(x)).shape.as_list() == [None, None, 3]
    packed = tf.stack([tf.shape(x)[0], -1, 3])
    assert tf.reshape(flat, packed).shape.as_list() == [None, None, 3]
    joined = tf.concat([tf.shape(x)[:2], [3]], 0)
    assert tf.reshape(flat, joined).shape.as_list() == [None, None, 3]
    assert tf.fill(tf.shape(x), 1.0).shape.as_list() == [None, None, 3]
    value = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    with tf.Session() as sess:
        out = sess.run(tf.reshape(flat, tf.shape(x)), {x: value})
    np.testing.assert_array_equal(out, value)


def test_lin_space_and_bias_add_grad_refuse_what_numpy_would_broadcast() -> None:
    start = tf.placeholder(tf.float32)
    dy = tf.placeholder(tf.float32)
    space = tf.raw_ops.LinSpace(start=start, stop=tf.constant(1.0), num=3)
    grad = tf.raw_ops.BiasAddGrad(out_backprop=dy)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"start must be a scalar, not shape \[3\]") as info:
            sess.run(space, {start: np.zeros(3, np.float32)})  # numpy: one range per element
        assert info.value.node_def.name == space.op.name
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Input tensor must be at least 2D: \[3\]"):
            sess.run(grad, {dy: np.ones(3, np.float32)})
        np.testing.assert_allclose(sess.run(space, {start: 0.0}), [0.0, 0.5, 1.0])
