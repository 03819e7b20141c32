"""`tw.nn.rnn_cell`: each cell's step against the TF1 equations in numpy (with the weights read
back from the session), variable names, initializers and reuse, zero states, the wrappers and
construction errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw

rnn_cell = tw.nn.rnn_cell
B, D, H = 2, 3, 4
RNG = np.random.RandomState(1)
X = RNG.randn(B, D).astype(np.float32)
C0 = RNG.randn(B, H).astype(np.float32)
H0 = RNG.randn(B, H).astype(np.float32)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def evaluate(fetches: object) -> tuple[object, dict[str, np.ndarray]]:
    """`fetches` and every global variable (by name without ``:0``) after initialization."""
    variables = tw.global_variables()
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        out, values = sess.run([fetches, variables])
    return out, {v.name[:-2]: value for v, value in zip(variables, values)}


def test_basic_rnn_cell() -> None:
    cell = rnn_cell.BasicRNNCell(H)
    assert cell.state_size == H and cell.output_size == H
    out, state = cell(tw.constant(X), tw.constant(H0))
    (o, s), w = evaluate((out, state))
    assert sorted(w) == ["basic_rnn_cell/bias", "basic_rnn_cell/kernel"]
    assert w["basic_rnn_cell/kernel"].shape == (D + H, H)
    np.testing.assert_array_equal(w["basic_rnn_cell/bias"], np.zeros(H))
    expected = np.tanh(np.concatenate([X, H0], 1) @ w["basic_rnn_cell/kernel"])
    np.testing.assert_allclose(o, expected, rtol=1e-5)
    np.testing.assert_array_equal(o, s)


def lstm_reference(w: np.ndarray, b: np.ndarray, c: np.ndarray, h: np.ndarray,
                   forget_bias: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    i, j, f, o = np.split(np.concatenate([X, h], 1) @ w + b, 4, axis=1)
    new_c = c * sigmoid(f + forget_bias) + sigmoid(i) * np.tanh(j)
    return new_c, np.tanh(new_c) * sigmoid(o)


def test_basic_lstm_cell_tuple_state_and_reuse() -> None:
    cell = rnn_cell.BasicLSTMCell(H, forget_bias=0.5)
    assert cell.state_size == rnn_cell.LSTMStateTuple(H, H)
    state = rnn_cell.LSTMStateTuple(tw.constant(C0), tw.constant(H0))
    out, new = cell(tw.constant(X), state)
    out2, _ = cell(tw.constant(X), new)  # the second call reuses the weights
    assert isinstance(new, rnn_cell.LSTMStateTuple)
    assert [v.name for v in tw.trainable_variables()] == ["basic_lstm_cell/kernel:0",
                                                          "basic_lstm_cell/bias:0"]
    (o, c, h, o2), w = evaluate((out, new.c, new.h, out2))
    kernel, bias = w["basic_lstm_cell/kernel"], w["basic_lstm_cell/bias"]
    assert kernel.shape == (D + H, 4 * H)
    ref_c, ref_h = lstm_reference(kernel, bias, C0, H0, 0.5)
    np.testing.assert_allclose(c, ref_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, ref_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(o, h)
    np.testing.assert_allclose(o2, lstm_reference(kernel, bias, ref_c, ref_h, 0.5)[1],
                               rtol=1e-5, atol=1e-6)


def test_basic_lstm_cell_concatenated_state() -> None:
    cell = rnn_cell.BasicLSTMCell(H, state_is_tuple=False)
    assert cell.state_size == 2 * H
    out, new = cell(tw.constant(X), tw.constant(np.concatenate([C0, H0], 1)))
    assert new.shape.as_list() == [B, 2 * H]
    (o, s), w = evaluate((out, new))
    ref_c, ref_h = lstm_reference(w["basic_lstm_cell/kernel"], w["basic_lstm_cell/bias"], C0,
                                  H0)
    np.testing.assert_allclose(s, np.concatenate([ref_c, ref_h], 1), rtol=1e-5, atol=1e-6)


def test_lstm_cell_peepholes_clip_and_projection() -> None:
    cell = rnn_cell.LSTMCell(H, use_peepholes=True, cell_clip=0.3, num_proj=2, proj_clip=0.1)
    assert cell.state_size == (H, 2) and cell.output_size == 2
    h0 = H0[:, :2]
    out, new = cell(tw.constant(X), rnn_cell.LSTMStateTuple(tw.constant(C0), tw.constant(h0)))
    (o, c), w = evaluate((out, new.c))
    assert sorted(w) == ["lstm_cell/bias", "lstm_cell/kernel", "lstm_cell/projection/kernel",
                         "lstm_cell/w_f_diag", "lstm_cell/w_i_diag", "lstm_cell/w_o_diag"]
    i, j, f, og = np.split(np.concatenate([X, h0], 1) @ w["lstm_cell/kernel"]
                           + w["lstm_cell/bias"], 4, axis=1)
    ref_c = (sigmoid(f + 1.0 + w["lstm_cell/w_f_diag"] * C0) * C0
             + sigmoid(i + w["lstm_cell/w_i_diag"] * C0) * np.tanh(j))
    ref_c = np.clip(ref_c, -0.3, 0.3)
    m = sigmoid(og + w["lstm_cell/w_o_diag"] * ref_c) * np.tanh(ref_c)
    ref_m = np.clip(m @ w["lstm_cell/projection/kernel"], -0.1, 0.1)
    np.testing.assert_allclose(c, ref_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o, ref_m, rtol=1e-5, atol=1e-6)


def test_gru_cell_names_initializers_and_math() -> None:
    cell = rnn_cell.GRUCell(H)
    out, new = cell(tw.constant(X), tw.constant(H0))
    (o, s), w = evaluate((out, new))
    assert sorted(w) == ["gru_cell/candidate/bias", "gru_cell/candidate/kernel",
                         "gru_cell/gates/bias", "gru_cell/gates/kernel"]
    np.testing.assert_array_equal(w["gru_cell/gates/bias"], np.ones(2 * H))
    np.testing.assert_array_equal(w["gru_cell/candidate/bias"], np.zeros(H))
    value = sigmoid(np.concatenate([X, H0], 1) @ w["gru_cell/gates/kernel"] + 1.0)
    r, u = np.split(value, 2, axis=1)
    cand = np.tanh(np.concatenate([X, r * H0], 1) @ w["gru_cell/candidate/kernel"])
    np.testing.assert_allclose(o, u * H0 + (1 - u) * cand, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(o, s)


def test_multi_rnn_cell_scopes_and_zero_state() -> None:
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(H), rnn_cell.GRUCell(3)])
    assert cell.output_size == 3
    zero = cell.zero_state(B, tw.float32)
    assert isinstance(zero[0], rnn_cell.LSTMStateTuple)
    assert zero[0].c.shape.as_list() == [B, H] and zero[1].shape.as_list() == [B, 3]
    with tw.variable_scope("rnn"):
        out, new = cell(tw.constant(X), zero)
    assert [v.name[:-2] for v in tw.trainable_variables()] == [
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel",
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias",
        "rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel",
        "rnn/multi_rnn_cell/cell_1/gru_cell/gates/bias",
        "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/kernel",
        "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/bias"]
    (o, z), _ = evaluate((out, zero))
    assert o.shape == (B, 3) and np.all(z[0].c == 0)


def test_cells_of_the_same_class_get_unique_scopes_and_explicit_scope_is_used() -> None:
    a, b = rnn_cell.BasicRNNCell(H), rnn_cell.BasicRNNCell(H)
    a(tw.constant(X), tw.constant(H0))
    b(tw.constant(X), tw.constant(H0))
    rnn_cell.BasicRNNCell(H)(tw.constant(X), tw.constant(H0), scope="mine")
    assert [v.name for v in tw.trainable_variables()][::2] == [
        "basic_rnn_cell/kernel:0", "basic_rnn_cell_1/kernel:0", "mine/kernel:0"]


def test_dropout_and_residual_wrappers() -> None:
    base = rnn_cell.BasicRNNCell(D)
    cell = rnn_cell.ResidualWrapper(rnn_cell.DropoutWrapper(base, input_keep_prob=1.0,
                                                            output_keep_prob=1.0))
    assert cell.state_size == D and cell.output_size == D
    out, new = cell(tw.constant(X), tw.constant(X))
    assert [v.name for v in tw.trainable_variables()] == ["basic_rnn_cell/kernel:0",
                                                          "basic_rnn_cell/bias:0"]
    (o, s), _ = evaluate((out, new))
    np.testing.assert_allclose(o, s + X, rtol=1e-6)

    dropped = rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(50, name="wide"),
                                      output_keep_prob=0.5, seed=3)
    out, new = dropped(tw.ones([8, D]), tw.ones([8, 50]))
    (o, s), _ = evaluate((out, new))
    zeroed = o == 0
    assert 0.2 < zeroed.mean() < 0.8  # about half dropped
    np.testing.assert_allclose(o[~zeroed], 2 * s[~zeroed], rtol=1e-6)


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="at least one cell"):
        rnn_cell.MultiRNNCell([])
    with pytest.raises(ValueError, match="between 0 and 1"):
        rnn_cell.DropoutWrapper(rnn_cell.GRUCell(2), output_keep_prob=1.5)
    with pytest.raises(TypeError, match="not a RNNCell"):
        rnn_cell.ResidualWrapper("lstm")
    cell = rnn_cell.GRUCell(2)
    with pytest.raises(ValueError, match="inputs.shape\\[-1\\] to be known"):
        cell(tw.placeholder(tw.float32, [None, None]), tw.zeros([1, 2]))
