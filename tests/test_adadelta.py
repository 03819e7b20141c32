"""AdadeltaOptimizer against a numpy transcription of TF's ApplyAdadelta kernel."""

from __future__ import annotations

import numpy as np

import tensorweave as tf


def adadelta_reference(var: np.ndarray, accum: np.ndarray, update_accum: np.ndarray,
                       grad: np.ndarray, lr: float, rho: float,
                       eps: float) -> tuple[np.ndarray, ...]:
    accum = rho * accum + (1 - rho) * grad * grad
    update = np.sqrt(update_accum + eps) / np.sqrt(accum + eps) * grad
    update_accum = rho * update_accum + (1 - rho) * update * update
    return var - lr * update, accum, update_accum


def test_dense_steps_match_the_kernel_and_slots_are_named() -> None:
    init = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    grads = [np.array([[0.1, -0.2], [0.3, 0.0]], np.float32),
             np.array([[-0.4, 0.2], [1.0, 0.5]], np.float32)]
    var = tf.Variable(init, name="w")
    g = tf.placeholder(tf.float32, [2, 2])
    opt = tf.train.AdadeltaOptimizer(learning_rate=0.5, rho=0.9, epsilon=1e-3)
    step = opt.apply_gradients([(g, var)])
    assert sorted(opt.get_slot_names()) == ["accum", "accum_update"]
    assert opt.get_slot(var, "accum").op.name == "w/Adadelta"
    expected = (init, np.zeros_like(init), np.zeros_like(init))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for grad in grads:
            sess.run(step, {g: grad})
            expected = adadelta_reference(*expected, grad, 0.5, 0.9, 1e-3)
        got = sess.run([var, opt.get_slot(var, "accum"), opt.get_slot(var, "accum_update")])
    for a, b in zip(got, expected):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_sparse_gradient_updates_only_its_rows() -> None:
    init = np.arange(6, dtype=np.float32).reshape(3, 2)
    var = tf.Variable(init)
    loss = tf.reduce_sum(tf.gather(var, [2, 0, 2]) * 2.0)
    step = tf.train.AdadeltaOptimizer(1.0, rho=0.5, epsilon=0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        got = sess.run(var)
    grad = np.array([[2.0, 2.0], [0.0, 0.0], [4.0, 4.0]], np.float32)  # duplicates summed
    expected, _, _ = adadelta_reference(init, np.zeros_like(init), np.zeros_like(init),
                                        grad, 1.0, 0.5, 0.1)
    np.testing.assert_allclose(got[[0, 2]], expected[[0, 2]], rtol=1e-5)
    np.testing.assert_array_equal(got[1], init[1])

