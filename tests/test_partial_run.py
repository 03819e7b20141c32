"""Partial runs: `Session.partial_run_setup` / `partial_run`, as TF's partial_run_test."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors
from tensorweave.train.local_cluster import free_ports


def test_partial_run_feeds_and_fetches_in_turns():
    # partial_run_test.RunTestPartialRun
    a = tf.placeholder(tf.float32, shape=[])
    b = tf.placeholder(tf.float32, shape=[])
    c = tf.placeholder(tf.float32, shape=[])
    r1 = tf.add(a, b)
    r2 = tf.multiply(r1, c)
    with tf.Session() as sess:
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        res = sess.partial_run(h, r1, feed_dict={a: 1, b: 2})
        assert res == 3
        assert sess.partial_run(h, r2, feed_dict={c: res}) == 9
        # a second handle is independent of the first
        h2 = sess.partial_run_setup([r1, r2], [a, b, c])
        assert sess.partial_run(h2, [r1], feed_dict={a: 3, b: 4}) == [7]


def test_partial_run_reuses_what_earlier_calls_computed():
    counter = tf.Variable(0)
    x = tf.placeholder(tf.int32, shape=[])
    bump = tf.assign_add(counter, 1)
    later = bump * x
    with tf.Session() as sess:
        sess.run(counter.initializer)
        h = sess.partial_run_setup([bump, later], [x])
        assert sess.partial_run(h, bump) == 1
        assert sess.partial_run(h, later, feed_dict={x: 10}) == 10
        assert sess.run(counter) == 1  # the increment ran once


@pytest.mark.parametrize("call, message", [
    (lambda s, h, t: s.partial_run(h, t["r2"], {t["d"]: 1.0}),
     "The feed d:0 was not specified in partial_run_setup."),
    (lambda s, h, t: s.partial_run(h, t["r3"], {t["a"]: 1.0}),
     "The fetch r3:0 was not specified in partial_run_setup."),
    (lambda s, h, t: [s.partial_run(h, t["r1"], {t["a"]: 1.0, t["b"]: 2.0}),
                      s.partial_run(h, t["r2"], {t["a"]: 1.0})],
     "The feed a:0 has already been fed."),
    (lambda s, h, t: [s.partial_run(h, t["r1"], {t["a"]: 1.0, t["b"]: 2.0}),
                      s.partial_run(h, t["r1"])],
     "The fetch r1:0 has already been fetched."),
    (lambda s, h, t: s.partial_run("no such handle", t["r1"]),
     "Must run 'setup' before performing partial runs!"),
])
def test_partial_run_errors(call, message):
    # partial_run_test.RunTestPartialRunNotSpecified / AlreadyFed / AlreadyFetched
    t = {name: tf.placeholder(tf.float32, shape=[], name=name) for name in "abd"}
    t["r1"] = tf.add(t["a"], t["b"], name="r1")
    t["r2"] = tf.multiply(t["r1"], 2.0, name="r2")
    t["r3"] = tf.identity(t["r2"], name="r3")
    with tf.Session() as sess:
        h = sess.partial_run_setup([t["r1"], t["r2"]], [t["a"], t["b"]])
        with pytest.raises(errors.InvalidArgumentError, match=message):
            call(sess, h, t)


def test_partial_run_of_an_op_fetch():
    v = tf.Variable(np.float32(1.0))
    x = tf.placeholder(tf.float32, shape=[])
    update = tf.assign(v, x).op
    with tf.Session() as sess:
        sess.run(v.initializer)
        h = sess.partial_run_setup([update, v], [x])
        assert sess.partial_run(h, update, {x: 5.0}) is None
        assert sess.partial_run(h, v) == 5.0


def _counting(name):
    """A variable and an op that adds 1 to it, whose value is the count."""
    count = tf.Variable(0, name=name)
    return count, tf.assign_add(count, 1)


def test_an_op_two_calls_need_runs_once():
    # TF: one partial run is one step, so `bump` (needed by both fetches) runs once
    count, bump = _counting("count")
    x = tf.placeholder(tf.int32, shape=[])
    y = tf.placeholder(tf.int32, shape=[])
    first, second = bump * x, bump + y
    with tf.Session() as sess:
        sess.run(count.initializer)
        h = sess.partial_run_setup([first, second], [x, y])
        assert sess.partial_run(h, first, {x: 10}) == 10
        assert sess.partial_run(h, second, {y: 5}) == 6
        assert sess.run(count) == 1


def test_an_op_two_calls_wait_for_runs_once():
    # a control dependency of both fetches: the second call sees it done
    count, bump = _counting("count")
    x = tf.placeholder(tf.float32, shape=[])
    with tf.control_dependencies([bump]):
        first, second = tf.identity(x), x * 2.0
    with tf.Session() as sess:
        sess.run(count.initializer)
        h = sess.partial_run_setup([first, second], [x])
        assert sess.partial_run(h, first, {x: 3.0}) == 3.0
        assert sess.partial_run(h, second) == 6.0
        assert sess.run(count) == 1
        # a new partial run is a new step: it runs again
        h2 = sess.partial_run_setup([first, second], [x])
        sess.partial_run(h2, [first, second], {x: 1.0})
        assert sess.run(count) == 2


def test_a_variable_read_by_a_later_call_sees_its_value_then():
    # a variable names state, not a value: a later call reads it as it is then
    v = tf.Variable(1.0, name="v")
    x = tf.placeholder(tf.float32, shape=[])
    update = tf.assign(v, x)
    read = tf.identity(v) * 1.0
    with tf.Session() as sess:
        sess.run(v.initializer)
        h = sess.partial_run_setup([update, read], [x])
        assert sess.partial_run(h, update, {x: 7.0}) == 7.0
        assert sess.partial_run(h, read) == 7.0


def test_a_partial_run_on_a_server_runs_each_op_once():
    (port,) = free_ports(1)
    with tf.train.Server({"w": [f"localhost:{port}"]}) as server:
        count, bump = _counting("count")
        x = tf.placeholder(tf.float32, shape=[])
        with tf.control_dependencies([bump]):
            first, second = tf.identity(x), x * 2.0
        total = tf.cast(bump, tf.float32) + second
        with tf.Session(server.target) as sess:
            sess.run(count.initializer)
            h = sess.partial_run_setup([first, total], [x])
            assert sess.partial_run(h, first, {x: 3.0}) == 3.0
            assert sess.partial_run(h, total) == 7.0
            assert sess.run(count) == 1


def test_a_loops_gradient_in_a_later_call_does_not_run_the_loop_again():
    # the gradient of a loop reading a resource variable of unknown shape needs the handle
    # the loop carries; it takes it from the loop's input, so the second call does not rerun
    # the forward loop (a handle cannot be fed back), and what the forward loop recorded for
    # the gradient is kept for the second call: 3 body runs in all, as in TF
    v = tf.Variable(tf.constant(2.0), use_resource=True, shape=tf.TensorShape(None), name="v")
    count = tf.Variable(0, use_resource=True, name="count")
    x = tf.placeholder(tf.float32, [])

    def body(i, a):
        with tf.control_dependencies([count.assign_add(1)]):
            return i + 1, tf.reshape(a * v.read_value(), [])

    out = tf.while_loop(lambda i, a: i < 3, body, [0, x])[1]
    (grad,) = tf.gradients(out, [v])
    with tf.Session() as sess:
        sess.run([v.initializer, count.initializer])
        h = sess.partial_run_setup([out, grad], [x])
        assert sess.partial_run(h, out, {x: 1.0}) == 8.0
        assert sess.run(count) == 3
        assert sess.partial_run(h, grad) == 12.0
        assert sess.run(count) == 3
