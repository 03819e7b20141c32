"""`tw.GradientTape` in graph mode: recorded ops, watched sources, persistence."""

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
