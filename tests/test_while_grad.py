"""The ``While`` gradient: against numeric differences (shapes that vary across iterations,
unknown ranks, nested loops, several dtypes recorded), the number of body runs it costs (one
per iteration: the forward loop records), stateful bodies (an assign, a random op), two
gradients of one loop, and what it records."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.plugins.standard_ops import while_grad
from tests.numeric import numeric_grad


def test_the_body_runs_once_per_iteration_whatever_the_length() -> None:
    x = tw.placeholder(tw.float64, [])
    n = tw.placeholder(tw.int32, [])
    runs = tw.Variable(0, name="runs")

    def body(i: tw.Tensor, y: tw.Tensor) -> tuple[tw.Tensor, tw.Tensor]:
        with tw.control_dependencies([tw.assign_add(runs, 1)]):
            return i + 1, tw.sin(y) * x

    _, y = tw.while_loop(lambda i, y: i < n, body, [0, tw.constant(0.5, tw.float64)])
    (g,) = tw.gradients(y, [x])
    with tw.Session() as sess:
        for steps in (0, 3, 12):
            sess.run(runs.initializer)
            _, got = sess.run([y, g], {x: 1.3, n: steps})
            # the forward loop records what the backward loop needs; that one runs no body
            assert sess.run(runs) == steps

            def f(xv: float, steps: int = steps) -> float:
                yv = 0.5
                for _ in range(steps):
                    yv = np.sin(yv) * xv
                return yv

            assert got == pytest.approx(numeric_grad(f, np.float64(1.3)), rel=1e-6, abs=1e-9)


def test_loop_variables_whose_shape_grows() -> None:
    w = tw.placeholder(tw.float64, [])
    x0 = tw.placeholder(tw.float64, [2])
    _, x = tw.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, tw.concat([x, tw.sin(x) * w], 0)),
                         [0, x0], shape_invariants=[tw.TensorShape([]), tw.TensorShape([None])])
    loss = tw.reduce_sum(x * tw.cast(tw.range(1, tw.size(x) + 1), tw.float64))
    gw, gx = tw.gradients(loss, [w, x0])
    w_value, x_value = 0.8, np.array([0.3, -1.1])

    def f(wv: float, xv: np.ndarray) -> float:
        for _ in range(3):
            xv = np.concatenate([xv, np.sin(xv) * wv])
        return float((xv * np.arange(1, xv.size + 1)).sum())

    with tw.Session() as sess:
        got_w, got_x = sess.run([gw, gx], {w: w_value, x0: x_value})
    assert got_x.shape == (2,)
    assert got_w == pytest.approx(numeric_grad(lambda v: f(v, x_value), np.float64(w_value)))
    np.testing.assert_allclose(got_x, numeric_grad(lambda v: f(w_value, v), x_value), rtol=1e-6)


def test_a_loop_variable_of_unknown_rank() -> None:
    x0 = tw.placeholder(tw.float32)  # no static shape at all
    s = tw.placeholder(tw.float32, [])
    _, y = tw.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, tw.tanh(y * s) + y),
                         [0, x0], shape_invariants=[tw.TensorShape([]), tw.TensorShape(None)])
    gx, gs = tw.gradients(tw.reduce_sum(y), [x0, s])
    x_value = np.array([[0.1, -0.4, 0.9]], np.float64)

    def f(xv: np.ndarray, sv: float) -> float:
        for _ in range(4):
            xv = np.tanh(xv * sv) + xv
        return float(xv.sum())

    with tw.Session() as sess:
        got_x, got_s = sess.run([gx, gs], {x0: x_value, s: 0.7})
    assert got_x.shape == (1, 3) and got_x.dtype == np.float32
    np.testing.assert_allclose(got_x, numeric_grad(lambda v: f(v, 0.7), x_value), rtol=1e-4)
    assert got_s == pytest.approx(numeric_grad(lambda v: f(x_value, v), np.float64(0.7)),
                                  rel=1e-4)


def test_nested_loops_and_a_gather_by_the_loop_counter() -> None:
    table = tw.placeholder(tw.float64, [3, 2])
    h0 = tw.placeholder(tw.float64, [2])

    def inner(h: tw.Tensor, row: tw.Tensor) -> tw.Tensor:
        _, h = tw.while_loop(lambda j, h: j < 2, lambda j, h: (j + 1, tw.sin(h * row) + h),
                             [0, h])
        return h

    _, h = tw.while_loop(lambda i, h: i < 3,
                         lambda i, h: (i + 1, inner(h, tw.gather(table, i))), [0, h0])
    gt, gh = tw.gradients(tw.reduce_sum(h * h), [table, h0])
    t_value = np.array([[0.5, -0.2], [1.1, 0.4], [-0.7, 0.9]])
    h_value = np.array([0.3, -0.6])

    def f(tv: np.ndarray, hv: np.ndarray) -> float:
        for i in range(3):
            for _ in range(2):
                hv = np.sin(hv * tv[i]) + hv
        return float((hv * hv).sum())

    with tw.Session() as sess:
        got_t, got_h = sess.run([gt, gh], {table: t_value, h0: h_value})
    np.testing.assert_allclose(got_t, numeric_grad(lambda v: f(v, h_value), t_value), rtol=1e-6)
    np.testing.assert_allclose(got_h, numeric_grad(lambda v: f(t_value, v), h_value), rtol=1e-6)


def test_a_tensor_array_buffer_is_not_recorded() -> None:
    inputs = tw.placeholder(tw.float32, [5, 4, 3])
    cell = tw.nn.rnn_cell.BasicRNNCell(3)
    outputs, _ = tw.nn.dynamic_rnn(cell, inputs, dtype=tw.float32, time_major=True)
    loop = next(op for op in tw.get_default_graph().get_operations()
                if op.type in ("While", "StatelessWhile"))
    wrt = [i for i, t in enumerate(loop.inputs) if t.dtype.is_floating]
    shapes = [t.shape for t in loop.outputs]
    with tw.get_default_graph().as_default():
        step = while_grad._build_step(loop, wrt, shapes,
                                      {i: (loop.inputs[i].dtype, shapes[i]) for i in wrt},
                                      while_grad._passed_through(loop.get_attr("body")))
    # per iteration: activations, the write mask and an index, never a [time, ...] buffer
    assert step.recorded
    assert not any(t.shape.is_compatible_with([5, 4, 3]) for t in step.recorded)
    assert {t.op.type for t in step.recorded} >= {"Tanh", "ConcatV2"}
    # and the gradient is right: against the unrolled RNN
    (g,) = tw.gradients(tw.reduce_sum(tw.square(outputs)), [inputs])
    x_value = np.random.default_rng(0).standard_normal((5, 4, 3)).astype(np.float32)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        kernel, bias = sess.run(tw.trainable_variables())
        got = sess.run(g, {inputs: x_value})

    def f(xv: np.ndarray) -> float:
        h = np.zeros((4, 3))
        total = 0.0
        for t in range(5):
            h = np.tanh(np.concatenate([xv[t], h], 1) @ kernel + bias)
            total += float((h * h).sum())
        return total

    np.testing.assert_allclose(got, numeric_grad(f, x_value.astype(np.float64), 1e-4),
                               rtol=2e-3, atol=2e-4)


def test_an_assign_in_the_body_runs_as_often_as_the_loop_iterates() -> None:
    # TF: the counter reads 3 after a run fetching the loop and its gradient
    x = tw.constant(2.0)
    counter = tw.Variable(0, use_resource=True, name="counter")

    def body(i: tw.Tensor, a: tw.Tensor) -> tuple[tw.Tensor, tw.Tensor]:
        with tw.control_dependencies([counter.assign_add(1)]):
            return i + 1, a * x

    out = tw.while_loop(lambda i, a: i < 3, body, [0, tw.constant(1.0)])[1]
    (g,) = tw.gradients(out, [x])
    with tw.Session() as sess:
        sess.run(counter.initializer)
        assert sess.run([out, g]) == [8.0, 12.0]
        assert sess.run(counter) == 3
        assert sess.run(g) == 12.0  # the gradient alone runs the loop once too
        assert sess.run(counter) == 6


def test_a_random_body_gets_the_gradient_of_the_values_it_drew() -> None:
    # out = prod_t (a * u_t): d out / d a = 4 out / a for the u_t the forward loop drew
    a = tw.placeholder(tw.float64, [])

    def body(i: tw.Tensor, y: tw.Tensor, us: tw.Tensor) -> tuple[tw.Tensor, ...]:
        u = tw.random_uniform([], 0.5, 1.5, dtype=tw.float64)
        return i + 1, y * a * u, tw.concat([us, tw.reshape(u, [1])], 0)

    _, out, us = tw.while_loop(lambda i, y, us: i < 4, body,
                               [0, tw.constant(1.0, tw.float64), tw.zeros([0], tw.float64)],
                               shape_invariants=[tw.TensorShape([]), tw.TensorShape([]),
                                                 tw.TensorShape([None])])
    (g,) = tw.gradients(out, [a])
    with tw.Session() as sess:
        for _ in range(3):
            out_v, us_v, g_v = sess.run([out, us, g], {a: 1.1})
            assert out_v == pytest.approx(np.prod(1.1 * us_v))
            assert g_v == pytest.approx(4 * out_v / 1.1)


def test_a_loop_differentiated_twice_is_rewritten_once() -> None:
    x = tw.placeholder(tw.float64, [])
    runs = tw.Variable(0, name="runs")

    def body(i: tw.Tensor, y: tw.Tensor) -> tuple[tw.Tensor, tw.Tensor]:
        with tw.control_dependencies([tw.assign_add(runs, 1)]):
            return i + 1, tw.sin(y) * x

    _, y = tw.while_loop(lambda i, y: i < 5, body, [0, tw.constant(0.5, tw.float64)])
    (g1,) = tw.gradients(y, [x])
    loop = y.op
    outputs = len(loop.outputs)
    (g2,) = tw.gradients(y * y, [x])
    assert len(loop.outputs) == outputs  # the second gradient reads the same records

    def f(xv: float) -> float:
        yv = 0.5
        for _ in range(5):
            yv = np.sin(yv) * xv
        return yv

    with tw.Session() as sess:
        sess.run(runs.initializer)
        y_v, g1_v, g2_v = sess.run([y, g1, g2], {x: 1.2})
        assert sess.run(runs) == 5
    want = numeric_grad(f, np.float64(1.2))
    assert g1_v == pytest.approx(want, rel=1e-6)
    assert g2_v == pytest.approx(2 * y_v * want, rel=1e-6)


def test_nested_loops_with_an_assign_run_each_inner_body_once() -> None:
    x = tw.placeholder(tw.float64, [])
    runs = tw.Variable(0, name="inner_runs")

    def inner(j: tw.Tensor, z: tw.Tensor) -> tuple[tw.Tensor, tw.Tensor]:
        with tw.control_dependencies([tw.assign_add(runs, 1)]):
            return j + 1, tw.sin(z) * x

    def outer(i: tw.Tensor, y: tw.Tensor) -> tuple[tw.Tensor, tw.Tensor]:
        return i + 1, tw.while_loop(lambda j, z: j < 3, inner, [0, y])[1] + x

    _, y = tw.while_loop(lambda i, y: i < 2, outer, [0, tw.constant(0.3, tw.float64)])
    (g,) = tw.gradients(y, [x])

    def f(xv: float) -> float:
        yv = 0.3
        for _ in range(2):
            for _ in range(3):
                yv = np.sin(yv) * xv
            yv += xv
        return yv

    with tw.Session() as sess:
        sess.run(runs.initializer)
        y_v, g_v = sess.run([y, g], {x: 0.9})
        assert sess.run(runs) == 6
    assert y_v == pytest.approx(f(0.9))
    assert g_v == pytest.approx(numeric_grad(f, np.float64(0.9)), rel=1e-6)


def test_recording_copies_no_element_per_push() -> None:
    # each iteration pushes its records onto lists (O(1), no buffer copied): the rewritten
    # body holds TensorListPushBack ops and no ConcatV2 of its own
    x = tw.placeholder(tw.float64, [])
    _, y = tw.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, tw.sin(y) * x),
                         [0, tw.constant(0.5, tw.float64)])
    tw.gradients(y, [x])
    body = y.op.get_attr("body")
    ops = [n.op for n in body.nodes]
    assert "TensorListPushBack" in ops and "ConcatV2" not in ops
    assert [t.dtype for t in y.op.outputs[2:]] == [tw.float64, tw.int32] + \
        [tw.variant] * ops.count("TensorListPushBack")
