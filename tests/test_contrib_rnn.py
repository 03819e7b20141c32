"""`tw.contrib.rnn`: the contrib names of the cells, `LSTMBlockCell` against a numpy LSTM,
`static_bidirectional_rnn` and the stacked bidirectional RNNs against a numpy unrolling with
sequence lengths, their variable names and their construction errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tests.rnn_support import evaluate, rnn_reference

B, T, D, H = 3, 4, 2, 3
RNG = np.random.RandomState(5)
X = RNG.randn(B, T, D).astype(np.float32)
LENGTHS = np.array([4, 2, 1], np.int32)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def reverse_within(x: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    out = x.copy()
    for b, n in enumerate(lengths):
        out[b, :n] = x[b, :n][::-1]
    return out


def birnn_reference(x: np.ndarray, values: dict[str, np.ndarray], prefix: str,
                    lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    fw, state_fw = rnn_reference(x, values[f"{prefix}/fw/basic_rnn_cell/kernel"],
                                 values[f"{prefix}/fw/basic_rnn_cell/bias"], lengths)
    bw, state_bw = rnn_reference(reverse_within(x, lengths),
                                 values[f"{prefix}/bw/basic_rnn_cell/kernel"],
                                 values[f"{prefix}/bw/basic_rnn_cell/bias"], lengths)
    return np.concatenate([fw, reverse_within(bw, lengths)], 2), state_fw, state_bw


def test_contrib_rnn_is_reachable_and_reuses_the_core_cells() -> None:
    rnn = tw.contrib.rnn
    assert rnn.BasicLSTMCell is tw.nn.rnn_cell.BasicLSTMCell
    assert rnn.MultiRNNCell is tw.nn.rnn_cell.MultiRNNCell
    assert rnn.DropoutWrapper is tw.nn.rnn_cell.DropoutWrapper
    assert rnn.LSTMStateTuple is tw.nn.rnn_cell.LSTMStateTuple
    assert rnn.static_rnn is tw.nn.static_rnn
    assert issubclass(rnn.LSTMBlockCell, rnn.RNNCell)


def test_lstm_block_cell_matches_a_numpy_lstm_with_forget_bias() -> None:
    cell = tw.contrib.rnn.LSTMBlockCell(H, forget_bias=0.5)
    x = tw.constant(X[:, 0])
    c0, h0 = RNG.randn(B, H).astype(np.float32), RNG.randn(B, H).astype(np.float32)
    out, state = cell(x, tw.contrib.rnn.LSTMStateTuple(tw.constant(c0), tw.constant(h0)))
    (o, c, h), values = evaluate([out, state.c, state.h])
    assert sorted(values) == ["lstm_cell/bias", "lstm_cell/kernel"]
    assert values["lstm_cell/kernel"].shape == (D + H, 4 * H)
    gates = np.concatenate([X[:, 0], h0], 1) @ values["lstm_cell/kernel"] + \
        values["lstm_cell/bias"]
    i, j, f, g = np.split(gates, 4, axis=1)
    want_c = c0 * sigmoid(f + 0.5) + sigmoid(i) * np.tanh(j)
    want_h = np.tanh(want_c) * sigmoid(g)
    np.testing.assert_allclose(c, want_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, want_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(o, h)
    assert o.dtype == np.float32


def test_lstm_block_cell_peepholes_and_clipping() -> None:
    cell = tw.contrib.rnn.LSTMBlockCell(H, cell_clip=0.1, use_peephole=True)
    zero = cell.zero_state(B, tw.float32)
    _, state = cell(tw.constant(X[:, 0] * 10), zero)
    c, values = evaluate(state.c)
    assert {"lstm_cell/w_i_diag", "lstm_cell/w_f_diag", "lstm_cell/w_o_diag"} <= set(values)
    assert np.abs(c).max() <= 0.1 + 1e-7
    # a non-positive clip means none, as in TF's kernel
    assert tw.contrib.rnn.LSTMBlockCell(H, cell_clip=-1.0)._cell_clip is None


def test_static_bidirectional_rnn_matches_numpy_with_lengths() -> None:
    rnn = tw.contrib.rnn
    inputs = tw.unstack(tw.constant(X), T, 1)
    outputs, state_fw, state_bw = rnn.static_bidirectional_rnn(
        rnn.BasicRNNCell(H), rnn.BasicRNNCell(H), inputs, dtype=tw.float32,
        sequence_length=tw.constant(LENGTHS))
    assert len(outputs) == T
    assert outputs[0].shape.as_list() == [B, 2 * H]
    (outs, sf, sb), values = evaluate([outputs, state_fw, state_bw])
    assert sorted(values) == [f"bidirectional_rnn/{d}/basic_rnn_cell/{w}"
                              for d in ("bw", "fw") for w in ("bias", "kernel")]
    want, want_fw, want_bw = birnn_reference(X, values, "bidirectional_rnn", LENGTHS)
    np.testing.assert_allclose(np.stack(outs, 1), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sf, want_fw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sb, want_bw, rtol=1e-5, atol=1e-6)


def test_static_bidirectional_rnn_without_lengths_reverses_the_whole_sequence() -> None:
    rnn = tw.contrib.rnn
    outputs, _, _ = rnn.static_bidirectional_rnn(
        rnn.BasicRNNCell(H), rnn.BasicRNNCell(H), tw.unstack(tw.constant(X), T, 1),
        dtype=tw.float32, scope="birnn")
    outs, values = evaluate(outputs)
    want, _, _ = birnn_reference(X, values, "birnn", np.full(B, T, np.int32))
    np.testing.assert_allclose(np.stack(outs, 1), want, rtol=1e-5, atol=1e-6)


def test_static_bidirectional_rnn_construction_errors() -> None:
    rnn = tw.contrib.rnn
    cell = rnn.BasicRNNCell(H)
    with pytest.raises(TypeError, match="inputs must be a list"):
        rnn.static_bidirectional_rnn(cell, cell, tw.constant(X), dtype=tw.float32)
    with pytest.raises(ValueError, match="must not be empty"):
        rnn.static_bidirectional_rnn(cell, cell, [], dtype=tw.float32)
    with pytest.raises(TypeError, match="not an RNNCell"):
        rnn.static_bidirectional_rnn(object(), cell, [tw.constant(X[:, 0])], dtype=tw.float32)
    with pytest.raises(ValueError, match="initial_state"):
        rnn.static_bidirectional_rnn(cell, cell, [tw.constant(X[:, 0])])


def test_stack_bidirectional_dynamic_rnn_feeds_each_layer_the_concatenation() -> None:
    rnn = tw.contrib.rnn
    outputs, states_fw, states_bw = rnn.stack_bidirectional_dynamic_rnn(
        [rnn.BasicRNNCell(H), rnn.BasicRNNCell(2)], [rnn.BasicRNNCell(H), rnn.BasicRNNCell(2)],
        tw.constant(X), sequence_length=tw.constant(LENGTHS), dtype=tw.float32)
    assert outputs.shape.as_list() == [B, T, 4]
    assert len(states_fw) == len(states_bw) == 2
    (out, sf), values = evaluate([outputs, states_fw])
    layer0, state0, _ = birnn_reference(
        X, values, "stack_bidirectional_rnn/cell_0/bidirectional_rnn", LENGTHS)
    layer1, state1, _ = birnn_reference(
        layer0, values, "stack_bidirectional_rnn/cell_1/bidirectional_rnn", LENGTHS)
    np.testing.assert_allclose(out, layer1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sf[0], state0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sf[1], state1, rtol=1e-5, atol=1e-6)


def test_stack_bidirectional_rnn_matches_the_dynamic_stack() -> None:
    rnn = tw.contrib.rnn
    outputs, states_fw, _ = rnn.stack_bidirectional_rnn(
        [rnn.BasicRNNCell(H)], [rnn.BasicRNNCell(H)], tw.unstack(tw.constant(X), T, 1),
        dtype=tw.float32, sequence_length=tw.constant(LENGTHS))
    (outs, sf), values = evaluate([outputs, states_fw])
    # the static stack, unlike the dynamic one, passes its cell scope on (TF's names)
    want, want_fw, _ = birnn_reference(X, values, "stack_bidirectional_rnn/cell_0", LENGTHS)
    np.testing.assert_allclose(np.stack(outs, 1), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sf[0], want_fw, rtol=1e-5, atol=1e-6)


def test_stack_bidirectional_errors() -> None:
    rnn = tw.contrib.rnn
    cell = rnn.BasicRNNCell(H)
    with pytest.raises(ValueError, match="at least one fw cell"):
        rnn.stack_bidirectional_dynamic_rnn([], [cell], tw.constant(X), dtype=tw.float32)
    with pytest.raises(ValueError, match="cells_fw must be a list"):
        rnn.stack_bidirectional_dynamic_rnn((cell,), [cell], tw.constant(X), dtype=tw.float32)
    with pytest.raises(ValueError, match="same depth"):
        rnn.stack_bidirectional_rnn([cell, cell], [cell], [tw.constant(X[:, 0])],
                                    dtype=tw.float32)
    with pytest.raises(ValueError, match="initial_states_fw"):
        rnn.stack_bidirectional_rnn([cell], [cell], [tw.constant(X[:, 0])],
                                    initial_states_fw=[], dtype=tw.float32)
