"""`tw.contrib.layers.optimize_loss`: one SGD step against numpy with gradient multipliers and
clipping, the learning-rate variable and decay, update ops, summaries, the global step, and
TF's errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw

layers = tw.contrib.layers
RNG = np.random.RandomState(6)
X = RNG.randn(6, 3).astype(np.float32)
Y = RNG.randn(6, 1).astype(np.float32)


def linear_loss() -> tuple[tw.Variable, tw.Tensor]:
    w = tw.Variable(RNG.randn(3, 1).astype(np.float32), name="w")
    return w, tw.reduce_mean(tw.square(tw.matmul(tw.constant(X), w) - Y))


def gradient(w: np.ndarray) -> np.ndarray:
    return 2 * X.T @ (X @ w - Y) / len(X)


def step_once(w: tw.Variable, train_op: tw.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """`w` before and after one run of `train_op` in a fresh session."""
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        w0 = sess.run(w)
        sess.run(train_op)
        return w0, sess.run(w)


def test_one_sgd_step_matches_numpy_and_increments_the_step() -> None:
    w, loss = linear_loss()
    step = tw.train.get_or_create_global_step()
    train = layers.optimize_loss(loss, None, 0.1, "SGD", gradient_multipliers={"w:0": 3.0})
    assert train.op.name.startswith("OptimizeLoss/")
    lr = [v for v in tw.global_variables() if v.name == "OptimizeLoss/learning_rate:0"]
    assert lr and lr[0] not in tw.trainable_variables()
    summaries = {s.op.name for s in tw.get_collection(tw.GraphKeys.SUMMARIES)}
    assert summaries == {"OptimizeLoss/global_norm/gradient_norm", "OptimizeLoss/loss"}
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        w0 = sess.run(w)
        first = sess.run(train)
        w1, count = sess.run([w, step])
    assert first == pytest.approx(np.mean((X @ w0 - Y) ** 2), rel=1e-5)
    np.testing.assert_allclose(w1, w0 - 0.1 * 3.0 * gradient(w0), rtol=1e-5, atol=1e-6)
    assert count == 1


def test_clipping_decay_update_ops_and_optimizer_forms() -> None:
    w, loss = linear_loss()
    counter = tw.Variable(0.0, trainable=False)
    tw.add_to_collection(tw.GraphKeys.UPDATE_OPS, tw.assign_add(counter, 1.0))
    step = tw.train.get_or_create_global_step()
    train = layers.optimize_loss(loss, step, 0.5, tw.train.GradientDescentOptimizer,
                                 clip_gradients=1e-3, summaries=[],
                                 learning_rate_decay_fn=lambda lr, gs: lr * 0.5,
                                 increment_global_step=False, name="opt")
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        w0 = sess.run(w)
        sess.run(train)
        w1, ran, count = sess.run([w, counter, step])
    g = gradient(w0)
    np.testing.assert_allclose(w1, w0 - 0.25 * g * 1e-3 / np.linalg.norm(g), rtol=1e-4)
    assert ran == 1.0 and count == 0
    assert tw.get_collection(tw.GraphKeys.SUMMARIES) == []
    instance = tw.train.AdamOptimizer(0.01)
    layers.optimize_loss(loss, None, None, instance, name="a", summaries=[])
    layers.optimize_loss(loss, None, None, lambda: tw.train.AdamOptimizer(0.01), name="b",
                         summaries=[])
    layers.optimize_loss(loss, None, tw.constant(0.1), "Momentum", name="c", summaries=[])


def test_errors() -> None:
    _, loss = linear_loss()
    with pytest.raises(ValueError, match="Expected scalar shape"):
        layers.optimize_loss(tw.constant([1.0, 2.0]), None, 0.1, "SGD")
    with pytest.raises(ValueError, match="Invalid learning_rate"):
        layers.optimize_loss(loss, None, -0.1, "SGD")
    with pytest.raises(ValueError, match="Learning rate should be 0d Tensor or float"):
        layers.optimize_loss(loss, None, 1, "SGD")
    with pytest.raises(ValueError, match="Optimizer name should be one of"):
        layers.optimize_loss(loss, None, 0.1, "Nope")
    with pytest.raises(ValueError, match="Learning rate is None"):
        layers.optimize_loss(loss, None, None, "SGD")
    with pytest.raises(ValueError, match="function should return subclass of Optimizer"):
        layers.optimize_loss(loss, None, 0.1, lambda lr: 3)
    with pytest.raises(ValueError, match="Summaries should be one of"):
        layers.optimize_loss(loss, None, 0.1, "SGD", summaries=["weights"])
    with pytest.raises(ValueError, match="global_step is required"):
        layers.optimize_loss(loss, None, 0.1, "SGD", learning_rate_decay_fn=lambda lr, gs: lr)
    with pytest.raises(ValueError, match="Unknown type"):
        layers.optimize_loss(loss, None, 0.1, "SGD", clip_gradients=1)
    with pytest.raises(TypeError, match="integer type"):
        layers.optimize_loss(loss, tw.constant(1.0), 0.1, "SGD")


def test_gradient_noise_is_added_to_each_gradient() -> None:
    w, loss = linear_loss()
    tw.set_random_seed(1)
    quiet = layers.optimize_loss(loss, None, 1.0, "SGD", gradient_noise_scale=0.0, name="q",
                                 summaries=[])
    w0, w1 = step_once(w, quiet)
    np.testing.assert_allclose(w1, w0 - gradient(w0), rtol=1e-5, atol=1e-6)
    noisy = layers.optimize_loss(loss, None, 1.0, "SGD", gradient_noise_scale=10.0, name="n",
                                 summaries=[])
    w0, w1 = step_once(w, noisy)
    moved = w1 - (w0 - gradient(w0))
    assert np.abs(moved).max() > 0.1 and np.abs(moved).max() <= 20.0 + 1e-4
