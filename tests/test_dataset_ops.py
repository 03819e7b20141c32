"""tw.data.Dataset: every transformation against a numpy reference, static types and shapes,
construction errors."""

from __future__ import annotations

import collections
import time

import numpy as np
import pytest

import tensorweave as tf
from tests.datasets import elements, fresh_graph  # noqa: F401 - the fixture


def test_from_tensor_slices_tuple_and_dict():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = np.array([1, 2, 3, 4], dtype=np.int32)
    ds = tf.data.Dataset.from_tensor_slices((x, {"b": y, "a": [[1.0], [2.0], [3.0], [4.0]]}))
    assert ds.output_types == (tf.float32, {"b": tf.int32, "a": tf.float32})
    assert ds.output_shapes == (tf.TensorShape([3]), {"b": tf.TensorShape([]),
                                                      "a": tf.TensorShape([1])})
    assert tf.data.get_output_classes(ds) == (tf.Tensor, {"b": tf.Tensor, "a": tf.Tensor})
    got = elements(ds)
    assert len(got) == 4
    for i, (gx, gd) in enumerate(got):
        np.testing.assert_array_equal(gx, x[i])
        assert gx.dtype == np.float32 and gd["b"].dtype == np.int32
        assert gd["b"] == y[i] and gd["a"][0] == i + 1


def test_from_tensor_slices_errors():
    with pytest.raises(ValueError, match="not compatible"):
        tf.data.Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError, match="rank >= 1"):
        tf.data.Dataset.from_tensor_slices(5.0)


def test_from_tensors_and_range():
    ds = tf.data.Dataset.from_tensors(np.arange(6).reshape(2, 3))
    assert ds.output_shapes == tf.TensorShape([2, 3])
    (only,) = elements(ds)
    np.testing.assert_array_equal(only, np.arange(6).reshape(2, 3))
    for args in [(5,), (2, 9), (10, 1, -3), (3, 3)]:
        ds = tf.data.Dataset.range(*args)
        assert ds.output_types == tf.int64 and ds.output_shapes == tf.TensorShape([])
        got = elements(ds)
        assert got == list(range(*args))
        assert all(v.dtype == np.int64 for v in got)


def test_zip_and_concatenate():
    a = tf.data.Dataset.range(5)
    b = tf.data.Dataset.from_tensor_slices(np.arange(3, dtype=np.float32) * 10)
    zipped = tf.data.Dataset.zip((a, b))
    assert zipped.output_types == (tf.int64, tf.float32)
    assert [(int(x), float(y)) for x, y in elements(zipped)] == [(0, 0.0), (1, 10.0), (2, 20.0)]
    cat = a.concatenate(tf.data.Dataset.range(10, 12))
    assert elements(cat) == [0, 1, 2, 3, 4, 10, 11]
    with pytest.raises(TypeError, match="different types"):
        a.concatenate(b)
    wide = tf.data.Dataset.from_tensors(np.zeros([2, 3])).concatenate(
        tf.data.Dataset.from_tensors(np.zeros([4, 3])))
    assert wide.output_shapes.as_list() == [None, 3]


def test_map_tuple_unpacking_and_structure():
    x = np.arange(6, dtype=np.float32)
    ds = tf.data.Dataset.from_tensor_slices((x, x.astype(np.int32)))
    mapped = ds.map(lambda a, b: {"sum": a + tf.cast(b, tf.float32), "sq": [a * a, b]})
    assert mapped.output_types == {"sum": tf.float32, "sq": (tf.float32, tf.int32)}
    got = elements(mapped)
    np.testing.assert_allclose([g["sum"] for g in got], 2 * x)
    np.testing.assert_allclose([g["sq"][0] for g in got], x * x)
    single = tf.data.Dataset.from_tensor_slices(x).map(lambda v: tf.reshape(v, [1]) * 3)
    assert single.output_shapes == tf.TensorShape([1])
    np.testing.assert_allclose(np.concatenate(elements(single)), 3 * x)


def test_map_namedtuple_is_one_argument():
    Point = collections.namedtuple("Point", "x y")
    ds = tf.data.Dataset.from_tensor_slices(Point(np.arange(3.0), np.ones(3)))
    got = elements(ds.map(lambda p: p.x + p.y))
    assert [float(v) for v in got] == [1.0, 2.0, 3.0]


def test_map_captures_outer_tensor_and_placeholder():
    scale = tf.placeholder(tf.float32, [])
    offset = tf.constant(100.0)
    ds = tf.data.Dataset.from_tensor_slices(np.arange(4, dtype=np.float32))
    got = elements(ds.map(lambda v: v * scale + offset), {scale: 2.0})
    assert [float(v) for v in got] == [100.0, 102.0, 104.0, 106.0]


def test_filter_matches_numpy():
    x = np.random.RandomState(0).randint(0, 100, size=50).astype(np.int64)
    ds = tf.data.Dataset.from_tensor_slices(x).filter(lambda v: tf.equal(v % 3, 0))
    assert elements(ds) == [v for v in x if v % 3 == 0]
    with pytest.raises(ValueError, match="scalar boolean"):
        tf.data.Dataset.range(3).filter(lambda v: v * 2)


