"""Dataset iterators in checkpoints (`tensorweave.api.iterator_checkpoint`, kernels in
`tensorweave.plugins.kernels.dataset`): save mid-pass, move on, restore, and the iterator gives
the same elements again, in the same session and in a fresh graph, for the common sources and
transformations (unseeded shuffles included), real TFRecord / text files, initializable and
reinitializable iterators, a MonitoredTrainingSession, and TF's errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tests.checkpoint_support import write_checkpoint

Build = Callable[[], tuple[Any, Any]]  # -> (iterator, initializer op or None)


def saveable_pipeline(make: Build) -> tuple[Any, Any, Any]:
    iterator, init = make()
    tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                         tf.data.experimental.make_saveable_from_iterator(iterator))
    return iterator.get_next(), init, tf.train.Saver()


def values(sess: Any, element: Any, n: int) -> list[Any]:
    out = []
    for _ in range(n):
        got = sess.run(element)
        out.append(got.tolist() if hasattr(got, "tolist") else got)
    return out


def check_resumes(tmp_path: Path, make: Build, before: int, after: int) -> list[Any]:
    """Take `before` elements, save, take `after`, restore (same session, then a fresh graph):
    both give the same `after` elements again."""
    with tf.Graph().as_default():
        element, init, saver = saveable_pipeline(make)
        with tf.Session() as sess:
            if init is not None:
                sess.run(init)
            head = values(sess, element, before)
            path = saver.save(sess, str(tmp_path / "it"))
            rest = values(sess, element, after)
            saver.restore(sess, path)
            assert values(sess, element, after) == rest
    with tf.Graph().as_default():
        element, _, saver = saveable_pipeline(make)
        with tf.Session() as sess:
            saver.restore(sess, path)
            assert values(sess, element, after) == rest
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(element)
    return head + rest


def one_shot(dataset_fn: Callable[[], Any]) -> Build:
    return lambda: (tf.data.make_one_shot_iterator(dataset_fn()), None)


def test_range_map_batch_repeat(tmp_path: Path) -> None:
    got = check_resumes(tmp_path, one_shot(
        lambda: tf.data.Dataset.range(7).map(lambda x: x * 3).batch(3).repeat(2)), 2, 4)
    expected = [[0, 3, 6], [9, 12, 15], [18]] * 2
    assert got == expected


def test_tensor_slices_filter_skip_take(tmp_path: Path) -> None:
    data = {"a": np.arange(20, dtype=np.int32), "b": np.arange(20.0, dtype=np.float32) / 2}
    got = check_resumes(tmp_path, one_shot(
        lambda: tf.data.Dataset.from_tensor_slices(data)
        .filter(lambda e: tf.equal(e["a"] % 3, 0)).skip(1).take(5)
        .map(lambda e: e["b"])), 2, 3)
    assert got == [1.5, 3.0, 4.5, 6.0, 7.5]


def test_an_unseeded_shuffle_resumes_with_its_own_order(tmp_path: Path) -> None:
    got = check_resumes(tmp_path, one_shot(
        lambda: tf.data.Dataset.range(30).shuffle(10).repeat(2)), 25, 35)
    assert sorted(got) == sorted(list(range(30)) * 2)


def test_text_line_and_tfrecord_files_resume_mid_file(tmp_path: Path) -> None:
    lines = []
    for f in range(3):
        text = [f"file{f} line{i}" for i in range(4)]
        (tmp_path / f"t{f}.txt").write_text("\n".join(text) + "\n")
        lines += [s.encode() for s in text]
    names = [str(tmp_path / f"t{f}.txt") for f in range(3)]
    assert check_resumes(tmp_path, one_shot(lambda: tf.data.TextLineDataset(names)),
                         5, 7) == lines
    records = [str(tmp_path / "r.tfrecord")]
    with tf.io.TFRecordWriter(records[0]) as writer:
        for i in range(6):
            writer.write(b"record %d" % i)
    assert check_resumes(tmp_path, one_shot(lambda: tf.data.TFRecordDataset(records)),
                         4, 2) == [b"record %d" % i for i in range(6)]


def test_an_initializable_iterator_with_a_fed_placeholder(tmp_path: Path) -> None:
    def make() -> tuple[Any, Any]:
        limit = tf.placeholder_with_default(tf.constant(9, tf.int64), [])
        it = tf.data.make_initializable_iterator(tf.data.Dataset.range(limit))
        return it, it.initializer

    assert check_resumes(tmp_path, make, 4, 5) == list(range(9))


def test_a_reinitializable_iterator_restores_the_initializer_it_was_on(tmp_path: Path) -> None:
    def make() -> tuple[Any, Any, Any, Any]:
        it = tf.data.Iterator.from_structure(tf.int64, [])
        evens = it.make_initializer(tf.data.Dataset.range(0, 20, 2))
        odds = it.make_initializer(tf.data.Dataset.range(1, 20, 2))
        saveable = tf.contrib.data.make_saveable_from_iterator(it)
        return it.get_next(), evens, odds, tf.train.Saver([saveable])

    with tf.Graph().as_default():
        element, evens, odds, saver = make()
        with tf.Session() as sess:
            sess.run(odds)
            values(sess, element, 3)
            path = saver.save(sess, str(tmp_path / "it"))
            sess.run(evens)
            assert values(sess, element, 2) == [0, 2]
            saver.restore(sess, path)
            assert values(sess, element, 2) == [7, 9]
    assert tf.train.list_variables(path) == [("Iterator_STATE", [])]


def test_a_monitored_training_session_checkpoints_the_iterator(tmp_path: Path) -> None:
    def make() -> tuple[Any, Any]:
        step = tf.train.get_or_create_global_step()
        it = tf.data.make_one_shot_iterator(tf.data.Dataset.range(100))
        tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                             tf.data.experimental.make_saveable_from_iterator(it))
        element = it.get_next()
        with tf.control_dependencies([element]):
            return tf.assign_add(step, 1), element

    with tf.Graph().as_default():
        train, _ = make()
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                               save_summaries_steps=None) as sess:
            for _ in range(4):
                sess.run(train)
    with tf.Graph().as_default():
        _, element = make()
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                               save_checkpoint_secs=None,
                                               save_summaries_steps=None) as sess:
            assert sess.run(element) == 4


def test_saving_errors(tmp_path: Path) -> None:
    with tf.Graph().as_default():
        gen = tf.data.Dataset.from_generator(lambda: iter([1, 2]), tf.int64, [])
        element, _, saver = saveable_pipeline(one_shot(lambda: gen))
        with tf.Session() as sess:
            sess.run(element)
            with pytest.raises(tf.errors.UnimplementedError, match="'generator' dataset"):
                saver.save(sess, str(tmp_path / "gen"))
    with tf.Graph().as_default():
        element, _, saver = saveable_pipeline(
            lambda: (lambda it: (it, it.initializer))(
                tf.data.make_initializable_iterator(tf.data.Dataset.range(3))))
        with tf.Session() as sess, pytest.raises(tf.errors.FailedPreconditionError):
            saver.save(sess, str(tmp_path / "uninit"))
        handle = tf.data.Iterator.from_string_handle(tf.placeholder(tf.string, []), tf.int64)
        with pytest.raises(ValueError, match="string handle"):
            tf.data.experimental.make_saveable_from_iterator(handle)
        with pytest.raises(TypeError, match="Expected an Iterator"):
            tf.data.experimental.make_saveable_from_iterator(tf.data.Dataset.range(3))
        no_init = tf.data.Iterator.from_structure(tf.int64, [])
        with pytest.raises(ValueError, match="no initializer"):
            tf.train.Saver([tf.data.experimental.make_saveable_from_iterator(no_init)])


def test_restoring_bad_states(tmp_path: Path) -> None:
    long_run = check_resumes(tmp_path, one_shot(lambda: tf.data.Dataset.range(10)), 8, 2)
    assert long_run == list(range(10))
    garbage, other = str(tmp_path / "garbage"), str(tmp_path / "other")
    write_checkpoint(garbage, {"OneShotIterator_STATE": np.array(b"{not json", dtype=object)})
    state = (b'{"format": "tensorweave.iterator_state/1", "initializer": "Elsewhere", '
             b'"produced": 1, "entropy": "0"}')
    write_checkpoint(other, {"OneShotIterator_STATE": np.array(state, dtype=object)})
    with tf.Graph().as_default():
        # a shorter dataset than the one saved (8 elements given) cannot be resumed
        element, _, saver = saveable_pipeline(one_shot(lambda: tf.data.Dataset.range(5)))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.DataLossError, match="ended after 5 elements"):
                saver.restore(sess, str(tmp_path / "it"))
            with pytest.raises(tf.errors.InvalidArgumentError, match="Malformed"):
                saver.restore(sess, garbage)
            with pytest.raises(tf.errors.InvalidArgumentError, match="Elsewhere"):
                saver.restore(sess, other)
