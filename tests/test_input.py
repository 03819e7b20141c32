"""Queue-based input pipelines (``tf.train`` producers, ``batch``, ``shuffle_batch``) run with
their queue runners: element values, order, epochs, dtypes and static shapes, padding, the
smaller final batch, and bad arguments. Every run has a deadline, every join a timeout."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorweave as tf

OPTIONS = tf.RunOptions(timeout_in_ms=5000)


class Runners:
    """A session with local variables initialized and the queue runners started."""

    def __init__(self) -> None:
        self.sess = tf.Session()
        self.sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        self.coord = tf.train.Coordinator()
        self.threads = tf.train.start_queue_runners(self.sess, self.coord)

    def run(self, fetches: Any) -> Any:
        return self.sess.run(fetches, options=OPTIONS)

    def drain(self, fetches: Any) -> list[Any]:
        out = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                out.append(self.run(fetches))
        return out

    def close(self) -> None:
        self.coord.request_stop()
        self.coord.join(self.threads, stop_grace_period_secs=5)
        self.sess.close()


@pytest.fixture
def runners() -> Iterator[Any]:
    made: list[Runners] = []

    def start() -> Runners:
        made.append(Runners())
        return made[-1]

    yield start
    for r in made:
        r.close()


def test_limit_epochs_counts_in_a_local_variable() -> None:
    x = tf.train.limit_epochs(tf.constant([1, 2]), num_epochs=2)
    assert [v.name for v in tf.local_variables()] == ["limit_epochs/epochs:0"]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(x)
        sess.run(tf.local_variables_initializer())
        np.testing.assert_array_equal(sess.run(x), [1, 2])
        sess.run(x)
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(x)
    assert tf.train.limit_epochs(x, None) is x
    with pytest.raises(ValueError, match="num_epochs must be > 0"):
        tf.train.limit_epochs(x, 0)


def test_range_input_producer_in_order_for_each_epoch(runners: Any) -> None:
    q = tf.train.range_input_producer(4, num_epochs=2, shuffle=False)
    value = q.dequeue()
    assert value.dtype == tf.int32 and value.shape.as_list() == []
    r = runners()
    assert [int(v) for v in r.drain(value)] == [0, 1, 2, 3, 0, 1, 2, 3]


def test_shuffled_epochs_are_permutations(runners: Any) -> None:
    value = tf.train.range_input_producer(6, num_epochs=3, seed=3).dequeue()
    got = [int(v) for v in runners().drain(value)]
    epochs = [got[i:i + 6] for i in range(0, 18, 6)]
    assert all(sorted(e) == list(range(6)) for e in epochs)
    assert any(e != list(range(6)) for e in epochs)


def test_slice_input_producer_keeps_rows_together(runners: Any) -> None:
    images = np.arange(10, dtype=np.float32).reshape(5, 2)
    labels = np.arange(5, dtype=np.int64) * 10
    image, label = tf.train.slice_input_producer([images, labels], num_epochs=1, seed=1)
    assert image.shape.as_list() == [2] and label.dtype == tf.int64
    pairs = runners().drain([image, label])
    assert len(pairs) == 5
    for img, lab in pairs:
        np.testing.assert_array_equal(img, images[lab // 10])


def test_string_input_producer(runners: Any) -> None:
    q = tf.train.string_input_producer(["a.txt", "b.txt"], num_epochs=1, shuffle=False)
    assert q.name == "input_producer"
    assert "input_producer/fraction_of_32_full" in [
        s.op.name for s in tf.get_collection(tf.GraphKeys.SUMMARIES)]
    assert runners().drain(q.dequeue()) == [b"a.txt", b"b.txt"]
    with pytest.raises(ValueError, match="non-null input tensor"):
        tf.train.string_input_producer([])


def test_input_producer_needs_a_known_element_shape() -> None:
    x = tf.placeholder(tf.float32, [None, None])
    with pytest.raises(ValueError, match="fully defined shape"):
        tf.train.input_producer(x)
    q = tf.train.input_producer(x, element_shape=[3])
    assert q.shapes == [tf.TensorShape([3])]


def test_batch_of_single_elements(runners: Any) -> None:
    value = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    pair = [value, tf.cast(value, tf.float32) * 0.5]
    batch = tf.train.batch(pair, batch_size=4)
    assert [t.shape.as_list() for t in batch] == [[4], [4]]
    assert [t.dtype for t in batch] == [tf.int32, tf.float32]
    r = runners()
    first, halves = r.run(batch)
    np.testing.assert_array_equal(first, [0, 1, 2, 3])
    np.testing.assert_allclose(halves, first * 0.5)
    np.testing.assert_array_equal(r.run(batch)[0], [4, 5, 6, 7])
    with pytest.raises(tf.errors.OutOfRangeError):  # 2 left: no full batch
        r.run(batch)


def test_batch_smaller_final_batch_and_enqueue_many(runners: Any) -> None:
    rows = tf.train.limit_epochs(tf.constant(np.arange(10, dtype=np.int64).reshape(5, 2)), 1)
    batch = tf.train.batch([rows], batch_size=3, enqueue_many=True,
                           allow_smaller_final_batch=True)
    assert isinstance(batch, tf.Tensor) and batch.shape.as_list() == [None, 2]
    sizes = [b.shape[0] for b in runners().drain(batch)]
    assert sizes == [3, 2]


def test_batch_of_a_dict_with_dynamic_padding(runners: Any) -> None:
    n = tf.train.range_input_producer(4, num_epochs=1, shuffle=False).dequeue()
    ragged = tf.range(n + 1)
    batch = tf.train.batch({"n": n, "ragged": ragged}, batch_size=2, dynamic_pad=True)
    assert set(batch) == {"n", "ragged"}
    assert batch["ragged"].shape.as_list() == [2, None]
    r = runners()
    first = r.run(batch)
    np.testing.assert_array_equal(first["ragged"], [[0, 0], [0, 1]])
    np.testing.assert_array_equal(r.run(batch)["ragged"], [[0, 1, 2, 0], [0, 1, 2, 3]])


def test_batch_from_several_threads_gets_every_element(runners: Any) -> None:
    value = tf.train.range_input_producer(12, num_epochs=1, shuffle=False).dequeue()
    batch = tf.train.batch([value], batch_size=4, num_threads=3, capacity=6)
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1].enqueue_ops) == 3
    got = np.concatenate(runners().drain(batch))
    assert sorted(got.tolist()) == list(range(12))


def test_shuffle_batch_mixes_every_element(runners: Any) -> None:
    value = tf.train.range_input_producer(20, num_epochs=1, shuffle=False).dequeue()
    batch = tf.train.shuffle_batch([value], batch_size=5, capacity=12, min_after_dequeue=6,
                                   seed=5, allow_smaller_final_batch=True)
    assert batch.shape.as_list() == [None]
    summaries = [s.op.name for s in tf.get_collection(tf.GraphKeys.SUMMARIES)]
    assert "shuffle_batch/fraction_over_6_of_6_full" in summaries
    got = np.concatenate(runners().drain(batch)).tolist()
    assert sorted(got) == list(range(20)) and got != list(range(20))


def test_bad_batch_arguments() -> None:
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match="capacity 4 must be bigger than min_after_dequeue 4"):
        tf.train.shuffle_batch([x], 2, capacity=4, min_after_dequeue=4)
    with pytest.raises(ValueError, match="Expected at least one tensor in batch"):
        tf.train.batch([], 2)
    with pytest.raises(ValueError, match="Cannot infer Tensor's rank"):
        tf.train.batch([tf.placeholder(tf.float32)], 2)


def test_batch_join_one_thread_per_input_into_one_queue(runners: Any) -> None:
    evens = tf.train.limit_epochs(tf.constant([[0, 2], [4, 6]]), 1)
    odds = tf.train.limit_epochs(tf.constant([[1, 3], [5, 7], [9, 11]]), 1)
    inputs = [[rows, tf.fill(tf.shape(rows)[:1], k)] for k, rows in enumerate([evens, odds])]
    values, source = tf.train.batch_join(inputs, batch_size=2, enqueue_many=True,
                                         allow_smaller_final_batch=True)
    assert values.shape.as_list() == [None, 2] and source.dtype == tf.int32
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1].enqueue_ops) == 2
    got = runners().drain([values, source])
    rows = np.concatenate([v for v, _ in got])
    sources = np.concatenate([s for _, s in got])
    assert sorted(rows[:, 0].tolist()) == [0, 1, 4, 5, 9]
    np.testing.assert_array_equal(sources, rows[:, 0] % 2)


def test_shuffle_batch_join_mixes_every_element(runners: Any) -> None:
    a = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    b = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue() + 10
    batch = tf.train.shuffle_batch_join([[a], [b]], batch_size=4, capacity=10,
                                        min_after_dequeue=5, seed=3,
                                        allow_smaller_final_batch=True)
    got = np.concatenate(runners().drain(batch)).tolist()
    assert sorted(got) == list(range(20))


def test_bad_join_arguments() -> None:
    x, y = tf.constant([1.0]), tf.constant([1])
    with pytest.raises(TypeError, match="Expected types to be consistent"):
        tf.train.batch_join([[x], [y]], 2)
    with pytest.raises(ValueError, match="Incompatible shapes at component 0"):
        tf.train.batch_join([[x], [tf.constant([1.0, 2.0])]], 2)
    with pytest.raises(ValueError, match="Expected at least one input in batch_join"):
        tf.train.batch_join([], 2)
