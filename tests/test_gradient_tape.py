"""`tw.GradientTape` in graph mode: recorded ops, watched sources, persistence, jacobians."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw


def run(fetches, feed_dict=None):
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def test_gradient_of_a_watched_tensor():
    # backprop_test.testGradientTape*: watch a constant, differentiate a product.
    x = tw.constant(3.0)
    with tw.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert run(tape.gradient(y, x)) == 6.0


def test_trainable_variables_are_watched_and_structures_are_kept():
    v = tw.Variable(2.0)
    frozen = tw.Variable(5.0, trainable=False)
    x = tw.constant(3.0)
    with tw.GradientTape(persistent=True) as tape:
        tape.watch(x)
        z = v * v * x + frozen
    assert tape.watched_variables() == (v,)
    grads = tape.gradient({"z": z}, {"v": v, "pair": [x, frozen]})
    assert grads["pair"][1] is None  # not trainable, not watched
    got = run({"v": grads["v"], "x": grads["pair"][0]})
    assert got == {"v": 12.0, "x": 4.0}
    zero = tape.gradient(z, frozen, unconnected_gradients=tw.UnconnectedGradients.ZERO)
    assert run(zero) == 0.0


def test_only_recorded_ops_carry_gradients():
    x = tw.constant(3.0)
    before = x * 2.0  # built before the tape: its dependence on x is not recorded
    with tw.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = before * x
        with tape.stop_recording():
            w = x * 10.0
        q = w * x
    dy, dq = run([tape.gradient(y, x), tape.gradient(q, x)])
    assert (dy, dq) == (6.0, 30.0)
    assert tape.gradient(y, before) is None  # never watched


def test_output_gradients_weight_the_target():
    x = tw.constant([1.0, 2.0])
    with tw.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    grad = tape.gradient(y, x, output_gradients=tw.constant([10.0, 1.0]))
    np.testing.assert_allclose(run(grad), [20.0, 4.0])


def test_a_non_persistent_tape_gives_one_gradient():
    x = tw.constant(1.0)
    with tw.GradientTape() as tape:
        tape.watch(x)
        y = x + x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="only be called once on non-persistent"):
        tape.gradient(y, x)
    with pytest.raises(ValueError, match="not tf.Tensor"):
        tw.GradientTape().watch("x")


# -- jacobian and batch_jacobian (backprop_test: testJacobian*, testBatchJacobian*) -------------


def test_jacobian_of_each_source_has_the_target_shape_then_the_source_shape():
    x = tw.constant([[1.0, 2.0], [3.0, 4.0]])
    w = tw.Variable([[2.0, 0.5], [1.0, -1.0]])
    with tw.GradientTape() as tape:
        tape.watch(x)
        y = tw.matmul(x, w) * x
    jx, jw = tape.jacobian(y, {"x": x, "w": w}).values()
    assert jx.shape == tw.TensorShape([2, 2, 2, 2]) and jw.shape == jx.shape
    got_x, got_w = run([jx, jw])
    xv, wv = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[2.0, 0.5], [1.0, -1.0]])
    want_x, want_w = np.zeros((2, 2, 2, 2)), np.zeros((2, 2, 2, 2))
    for i in range(2):  # y[i, j] = x[i, j] * sum_k x[i, k] w[k, j]
        for j in range(2):
            for k in range(2):
                want_x[i, j, i, k] += xv[i, j] * wv[k, j]
                want_w[i, j, k, j] += xv[i, j] * xv[i, k]
            want_x[i, j, i, j] += xv[i] @ wv[:, j]
    np.testing.assert_allclose(got_x, want_x)
    np.testing.assert_allclose(got_w, want_w)


def test_jacobian_of_a_target_whose_size_is_known_at_run_time_only():
    p = tw.placeholder(tw.float32, None)
    with tw.GradientTape(persistent=True) as tape:
        tape.watch(p)
        y = tw.nn.softmax(p * 3.0)
    jac = tape.jacobian(y, p, parallel_iterations=4, experimental_use_pfor=False)
    value = [[0.1, 0.3], [1.0, -1.0], [0.5, 0.5]]
    got = run(jac, {p: value})
    s = np.exp(3.0 * np.array(value))
    s /= s.sum(axis=1, keepdims=True)
    want = np.zeros((3, 2, 3, 2))
    for r in range(3):
        want[r, :, r, :] = 3.0 * (np.diag(s[r]) - np.outer(s[r], s[r]))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_the_jacobian_graph_does_not_grow_with_the_target():
    def ops_added(n):
        tw.reset_default_graph()
        x = tw.constant(np.arange(n, dtype=np.float32))
        with tw.GradientTape() as tape:
            tape.watch(x)
            y = tw.sin(x) * x
        before = len(tw.get_default_graph().get_operations())
        jac = tape.jacobian(y, x)
        added = len(tw.get_default_graph().get_operations()) - before
        np.testing.assert_allclose(run(jac), np.diag(np.cos(np.arange(n)) * np.arange(n)
                                                     + np.sin(np.arange(n))), rtol=1e-5,
                                   atol=1e-6)
        return added

    assert ops_added(3) == ops_added(40)


def test_jacobian_of_unconnected_sources_and_sparse_gradients():
    x = tw.constant([1.0, 2.0, 3.0])
    u = tw.constant([[5.0]])
    with tw.GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        picked = tw.gather(x, [2, 0])  # an IndexedSlices gradient, made dense
    assert tape.jacobian(picked, [x, u])[1] is None
    jx, ju = tape.jacobian(picked, [x, u], unconnected_gradients="zero")
    assert ju.shape == tw.TensorShape([2, 1, 1])
    got_x, got_u = run([jx, ju])
    np.testing.assert_array_equal(got_x, [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(got_u, np.zeros((2, 1, 1)))


def test_a_non_persistent_tape_gives_one_jacobian():
    x = tw.constant([1.0, 2.0])
    with tw.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_array_equal(run(tape.jacobian(y, x)), [[2.0, 0.0], [0.0, 4.0]])
    with pytest.raises(RuntimeError, match="can only be used to compute one set of gradients"):
        tape.jacobian(y, x)


def test_batch_jacobian_stacks_the_per_row_jacobians():
    x = tw.placeholder(tw.float32, [None, 2])
    wv = np.array([[1.0, 2.0, 0.0], [-1.0, 0.5, 3.0]], np.float32)
    with tw.GradientTape() as tape:
        tape.watch(x)
        y = tw.tanh(tw.matmul(x, wv))
    jac = tape.batch_jacobian(y, x)
    assert jac.shape.as_list() == [None, 3, 2]
    xv = np.array([[0.1, 0.2], [0.3, -0.4], [1.0, 0.0]], np.float32)
    h = np.tanh(xv @ wv)
    want = (1 - h ** 2)[:, :, None] * wv.T[None]
    np.testing.assert_allclose(run(jac, {x: xv}), want, rtol=1e-5)
    with pytest.raises(tw.errors.InvalidArgumentError):  # TF's assertion on the batch sizes
        z = tw.placeholder(tw.float32, [None, 2])
        with tw.GradientTape() as other:
            other.watch(z)
            skewed = z[1:] * 2.0
        run(other.batch_jacobian(skewed, z), {z: xv})


def test_batch_jacobian_checks_ranks_and_batch_sizes_and_gives_zeros_if_unconnected():
    a, b = tw.ones([2, 3]), tw.ones([3, 3])
    with tw.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = a * 2.0
        flat = tw.reduce_sum(a, axis=1)
    with pytest.raises(ValueError, match=r"Shape \(2,\) must have rank at least 2"):
        tape.batch_jacobian(flat, a)
    with pytest.raises(ValueError, match=r"Need first dimension of target shape \(\(2, 3\)\) "
                                         r"and source shape \(\(3, 3\)\) to match"):
        tape.batch_jacobian(y, b)
    unconnected = tape.batch_jacobian(y, tw.ones([2, 2]))
    assert unconnected.shape == tw.TensorShape([2, 3, 2])
    np.testing.assert_array_equal(run(unconnected), np.zeros((2, 3, 2)))
    np.testing.assert_array_equal(run(tape.batch_jacobian(y, a)),
                                  np.broadcast_to(2.0 * np.eye(3), (2, 3, 3)))
