"""Optimizers: trajectories against hand-computed numpy updates, slots, global step, errors, and
two small models that must converge."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

C = np.array([[1.0, 2.0], [0.5, 3.0]])
D = np.array([[0.3, -0.2], [0.1, 0.4]])
W0 = np.array([[1.0, -1.0], [2.0, 0.5]])
B0 = np.array([0.5, -0.5])


def grads(w, b):
    """Gradients of the test loss ``0.5 * sum(C * w**2) + sum(D * w) + sum(b**2)``."""
    return C * w + D, 2.0 * b


def trajectory(optimizer, steps=3, dtype=tf.float64):
    w = tf.Variable(W0.astype(dtype.np_type), name="w")
    b = tf.Variable(B0.astype(dtype.np_type), name="b")
    loss = 0.5 * tf.reduce_sum(w * w * C) + tf.reduce_sum(w * D) + tf.reduce_sum(b * b)
    train = optimizer.minimize(loss)
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
            out.append(sess.run([w, b]))
    return out


def simulate(update, slots, steps=3):
    """numpy reference: ``update(t, param, grad, slot dict)`` returns the new param."""
    params = [W0.copy(), B0.copy()]
    state = [{k: np.full_like(p, v) for k, v in slots.items()} for p in params]
    out = []
    for t in range(1, steps + 1):
        gs = grads(*params)
        params = [update(t, p, g, s) for p, g, s in zip(params, gs, state)]
        out.append([p.copy() for p in params])
    return out


def assert_same(actual, expected, rtol=1e-12):
    for got_step, want_step in zip(actual, expected, strict=True):
        for got, want in zip(got_step, want_step, strict=True):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)


def test_gradient_descent_trajectory() -> None:
    expected = simulate(lambda t, p, g, s: p - 0.1 * g, {})
    assert_same(trajectory(tf.train.GradientDescentOptimizer(0.1)), expected)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_trajectory(nesterov: bool) -> None:
    lr, m = 0.1, 0.9

    def update(t, p, g, s):
        s["a"] = m * s["a"] + g
        return p - (lr * g + lr * m * s["a"] if nesterov else lr * s["a"])

    expected = simulate(update, {"a": 0.0})
    assert_same(trajectory(tf.train.MomentumOptimizer(lr, m, use_nesterov=nesterov)), expected)


def test_adam_trajectory_with_bias_correction() -> None:
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8

    def update(t, p, g, s):
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        s["m"] = b1 * s["m"] + (1 - b1) * g
        s["v"] = b2 * s["v"] + (1 - b2) * g * g
        return p - lr_t * s["m"] / (np.sqrt(s["v"]) + eps)

    expected = simulate(update, {"m": 0.0, "v": 0.0})
    assert_same(trajectory(tf.train.AdamOptimizer(lr, b1, b2, eps)), expected)


def test_adagrad_trajectory() -> None:
    lr = 0.2

    def update(t, p, g, s):
        s["acc"] = s["acc"] + g * g
        return p - lr * g / np.sqrt(s["acc"])

    expected = simulate(update, {"acc": 0.1})
    assert_same(trajectory(tf.train.AdagradOptimizer(lr)), expected)


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_trajectory(centered: bool) -> None:
    lr, rho, mom, eps = 0.01, 0.9, 0.5, 1e-10

    def update(t, p, g, s):
        s["ms"] = rho * s["ms"] + (1 - rho) * g * g
        denom = s["ms"] + eps
        if centered:
            s["mg"] = rho * s["mg"] + (1 - rho) * g
            denom = s["ms"] - s["mg"] ** 2 + eps
        s["mom"] = mom * s["mom"] + lr * g / np.sqrt(denom)
        return p - s["mom"]

    expected = simulate(update, {"ms": 1.0, "mom": 0.0, "mg": 0.0})
    optimizer = tf.train.RMSPropOptimizer(lr, rho, mom, eps, centered=centered)
    assert_same(trajectory(optimizer), expected)


def test_float32_variables_follow_the_same_trajectory() -> None:
    expected = simulate(lambda t, p, g, s: p - 0.1 * g, {})
    assert_same(trajectory(tf.train.GradientDescentOptimizer(0.1), dtype=tf.float32),
                expected, rtol=1e-5)


def test_learning_rate_as_tensor_placeholder_or_callable() -> None:
    v = tf.Variable(1.0)
    lr = tf.placeholder(tf.float64, [])  # another dtype than the variable: cast
    train = tf.train.GradientDescentOptimizer(lr).minimize(v * v)
    train_fn = tf.train.GradientDescentOptimizer(lambda: tf.constant(0.25)).minimize(v * v)
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(train, {lr: 0.5})  # v -= 0.5 * 2v
        assert sess.run(v) == 0.0
        sess.run(v.assign(2.0))
        sess.run(train_fn)
        assert sess.run(v) == 1.0


def test_minimize_increments_the_global_step_after_the_update() -> None:
    step = tf.train.get_or_create_global_step()
    v = tf.Variable(3.0)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(v * v, global_step=step)
    assert train.type == "AssignAdd" and train.name == "GradientDescent"
    assert train in tf.get_collection(tf.GraphKeys.TRAIN_OP)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        sess.run(train)
        assert sess.run(step) == 2
        assert sess.run(v) == 0.0


def test_slots_are_named_untrainable_and_colocated() -> None:
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(np.zeros((2, 2)), name="w")
    with tf.device("/job:ps/task:1"):
        a = tf.Variable(np.zeros(2), name="a")
    with tf.device("/job:worker/task:0"):
        loss = tf.reduce_sum(w) + tf.reduce_sum(a)
        opt = tf.train.AdamOptimizer()
        opt.minimize(loss)
    assert opt.get_slot_names() == ["m", "v"]
    m, v = opt.get_slot(w, "m"), opt.get_slot(w, "v")
    assert m.op.name == "w/Adam" and v.op.name == "w/Adam_1"
    for slot, var in ((m, w), (v, w), (opt.get_slot(a, "m"), a)):
        assert slot.device == var.device and f"loc:@{var.op.name}" in slot.op.colocation_groups()
        assert not slot.trainable and slot in tf.global_variables()
    beta1_power = [x for x in opt.variables() if x.op.name == "beta1_power"][0]
    assert beta1_power.device == a.device  # colocated with the first variable by name
    assert len(opt.variables()) == 6
    updates = [op for op in tf.get_default_graph().get_operations() if op.type == "ApplyAdam"]
    assert sorted(op.device for op in updates) == sorted([w.device, a.device])
    assert {op.name for op in updates} == {"Adam/update_w/ApplyAdam", "Adam/update_a/ApplyAdam"}


def test_second_optimizer_gets_new_slot_names() -> None:
    w = tf.Variable(1.0, name="w")
    first, second = tf.train.MomentumOptimizer(0.1, 0.9), tf.train.MomentumOptimizer(0.1, 0.9)
    first.minimize(w * w)
    second.minimize(w * w)
    assert first.get_slot(w, "momentum").op.name == "w/Momentum"
    assert second.get_slot(w, "momentum").op.name == "w/Momentum_1"


def test_compute_gradients_pairs_and_errors() -> None:
    w, unused = tf.Variable(2.0), tf.Variable(1.0)
    frozen = tf.Variable(1.0, trainable=False)
    opt = tf.train.GradientDescentOptimizer(0.1)
    pairs = opt.compute_gradients(w * w * frozen)
    assert [v for _, v in pairs] == [w, unused]
    assert pairs[1][0] is None
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.minimize(frozen * 2.0, var_list=[unused])
    with pytest.raises(ValueError, match="No variables to optimize"):
        opt.compute_gradients(w * w, var_list=[])
    with pytest.raises(ValueError, match="No variables provided"):
        opt.apply_gradients([])
    with pytest.raises(TypeError, match="not a tf.Variable"):
        opt.apply_gradients([(tf.constant(1.0), tf.constant(2.0))])
    with pytest.raises(ValueError, match="gate_gradients"):
        opt.compute_gradients(w * w, gate_gradients=5)
    with pytest.raises(ValueError, match="Invalid type"):
        opt.compute_gradients(tf.cast(w, tf.int32))
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)


def test_apply_gradients_with_hand_made_gradients() -> None:
    v = tf.Variable([1.0, 2.0])
    train = tf.train.GradientDescentOptimizer(0.5).apply_gradients([([2.0, 4.0], v)])
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(train)
        np.testing.assert_allclose(sess.run(v), [0.0, 0.0])


def test_update_of_an_uninitialized_slot_fails_with_failed_precondition() -> None:
    v = tf.Variable(1.0)
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(v * v)
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
            sess.run(train)


def test_linear_regression_recovers_its_weights() -> None:
    rng = np.random.default_rng(0)
    true_w, true_b = np.array([[2.0], [-3.0], [0.5]]), 1.5
    data = rng.normal(size=(200, 3))
    targets = data @ true_w + true_b
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(200):
            sess.run(train, {x: data, y: targets})
        got_w, got_b, final = sess.run([w, b, loss], {x: data, y: targets})
    np.testing.assert_allclose(got_w, true_w, atol=1e-3)
    assert abs(got_b - true_b) < 1e-3 and final < 1e-5


def test_two_layer_mlp_with_momentum_fits_a_separable_set() -> None:
    rng = np.random.default_rng(1)
    n = 300
    labels = rng.integers(0, 3, n)
    centers = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    data = (centers[labels] + rng.normal(scale=0.4, size=(n, 2))).astype(np.float32)
    tf.set_random_seed(3)
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.int64, [None])
    with tf.variable_scope("hidden"):
        h = tf.nn.relu(tf.matmul(x, tf.get_variable("w", [2, 16]))
                       + tf.get_variable("b", [16], initializer=tf.zeros_initializer()))
    with tf.variable_scope("out"):
        logits = tf.matmul(h, tf.get_variable("w", [16, 3])) + tf.get_variable(
            "b", [3], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                        logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    step = tf.train.get_or_create_global_step()
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(150):
            sess.run(train, {x: data, y: labels})
        acc, final_step = sess.run([accuracy, step], {x: data, y: labels})
    assert acc >= 0.99 and final_step == 150
