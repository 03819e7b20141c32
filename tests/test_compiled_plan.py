"""The compiled straight-line path gives the interpreted loop's results, errors and memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors
from tensorweave.engine.runtime import executor


def _chain(x, n):
    y = x
    for i in range(n):
        y = y * 1.5 + float(i)
    return y


def test_compiled_runs_equal_interpreted_runs(monkeypatch):
    x = tf.placeholder(tf.float32, [3])
    y = _chain(x, 20)
    parts = tf.split(tf.concat([y, x], 0), 2)
    feed = {x: np.array([1.0, -2.0, 3.5], np.float32)}
    with tf.Session() as sess:
        compiled = [sess.run([y, parts], feed) for _ in range(executor.COMPILE_AFTER + 3)]
    monkeypatch.setattr(executor, "COMPILE_AFTER", None)
    with tf.Session() as sess:
        interpreted = [sess.run([y, parts], feed) for _ in range(executor.COMPILE_AFTER or 4)]
    for got in compiled:
        np.testing.assert_array_equal(got[0], interpreted[0][0])
        for a, b in zip(got[1], interpreted[0][1]):
            np.testing.assert_array_equal(a, b)


def test_an_error_after_compilation_names_the_node():
    x = tf.placeholder(tf.float32, [None])
    y = tf.placeholder(tf.float32, [None])
    z = tf.multiply(x + 1.0, y, name="product")
    with tf.Session() as sess:
        for _ in range(executor.COMPILE_AFTER + 2):
            sess.run(z, {x: [1.0], y: [2.0]})
        # the kernel's own message, though the compiled run calls the ufunc itself
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"Incompatible shapes: \[2\] vs. \[3\]") as info:
            sess.run(z, {x: [1.0, 2.0], y: [1.0, 2.0, 3.0]})
        assert info.value.op.name == "product" and "Mul" in str(info.value)
        np.testing.assert_array_equal(sess.run(z, {x: [1.0], y: [3.0]}), [6.0])


def test_intermediates_are_freed_after_their_last_use():
    x = tf.placeholder(tf.float64, [1_000_000])  # 8 MB per tensor
    y = _chain(x, 12)
    feed = {x: np.zeros(1_000_000)}
    with tf.Session() as sess:
        for run in range(executor.COMPILE_AFTER + 2):  # interpreted, then compiled
            tracemalloc.start()
            sess.run(y.op, feed)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            # 24 intermediates would be 192 MB; only a handful may be alive at once
            assert peak < 5 * 8_000_000, (run, peak)


def test_a_loop_body_compiled_as_a_function_equals_its_interpreted_runs(monkeypatch):
    v = tf.Variable(np.array([1.0, 2.0], np.float32))
    x = tf.placeholder(tf.float32, [2])
    # (a result of the body is an assign's ref: the compiled retval reads it, as the kernel does)
    _, y, r = tf.while_loop(lambda i, y, r: i < 6,
                            lambda i, y, r: (i + 1, _chain(y, 3) * 0.25, tf.assign_add(v, y)),
                            [tf.constant(0), x, tf.zeros([2])])
    feed = {x: np.array([0.5, -1.0], np.float32)}
    results = {}
    for compile_after in (executor.COMPILE_AFTER, None):  # compiled from the third iteration
        monkeypatch.setattr(executor, "COMPILE_AFTER", compile_after)
        with tf.Session() as sess:
            sess.run(v.initializer)
            results[compile_after] = [sess.run([y, r], feed) for _ in range(2)]
    for got, want in zip(results[executor.COMPILE_AFTER], results[None]):
        for a, b in zip(got, want):
            assert type(a) is np.ndarray
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(results[None][0][1], results[None][1][1])


def test_an_error_in_a_compiled_loop_body_names_the_inner_node():
    params = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
    _, total = tf.while_loop(lambda i, s: i < 8,
                             lambda i, s: (i + 1, s + tf.gather(params, i, name="pick")),
                             [tf.constant(0), tf.constant(0.0)], name="summing")
    with tf.Session() as sess:  # fails at iteration 5, after the body has been compiled
        with pytest.raises(errors.InvalidArgumentError, match=r"indices.*5") as info:
            sess.run(total)
    assert "[[node summing/pick (op: GatherV2)" in info.value.message
