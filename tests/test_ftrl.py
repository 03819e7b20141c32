"""FtrlOptimizer against a numpy transcription of TF's ApplyFtrl / ApplyFtrlV2 kernels."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def ftrl_reference(var: np.ndarray, accum: np.ndarray, linear: np.ndarray, grad: np.ndarray,
                   lr: float, power: float, l1: float, l2: float,
                   shrinkage: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TF's FtrlCompute, element-wise (training_ops.cc)."""
    shrunk = grad + 2 * shrinkage * var
    new_accum = accum + grad * grad
    linear = linear + shrunk - (new_accum ** -power - accum ** -power) / lr * var
    x = np.clip(linear, -l1, l1) - linear
    y = new_accum ** -power / lr + 2 * l2
    var = np.where(np.abs(linear) > l1, x / y, 0.0)
    return var.astype(np.float32), new_accum.astype(np.float32), linear.astype(np.float32)


def run_steps(opt: tf.train.FtrlOptimizer, init: np.ndarray, grads: list[np.ndarray],
              sparse_indices: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    with tf.Graph().as_default():
        var = tf.Variable(init)
        g = tf.placeholder(tf.float32)
        if sparse_indices is None:
            grad = g
        else:
            grad = tf.IndexedSlices(g, tf.constant(sparse_indices), tf.constant(init.shape))
        train = opt.apply_gradients([(grad, var)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for value in grads:
                sess.run(train, {g: value})
            return sess.run([var, opt.get_slot(var, "accum"), opt.get_slot(var, "linear")])


@pytest.mark.parametrize("l1,l2,shrinkage,power", [(0.0, 0.0, 0.0, -0.5), (0.05, 0.1, 0.0, -0.5),
                                                   (0.01, 0.02, 0.1, -0.7)])
def test_dense_steps_match_tf_kernel(l1: float, l2: float, shrinkage: float,
                                     power: float) -> None:
    rng = np.random.RandomState(0)
    init = rng.randn(3, 2).astype(np.float32)
    grads = [rng.randn(3, 2).astype(np.float32) for _ in range(3)]
    opt = tf.train.FtrlOptimizer(0.3, learning_rate_power=power, initial_accumulator_value=0.1,
                                 l1_regularization_strength=l1, l2_regularization_strength=l2,
                                 l2_shrinkage_regularization_strength=shrinkage)
    got = run_steps(opt, init, grads)
    want = (init, np.full_like(init, 0.1), np.zeros_like(init))
    for grad in grads:
        want = ftrl_reference(*want, grad, 0.3, power, l1, l2, shrinkage)
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_sparse_updates_only_its_rows_and_sums_duplicates() -> None:
    rng = np.random.RandomState(1)
    init = rng.randn(4, 2).astype(np.float32)
    values = rng.randn(3, 2).astype(np.float32)
    opt = tf.train.FtrlOptimizer(0.2, l1_regularization_strength=0.01)
    var, accum, linear = run_steps(opt, init, [values], sparse_indices=np.array([2, 0, 2]))
    dense_grad = np.zeros_like(init)
    np.add.at(dense_grad, [2, 0, 2], values)
    want = ftrl_reference(init, np.full_like(init, 0.1), np.zeros_like(init), dense_grad,
                          0.2, -0.5, 0.01, 0.0)
    touched = [0, 2]
    np.testing.assert_allclose(var[touched], want[0][touched], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(accum[touched], want[1][touched], rtol=1e-5)
    np.testing.assert_allclose(linear[touched], want[2][touched], rtol=1e-5, atol=1e-6)
    untouched = [1, 3]
    np.testing.assert_array_equal(var[untouched], init[untouched])
    np.testing.assert_array_equal(accum[untouched], np.full((2, 2), 0.1, np.float32))


def test_minimize_lowers_a_quadratic_and_names_slots() -> None:
    with tf.Graph().as_default():
        w = tf.Variable([3.0, -2.0], name="w")
        loss = tf.reduce_sum(tf.square(w))
        opt = tf.train.FtrlOptimizer(0.5)
        train = opt.minimize(loss)
        assert sorted(v.op.name for v in opt.variables()) == ["w/Ftrl", "w/Ftrl_1"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(loss)
            for _ in range(20):
                sess.run(train)
            assert sess.run(loss) < 0.1 * before


@pytest.mark.parametrize("kwargs,message", [
    ({"learning_rate_power": 0.5}, "learning_rate_power"),
    ({"initial_accumulator_value": -1.0}, "initial_accumulator_value"),
    ({"l1_regularization_strength": -1.0}, "l1_regularization_strength"),
    ({"l2_regularization_strength": -1.0}, "l2_regularization_strength"),
    ({"l2_shrinkage_regularization_strength": -1.0}, "l2_shrinkage"),
])
def test_bad_hyper_parameters_raise(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tf.train.FtrlOptimizer(0.1, **kwargs)
