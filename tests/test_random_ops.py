"""Random ops: shapes and dtypes, TF's seed rule, reproducibility and distribution sanity."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors


def run(fetches, feed_dict=None, graph=None):
    with tw.Session(graph=graph) as sess:
        return sess.run(fetches, feed_dict)


def random_op(t: tw.Tensor) -> tw.Operation:
    """The random op feeding the composite `t` (``rnd * scale + shift``)."""
    op = t.op
    while not op.type.startswith(("Random", "Truncated")):
        op = op.inputs[0].op
    return op


@pytest.mark.parametrize("fn", [tw.random_normal, tw.truncated_normal, tw.random_uniform])
@pytest.mark.parametrize("dtype", [tw.float16, tw.float32, tw.float64])
def test_float_shape_and_dtype(fn, dtype):
    t = fn([3, 4], dtype=dtype)
    assert t.dtype == dtype and t.shape == tw.TensorShape([3, 4])
    value = run(t)
    assert value.dtype == dtype.np_type and value.shape == (3, 4)


@pytest.mark.parametrize("dtype", [tw.int32, tw.int64])
def test_uniform_int_shape_dtype_and_range(dtype):
    t = tw.random_uniform([20000], minval=-3, maxval=4, dtype=dtype)
    assert t.op.type == "RandomUniformInt" and t.dtype == dtype
    value = run(t)
    assert value.dtype == dtype.np_type
    assert set(np.unique(value).tolist()) == set(range(-3, 4))


def test_shape_from_tensor_and_unknown_shape():
    dims = tw.placeholder(tw.int32, [2])
    t = tw.random_normal(dims)
    assert t.shape == tw.TensorShape([None, None])
    assert run(t, {dims: [2, 5]}).shape == (2, 5)
    assert tw.random_uniform(tw.constant([4, 1], dtype=tw.int64)).shape == tw.TensorShape([4, 1])
    assert run(tw.random_normal([])).shape == ()


def test_op_seed_reproducible_across_sessions_and_advances_within_one():
    t = tw.random_normal([5], seed=7)
    with tw.Session() as sess:
        first, second = sess.run(t), sess.run(t)
    with tw.Session() as sess:
        again = sess.run(t)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, again)
    op = random_op(t)
    assert (op.get_attr("seed"), op.get_attr("seed2")) == (87654321, 7)


def build(graph_seed, op_seed=None):
    g = tw.Graph()
    with g.as_default():
        tw.set_random_seed(graph_seed)
        a = tw.random_uniform([6], seed=op_seed)
        b = tw.random_normal([6], seed=op_seed)
    return g, a, b


def test_graph_seed_reproduces_in_a_rebuilt_graph():
    g1, a1, b1 = build(42)
    g2, a2, b2 = build(42)
    v1, v2 = run([a1, b1], graph=g1), run([a2, b2], graph=g2)
    np.testing.assert_array_equal(v1[0], v2[0])
    np.testing.assert_array_equal(v1[1], v2[1])
    g3, a3, _ = build(43)
    assert not np.array_equal(v1[0], run(a3, graph=g3))


def test_graph_seed_alone_gives_each_op_its_last_id():
    g = tw.Graph()
    with g.as_default():
        tw.random.set_seed(5)
        a = tw.random_normal([4])
        last_id = g._last_id
        b = tw.random_normal([4])
    op = random_op(b)
    # TF takes the id after b's shape, mean and stddev constants are created.
    assert (op.get_attr("seed"), op.get_attr("seed2")) == (5, last_id + 3)
    assert random_op(a).get_attr("seed2") != op.get_attr("seed2")
    va, vb = run([a, b], graph=g)
    assert not np.array_equal(va, vb)


def test_graph_and_op_seed_pair_and_different_op_seeds_differ():
    tw.set_random_seed(3)
    a, b = tw.random_normal([8], seed=1), tw.random_normal([8], seed=2)
    assert (random_op(a).get_attr("seed"), random_op(a).get_attr("seed2")) == (3, 1)
    va, vb = run([a, b])
    assert not np.array_equal(va, vb)


def test_get_seed_rule():
    assert tw.get_seed(None) == (None, None)
    assert tw.get_seed(9) == (87654321, 9)
    tw.set_random_seed(0)
    assert tw.get_seed(0) == (0, 2**31 - 1)  # (0, 0) would mean "seed at random"


def test_unseeded_ops_are_nondeterministic():
    t = tw.random_uniform([16])
    op = random_op(t)
    assert (op.get_attr("seed"), op.get_attr("seed2")) == (0, 0)
    assert op.op_def.stateful
    assert not np.array_equal(run(t), run(t))


def test_identical_random_ops_are_not_merged():
    a, b = tw.random_uniform([16]), tw.random_uniform([16])
    va, vb = run([a, b])
    assert not np.array_equal(va, vb)


def test_normal_and_uniform_distributions():
    n = 100_000
    normal = tw.random_normal([n], mean=2.0, stddev=3.0, seed=1)
    uniform = tw.random_uniform([n], minval=-1.0, maxval=3.0, seed=1)
    vn, vu = run([normal, uniform])
    assert abs(vn.mean() - 2.0) < 0.05 and abs(vn.std() - 3.0) < 0.05
    assert vu.min() >= -1.0 and vu.max() < 3.0
    assert abs(vu.mean() - 1.0) < 0.02 and abs(vu.std() - 4 / np.sqrt(12)) < 0.02


def test_truncated_normal_stays_within_two_stddev():
    n = 100_000
    value = run(tw.truncated_normal([n], mean=1.0, stddev=2.0, seed=3))
    assert np.abs(value - 1.0).max() <= 4.0
    # The standard normal truncated to [-2, 2] has standard deviation 0.8796.
    assert abs(value.mean() - 1.0) < 0.03 and abs(value.std() - 2 * 0.8796) < 0.03


def test_half_uniform_stays_below_one():
    value = run(tw.random_uniform([50_000], dtype=tw.float16, seed=2))
    assert value.dtype == np.float16 and value.min() >= 0 and value.max() < 1


def test_random_shuffle_permutes_rows_reproducibly():
    data = np.arange(40, dtype=np.int64).reshape(20, 2)
    t = tw.random_shuffle(data, seed=4)
    first, again = run(t), run(t)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, data)
    np.testing.assert_array_equal(np.sort(first[:, 0]), data[:, 0])
    np.testing.assert_array_equal(first[:, 1], first[:, 0] + 1)  # rows move whole


def test_random_aliases():
    assert tw.random.normal is tw.random_normal
    assert tw.random.uniform is tw.random_uniform
    assert tw.random.truncated_normal is tw.truncated_normal
    assert tw.random.shuffle is tw.random_shuffle
    assert tw.random.set_seed is tw.set_random_seed
    assert run(tw.raw_ops.RandomStandardNormal(shape=[2], dtype=tw.float64)).dtype == np.float64


def test_construction_errors():
    with pytest.raises(ValueError, match="Must specify maxval"):
        tw.random_uniform([2], dtype=tw.int32)
    with pytest.raises(ValueError, match="Invalid dtype"):
        tw.random_uniform([2], dtype=tw.uint8)
    with pytest.raises(TypeError):
        tw.random_normal([2], dtype=tw.int32)
    with pytest.raises(ValueError, match="must be >= 0"):
        tw.random_normal([2, -3])
    with pytest.raises(ValueError, match="rank 1"):
        tw.raw_ops.RandomUniform(shape=[[2]], dtype=tw.float32)
    with pytest.raises(TypeError):
        tw.raw_ops.RandomUniform(shape=[2.0], dtype=tw.float32)


def test_runtime_errors():
    lo = tw.placeholder(tw.int32, [])
    t = tw.random_uniform([3], minval=lo, maxval=2, dtype=tw.int32)
    with pytest.raises(errors.InvalidArgumentError, match="Need minval < maxval"):
        run(t, {lo: 5})
    dims = tw.placeholder(tw.int32, [2])
    with pytest.raises(errors.InvalidArgumentError, match="must be >= 0"):
        run(tw.random_normal(dims), {dims: [2, -1]})


def test_seeded_sequence_continues_across_step_signatures():
    r = tw.random_normal([3], seed=7)
    with tw.Session() as sess:
        first = sess.run(r)
        second, _ = sess.run([r, r + 1.0])  # a new signature keeps the op's generator
        tw.constant(0.0)  # a graph change drops cached steps, not kernel state
        third = sess.run(r)
    with tw.Session() as sess:
        replay = [sess.run(r) for _ in range(3)]
    np.testing.assert_array_equal(np.stack([first, second, third]), np.stack(replay))
