"""Gradients through ``cond`` (an ``If`` over gradient branches) and ``while_loop`` (more in
tests/test_while_grad.py), against analytic and numeric references, and a model trained
through a ``cond``."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine.graph.func_graph import FunctionDef
from tests.numeric import numeric_grad


def test_cond_gradient_follows_the_branch_taken_at_run_time() -> None:
    x = tw.placeholder(tw.float32, [])
    p = tw.placeholder(tw.bool, [])
    y = tw.cond(p, lambda: x * x, lambda: 3.0 * x)
    (g,) = tw.gradients(y, [x])
    assert g.op.type == "StatelessIf" and g.dtype == tw.float32
    assert isinstance(g.op.get_attr("then_branch"), FunctionDef)
    (gg,) = tw.gradients(g, [x])  # the gradient of the gradient If
    with tw.Session() as sess:
        for value in (4.0, -1.5):
            assert sess.run([g, gg], {x: value, p: True}) == [2 * value, 2.0]
            assert sess.run([g, gg], {x: value, p: False}) == [3.0, 0.0]


def test_cond_gradient_of_captures_with_several_outputs() -> None:
    a = tw.placeholder(tw.float32, [2])
    b = tw.placeholder(tw.float32, [2])
    n = tw.placeholder(tw.int32, [])
    p = tw.placeholder(tw.bool, [])
    # b is only used by the false branch; the int output carries no gradient
    s, k = tw.cond(p, lambda: (tw.reduce_sum(a * a), n + 1), lambda: (tw.reduce_sum(a * b), n))
    ga, gb, gn = tw.gradients(s + tw.cast(k, tw.float32), [a, b, n])
    assert gn is None
    av, bv = np.array([1.0, 2.0], np.float32), np.array([3.0, -4.0], np.float32)
    with tw.Session() as sess:
        got_t = sess.run([ga, gb], {a: av, b: bv, n: 1, p: True})
        got_f = sess.run([ga, gb], {a: av, b: bv, n: 1, p: False})
    np.testing.assert_array_equal(got_t[0], 2 * av)
    np.testing.assert_array_equal(got_t[1], np.zeros(2))  # untaken branch: zeros
    np.testing.assert_array_equal(got_f[0], bv)
    np.testing.assert_array_equal(got_f[1], av)


def test_gradient_through_nested_conds() -> None:
    x = tw.placeholder(tw.float64, [])
    p = tw.placeholder(tw.bool, [])
    q = tw.placeholder(tw.bool, [])
    y = tw.cond(p, lambda: tw.cond(q, lambda: tw.sin(x), lambda: x ** 3), lambda: tw.exp(x))
    (g,) = tw.gradients(y, [x])
    with tw.Session() as sess:
        v = 0.7
        assert sess.run(g, {x: v, p: True, q: True}) == pytest.approx(np.cos(v))
        assert sess.run(g, {x: v, p: True, q: False}) == pytest.approx(3 * v * v)
        assert sess.run(g, {x: v, p: False, q: True}) == pytest.approx(np.exp(v))


def test_training_a_model_whose_loss_goes_through_cond() -> None:
    rng = np.random.default_rng(0)
    xs_value = rng.standard_normal((32, 3)).astype(np.float32)
    true_w = np.array([[1.5], [-2.0], [0.5]], np.float32)
    ys_value = xs_value @ true_w
    xs = tw.placeholder(tw.float32, [None, 3])
    ys = tw.placeholder(tw.float32, [None, 1])
    robust = tw.placeholder(tw.bool, [])
    w = tw.Variable(np.zeros((3, 1), np.float32), name="w")
    err = tw.matmul(xs, w) - ys
    loss = tw.cond(robust, lambda: tw.reduce_mean(tw.abs(err)),
                   lambda: tw.reduce_mean(tw.square(err)))
    train = tw.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        first = sess.run(loss, {xs: xs_value, ys: ys_value, robust: False})
        for step in range(200):
            sess.run(train, {xs: xs_value, ys: ys_value, robust: step % 4 == 0})
        last = sess.run(loss, {xs: xs_value, ys: ys_value, robust: False})
        learned = sess.run(w)
    assert last < first * 1e-3
    np.testing.assert_allclose(learned, true_w, atol=0.05)


def test_while_gradient_of_a_power_loop() -> None:
    x = tw.placeholder(tw.float32, [])
    n = tw.placeholder(tw.int32, [])
    _, y = tw.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x), [0, tw.constant(1.0)])
    (g,) = tw.gradients(y, [x])
    with tw.Session() as sess:
        for steps in (0, 1, 4):
            got_y, got_g = sess.run([y, g], {x: 1.5, n: steps})
            assert got_y == pytest.approx(1.5 ** steps)
            assert got_g == pytest.approx(steps * 1.5 ** max(steps - 1, 0))


def test_while_gradient_of_an_rnn_matches_numeric_differences() -> None:
    rng = np.random.default_rng(1)
    w_value = (0.5 * rng.standard_normal((3, 3))).astype(np.float64)
    h_value = rng.standard_normal((2, 3))
    w = tw.placeholder(tw.float64, [3, 3])
    h0 = tw.placeholder(tw.float64, [2, 3])
    _, h = tw.while_loop(lambda k, h: k < 4, lambda k, h: (k + 1, tw.tanh(tw.matmul(h, w))),
                         [0, h0])
    gw, gh = tw.gradients(tw.reduce_sum(h * h), [w, h0])

    def forward(wv: np.ndarray, hv: np.ndarray) -> float:
        for _ in range(4):
            hv = np.tanh(hv @ wv)
        return float((hv * hv).sum())

    with tw.Session() as sess:
        got_w, got_h = sess.run([gw, gh], {w: w_value, h0: h_value})
    np.testing.assert_allclose(got_w, numeric_grad(lambda v: forward(v, h_value), w_value),
                               rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(got_h, numeric_grad(lambda v: forward(w_value, v), h_value),
                               rtol=1e-5, atol=1e-8)


def test_while_gradient_reaches_captured_tensors_and_conds_inside() -> None:
    x = tw.placeholder(tw.float32, [])
    scale = tw.placeholder(tw.float32, [])
    _, y = tw.while_loop(
        lambda i, y: i < 3,
        lambda i, y: (i + 1, tw.cond(i > 0, lambda: y * scale, lambda: y + x)),
        [0, x])
    gx, gs = tw.gradients(y, [x, scale])
    with tw.Session() as sess:
        got = sess.run([y, gx, gs], {x: 2.0, scale: 3.0})
    # y = (2x) * s * s
    assert got == [pytest.approx(36.0), pytest.approx(2 * 9.0), pytest.approx(2 * 2 * 2 * 3.0)]


def test_a_function_without_its_forward_graph_has_no_gradient() -> None:
    x = tw.placeholder(tw.float32, [])
    p = tw.placeholder(tw.bool, [])
    y = tw.cond(p, lambda: x * 2.0, lambda: x)
    wire = FunctionDef("remote", y.op.get_attr("then_branch").nodes)  # as decoded from the wire
    (z,) = tw.raw_ops.If(cond=p, input=list(y.op.inputs[1:]), Tin=[tw.float32],
                         Tout=[tw.float32], then_branch=wire, else_branch=wire)
    with pytest.raises(LookupError, match="No gradient defined for operation 'If'"):
        tw.gradients(z, [x])


def test_back_prop_false_stops_gradients() -> None:
    x = tw.placeholder(tw.float32, [])
    y = tw.while_loop(lambda y: y < 10.0, lambda y: y * x, [x], back_prop=False)
    assert tw.gradients(y, [x]) == [None]
