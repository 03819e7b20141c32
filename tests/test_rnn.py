"""`tw.nn.dynamic_rnn`, `static_rnn` and `bidirectional_dynamic_rnn`: dynamic against static and
against a numpy unrolling, sequence-length masking, time-major inputs, variable names,
gradients against finite differences, construction errors, and an LSTM trained with Adam as a
TF1 script would."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tests.rnn_support import evaluate, rnn_reference

rnn_cell = tw.nn.rnn_cell
B, T, D, H = 3, 4, 2, 3
RNG = np.random.RandomState(2)
X = RNG.randn(B, T, D).astype(np.float32)
LENGTHS = np.array([4, 2, 0], np.int32)


def test_dynamic_rnn_matches_numpy_with_sequence_length() -> None:
    outputs, state = tw.nn.dynamic_rnn(rnn_cell.BasicRNNCell(H), tw.constant(X),
                                       sequence_length=LENGTHS, dtype=tw.float32)
    assert outputs.shape.as_list() == [B, T, H] and state.shape.as_list() == [B, H]
    assert [v.name for v in tw.global_variables()] == ["rnn/basic_rnn_cell/kernel:0",
                                                       "rnn/basic_rnn_cell/bias:0"]
    (o, s), w = evaluate((outputs, state))
    ref_o, ref_s = rnn_reference(X, w["rnn/basic_rnn_cell/kernel"],
                                 w["rnn/basic_rnn_cell/bias"], LENGTHS)
    np.testing.assert_allclose(o, ref_o, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s, ref_s, rtol=1e-5, atol=1e-6)
    assert np.all(o[2] == 0) and np.all(s[2] == 0)  # a zero-length sequence keeps its state


def test_dynamic_equals_static_for_a_multi_layer_lstm() -> None:
    def cell() -> rnn_cell.MultiRNNCell:
        return rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(H), rnn_cell.BasicLSTMCell(H)])

    x = tw.constant(X)
    dyn_out, dyn_state = tw.nn.dynamic_rnn(cell(), x, sequence_length=LENGTHS,
                                           dtype=tw.float32, scope="dyn")
    st_out, st_state = tw.nn.static_rnn(cell(), tw.unstack(x, axis=1), dtype=tw.float32,
                                        sequence_length=LENGTHS, scope="st")
    assert len(st_out) == T
    names = [v.name[:-2] for v in tw.global_variables()]
    assert names[:2] == ["dyn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel",
                         "dyn/multi_rnn_cell/cell_0/basic_lstm_cell/bias"]
    assert len(names) == 8
    copy = tw.group(*[tw.assign(s, d) for d, s in zip(tw.global_variables()[:4],
                                                      tw.global_variables()[4:])])
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        sess.run(copy)
        d_o, d_s, s_o, s_s = sess.run([dyn_out, dyn_state, st_out, st_state])
    np.testing.assert_allclose(d_o, np.stack(s_o, 1), rtol=1e-5, atol=1e-6)
    for d, s in zip([d_s[0].c, d_s[0].h, d_s[1].c, d_s[1].h],
                    [s_s[0].c, s_s[0].h, s_s[1].c, s_s[1].h]):
        np.testing.assert_allclose(d, s, rtol=1e-5, atol=1e-6)


def test_time_major_and_initial_state() -> None:
    cell = rnn_cell.GRUCell(H)
    h0 = tw.constant(np.ones((B, H), np.float32))
    outputs, state = tw.nn.dynamic_rnn(cell, tw.constant(X.transpose(1, 0, 2)),
                                       initial_state=h0, time_major=True)
    assert outputs.shape.as_list() == [T, B, H]
    (o, s), _ = evaluate((outputs, state))
    np.testing.assert_array_equal(o[-1], s)


def test_bidirectional_dynamic_rnn_reverses_within_lengths() -> None:
    x = tw.constant(X)
    (fw, bw), (s_fw, s_bw) = tw.nn.bidirectional_dynamic_rnn(
        rnn_cell.BasicRNNCell(H), rnn_cell.BasicRNNCell(H), x, sequence_length=LENGTHS,
        dtype=tw.float32)
    names = [v.name[:-2] for v in tw.global_variables()]
    assert names == ["bidirectional_rnn/fw/basic_rnn_cell/kernel",
                     "bidirectional_rnn/fw/basic_rnn_cell/bias",
                     "bidirectional_rnn/bw/basic_rnn_cell/kernel",
                     "bidirectional_rnn/bw/basic_rnn_cell/bias"]
    (f, b, sb), w = evaluate((fw, bw, s_bw))
    reversed_x = X.copy()
    for i, n in enumerate(LENGTHS):
        reversed_x[i, :n] = X[i, :n][::-1]
    ref_b, ref_sb = rnn_reference(reversed_x, w[names[2]], w[names[3]], LENGTHS)
    for i, n in enumerate(LENGTHS):
        ref_b[i, :n] = ref_b[i, :n][::-1]
    np.testing.assert_allclose(b, ref_b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sb, ref_sb, rtol=1e-5, atol=1e-6)
    assert f.shape == (B, T, H)


def test_gradients_match_finite_differences() -> None:
    x0 = RNG.randn(2, 3, 2)
    x = tw.placeholder(tw.float64, [2, 3, 2])
    cell = rnn_cell.BasicLSTMCell(2, dtype=tw.float64)
    outputs, state = tw.nn.dynamic_rnn(cell, x, sequence_length=[3, 2], dtype=tw.float64)
    loss = tw.reduce_sum(tw.square(outputs)) + tw.reduce_sum(state.c)
    kernel = tw.trainable_variables()[0]
    gx, gk = tw.gradients(loss, [x, kernel])
    eps = 1e-6
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        k0 = sess.run(kernel)
        got_x, got_k = sess.run([gx, gk], {x: x0})

        def f(xv: np.ndarray, kv: np.ndarray) -> float:
            return sess.run(loss, {x: xv, kernel: kv})

        for index in [(0, 0, 0), (0, 2, 1), (1, 1, 0)]:
            d = np.zeros_like(x0)
            d[index] = eps
            num = (f(x0 + d, k0) - f(x0 - d, k0)) / (2 * eps)
            assert got_x[index] == pytest.approx(num, rel=1e-5, abs=1e-8)
        assert np.all(got_x[1, 2] == 0)  # past the second sequence's length
        for index in [(0, 0), (3, 5), (1, 7)]:
            d = np.zeros_like(k0)
            d[index] = eps
            num = (f(x0, k0 + d) - f(x0, k0 - d)) / (2 * eps)
            assert got_k[index] == pytest.approx(num, rel=1e-5, abs=1e-8)


def test_construction_errors() -> None:
    cell = rnn_cell.GRUCell(2)
    with pytest.raises(ValueError, match="must give a dtype"):
        tw.nn.dynamic_rnn(cell, tw.constant(X))
    with pytest.raises(ValueError, match="sequence_length must be a vector"):
        tw.nn.dynamic_rnn(cell, tw.constant(X), sequence_length=[[1]], dtype=tw.float32)
    with pytest.raises(TypeError, match="is not an RNNCell"):
        tw.nn.dynamic_rnn("gru", tw.constant(X), dtype=tw.float32)
    with pytest.raises(TypeError, match="inputs must be a sequence"):
        tw.nn.static_rnn(cell, tw.constant(X), dtype=tw.float32)
    with pytest.raises(ValueError, match="inputs must not be empty"):
        tw.nn.static_rnn(cell, [], dtype=tw.float32)


def test_tf1_script_trains_an_lstm_classifier() -> None:
    """Is the sum of a short sequence positive? An LSTM over it, Adam, a few dozen steps."""
    tw.set_random_seed(0)  # the initial weights, hence the first loss, are the same every run
    rng = np.random.RandomState(0)
    seqs = rng.randn(64, 5, 1).astype(np.float32)
    labels = (seqs.sum(axis=(1, 2)) > 0).astype(np.int32)

    x = tw.placeholder(tw.float32, [None, 5, 1], name="x")
    y = tw.placeholder(tw.int32, [None], name="y")
    cell = tw.nn.rnn_cell.BasicLSTMCell(8)
    _, state = tw.nn.dynamic_rnn(cell, x, dtype=tw.float32)
    logits = tw.layers.dense(state.h, 2)
    loss = tw.reduce_mean(tw.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    train_op = tw.train.AdamOptimizer(0.05).minimize(loss)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        feed = {x: seqs, y: labels}
        first = sess.run(loss, feed)
        for _ in range(40):
            sess.run(train_op, feed)
        last = sess.run(loss, feed)
    assert first > 0.6 and last < 0.1 * first