@pytest.mark.parametrize("n,size,drop", [(10, 3, False), (10, 3, True), (9, 3, False),
                                         (2, 5, False), (2, 5, True)])
def test_batch_matches_numpy(n, size, drop):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    ds = tf.data.Dataset.from_tensor_slices(x).batch(size, drop_remainder=drop)
    assert ds.output_shapes.as_list() == [size if drop else None, 2]
    got = elements(ds)
    stop = n - n % size if drop else n
    want = [x[i:min(i + size, stop)] for i in range(0, stop, size)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == np.float32


def test_batch_of_ragged_elements_fails_at_run_time():
    ds = tf.data.Dataset.range(1, 4).map(lambda n: tf.range(n)).batch(2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors"):
        elements(ds)


def test_padded_batch():
    ds = tf.data.Dataset.range(1, 6).map(lambda n: (tf.range(n), n))
    padded = ds.padded_batch(2, padded_shapes=([None], []), padding_values=(-1, 0))
    assert padded.output_shapes == (tf.TensorShape([None, None]), tf.TensorShape([None]))
    got = elements(padded)
    assert [g[0].shape for g in got] == [(2, 2), (2, 4), (1, 5)]
    np.testing.assert_array_equal(got[1][0], [[0, 1, 2, -1], [0, 1, 2, 3]])
    np.testing.assert_array_equal(got[1][1], [3, 4])
    fixed = tf.data.Dataset.range(1, 4).map(tf.range).padded_batch(3, [6])
    assert fixed.output_shapes.as_list() == [None, 6]
    np.testing.assert_array_equal(elements(fixed)[0], [[0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0],
                                                       [0, 1, 2, 0, 0, 0]])
    with pytest.raises(ValueError, match="not compatible"):
        tf.data.Dataset.range(3).padded_batch(2, [None])
    too_small = tf.data.Dataset.range(1, 4).map(tf.range).padded_batch(3, [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="smaller size"):
        elements(too_small)


def test_repeat_take_skip_counts():
    base = tf.data.Dataset.range(4)
    assert elements(base.repeat(3)) == list(range(4)) * 3
    assert elements(base.repeat(0)) == []
    assert elements(base.repeat().take(10)) == (list(range(4)) * 3)[:10]
    assert elements(base.take(2)) == [0, 1]
    assert elements(base.take(-1)) == [0, 1, 2, 3]
    assert elements(base.take(0)) == []
    assert elements(base.skip(1)) == [1, 2, 3]
    assert elements(base.skip(10)) == []
    assert elements(base.skip(-1)) == []
    assert elements(base.skip(1).take(2).repeat(2)) == [1, 2, 1, 2]
    assert elements(base.filter(lambda v: tf.less(v, 0)).repeat()) == []  # no endless loop


def test_shuffle_permutes_and_is_deterministic_with_a_seed():
    x = np.arange(100)
    ds = tf.data.Dataset.from_tensor_slices(x).shuffle(100, seed=7)
    first, second = elements(ds), elements(ds)
    assert sorted(first) == list(x)
    assert first != list(x)
    assert first == second  # same seed, same order after a restart
    other = elements(tf.data.Dataset.from_tensor_slices(x).shuffle(100, seed=8))
    assert other != first


def test_shuffle_reshuffles_each_repeat_unless_told_not_to():
    ds = tf.data.Dataset.range(20)
    epochs = elements(ds.shuffle(20, seed=1).repeat(2))
    assert sorted(epochs[:20]) == sorted(epochs[20:]) == list(range(20))
    assert epochs[:20] != epochs[20:]
    same = elements(ds.shuffle(20, seed=1, reshuffle_each_iteration=False).repeat(2))
    assert same[:20] == same[20:]


def test_shuffle_small_buffer_keeps_elements_near_their_place():
    got = elements(tf.data.Dataset.range(50).shuffle(2, seed=3))
    assert sorted(got) == list(range(50))
    # with a buffer of 2, element i is emitted at position >= i - 1
    assert all(pos >= v - 1 for pos, v in enumerate(got))


def test_shuffle_seeded_by_the_graph_seed():
    def order() -> list:
        with tf.Graph().as_default() as g:
            g.seed = 42
            return elements(tf.data.Dataset.range(30).shuffle(30))

    assert order() == order()


def test_prefetch_and_cache_pass_elements_through():
    ds = tf.data.Dataset.range(5).map(lambda v: v * 2)
    assert elements(ds.prefetch(2)) == [0, 2, 4, 6, 8]
    assert elements(ds.prefetch(tf.data.experimental.AUTOTUNE)) == [0, 2, 4, 6, 8]
    shuffled = tf.data.Dataset.range(10).shuffle(10, seed=5).cache().repeat(2)
    got = elements(shuffled)
    assert got[:10] == got[10:]  # the cache replays the first pass
    with pytest.raises(ValueError, match="in memory"):
        ds.cache("/tmp/somewhere")


def test_flat_map():
    ds = tf.data.Dataset.range(1, 4).flat_map(
        lambda n: tf.data.Dataset.from_tensor_slices(tf.range(n)).map(lambda v: v * 10))
    assert ds.output_types == tf.int64
    assert elements(ds) == [0, 0, 10, 0, 10, 20]
    with pytest.raises(TypeError, match="Dataset"):
        tf.data.Dataset.range(3).flat_map(lambda v: v)


def test_batch_size_from_a_placeholder():
    size = tf.placeholder(tf.int64, [])
    ds = tf.data.Dataset.range(7).batch(size)
    assert ds.output_shapes.as_list() == [None]
    got = elements(ds, {size: 3})
    assert [list(g) for g in got] == [[0, 1, 2], [3, 4, 5], [6]]


def test_repr_names_the_transformation():
    ds = tf.data.Dataset.range(3).batch(2)
    assert repr(ds).startswith("<BatchDataset shapes: ")
    assert repr(ds).endswith("types: tf.int64>")


def test_slices_of_a_string_vector_are_string_scalars():
    ds = tf.data.Dataset.from_tensor_slices(tf.constant([b"a", b"bc"]))
    assert elements(ds) == [b"a", b"bc"]


@pytest.mark.parametrize("parallel", [2, 3, tf.data.experimental.AUTOTUNE])
def test_parallel_map_keeps_the_order(parallel):
    ds = tf.data.Dataset.range(7).map(lambda v: v * v, num_parallel_calls=parallel)
    assert elements(ds) == [v * v for v in range(7)]


def test_parallel_map_runs_its_calls_at_once():
    def slow(v):
        time.sleep(0.2)
        return v

    ds = tf.data.Dataset.range(4).map(lambda v: tf.py_func(slow, [v], tf.int64),
                                      num_parallel_calls=4)
    start = time.perf_counter()
    assert elements(ds) == [0, 1, 2, 3]
    assert time.perf_counter() - start < 0.6  # one after another: 0.8 s


def test_parallel_map_raises_an_error_at_its_element():
    ds = tf.data.Dataset.from_tensor_slices(np.array([1.0, 2.0, 4.0, 0.0, 8.0], np.float32))
    ds = ds.map(lambda v: tf.check_numerics(1.0 / v, "inverse"), num_parallel_calls=3)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert [float(s.run(nxt)) for _ in range(3)] == [1.0, 0.5, 0.25]
        with pytest.raises(tf.errors.InvalidArgumentError, match="inverse"):
            s.run(nxt)
    with pytest.raises(tf.errors.InvalidArgumentError, match="greater than zero"):
        elements(tf.data.Dataset.range(3).map(lambda v: v, num_parallel_calls=0))


@pytest.mark.parametrize("cycle,block", [(2, 1), (3, 2), (4, 3)])
def test_parallel_interleave_keeps_the_sequential_order(cycle, block):
    def inner(v):  # datasets of uneven lengths, so slots end and refill at different times
        return tf.data.Dataset.range(v % 4 + 1).map(lambda x: v * 10 + x)

    source = tf.data.Dataset.range(7)
    sequential = elements(source.interleave(inner, cycle, block))
    parallel = elements(source.interleave(inner, cycle, block, num_parallel_calls=cycle))
    assert parallel == sequential and len(sequential) == sum(v % 4 + 1 for v in range(7))


def test_parallel_interleave_reads_its_slots_at_once():
    def slow(v):
        time.sleep(0.2)
        return v

    ds = tf.data.Dataset.range(4).interleave(
        lambda v: tf.data.Dataset.from_tensors(v).map(lambda x: tf.py_func(slow, [x], tf.int64)),
        cycle_length=4, num_parallel_calls=4)
    start = time.perf_counter()
    assert elements(ds) == [0, 1, 2, 3]
    assert time.perf_counter() - start < 0.6  # one after another: 0.8 s


def test_parallel_interleave_raises_an_error_at_its_element():
    def inner(v):
        values = tf.data.Dataset.from_tensor_slices(tf.stack([v, v - 2.0]))
        return values.map(lambda x: tf.check_numerics(1.0 / x, "inverse"))

    source = tf.data.Dataset.from_tensor_slices(np.array([1.0, 4.0], np.float32))
    nxt = source.interleave(inner, cycle_length=2, num_parallel_calls=2) \
        .make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert [float(s.run(nxt)) for _ in range(3)] == [1.0, 0.25, -1.0]
        assert float(s.run(nxt)) == 0.5  # 1 / (4 - 2)
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(nxt)
    bad = tf.data.Dataset.from_tensor_slices(np.array([2.0, 1.0], np.float32))
    nxt = bad.interleave(inner, cycle_length=2, num_parallel_calls=2) \
        .make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert [float(s.run(nxt)) for _ in range(2)] == [0.5, 1.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="inverse"):
            s.run(nxt)  # 1 / (2 - 2)
