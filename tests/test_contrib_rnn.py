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


# -- contrib-only cells and wrappers --------------------------------------------------------


def gru_reference(x: np.ndarray, h: np.ndarray, gate_w: np.ndarray, gate_b: np.ndarray,
                  cand_w: np.ndarray, cand_b: np.ndarray) -> np.ndarray:
    r, u = np.split(sigmoid(np.concatenate([x, h], 1) @ gate_w + gate_b), 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ cand_w + cand_b)
    return u * h + (1 - u) * c


@pytest.mark.parametrize("cls, names", [
    ("GRUBlockCell", ("w_c", "b_ru", "w_ru", "b_c")),
    ("GRUBlockCellV2", ("gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias")),
])
def test_gru_block_cells_are_a_gru_under_tf_names(cls: str, names: tuple[str, ...]) -> None:
    cell = getattr(tw.contrib.rnn, cls)(H)
    h0 = RNG.randn(B, H).astype(np.float32)
    out, state = cell(tw.constant(X[:, 0]), tw.constant(h0))
    (o, s), values = evaluate([out, state])
    v = [values[f"gru_cell/{n}"] for n in names]
    assert v[0].shape == (D + H, 2 * H) and v[2].shape == (D + H, H)
    np.testing.assert_array_equal(v[1], np.ones(2 * H, np.float32))
    np.testing.assert_allclose(o, gru_reference(X[:, 0], h0, *v), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(o, s)


def test_gru_block_cell_needs_exactly_one_size() -> None:
    with pytest.raises(ValueError, match="Exactly one"):
        tw.contrib.rnn.GRUBlockCell()
    with pytest.raises(ValueError, match="Exactly one"):
        tw.contrib.rnn.GRUBlockCell(3, cell_size=3)
    assert tw.contrib.rnn.GRUBlockCell(cell_size=5).state_size == 5


def layer_norm(x: np.ndarray, gain: float, shift: float) -> np.ndarray:
    mean, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gain + shift


def test_layer_norm_basic_lstm_cell_matches_numpy() -> None:
    cell = tw.contrib.rnn.LayerNormBasicLSTMCell(H, forget_bias=0.5, norm_gain=1.5,
                                                 norm_shift=0.2)
    c0, h0 = RNG.randn(B, H).astype(np.float32), RNG.randn(B, H).astype(np.float32)
    out, state = cell(tw.constant(X[:, 0]), tw.nn.rnn_cell.LSTMStateTuple(
        tw.constant(c0), tw.constant(h0)))
    (o, c, h), values = evaluate([out, state.c, state.h])
    prefix = "layer_norm_basic_lstm_cell"
    gates = ("input", "transform", "forget", "output", "state")
    assert sorted(values) == sorted([f"{prefix}/kernel"] + [f"{prefix}/{g}/{p}" for g in gates
                                                            for p in ("gamma", "beta")])
    i, j, f, g = (layer_norm(z, 1.5, 0.2) for z in np.split(
        np.concatenate([X[:, 0], h0], 1) @ values[f"{prefix}/kernel"], 4, axis=1))
    want_c = layer_norm(c0 * sigmoid(f + 0.5) + sigmoid(i) * np.tanh(j), 1.5, 0.2)
    np.testing.assert_allclose(c, want_c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h, np.tanh(want_c) * sigmoid(g), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(o, h)


def test_layer_norm_basic_lstm_cell_without_norm_has_a_bias_and_drops_the_candidate() -> None:
    cell = tw.contrib.rnn.LayerNormBasicLSTMCell(H, layer_norm=False, dropout_keep_prob=0.5,
                                                 dropout_prob_seed=3)
    c0 = RNG.randn(B, H).astype(np.float32)
    zero = tw.zeros([B, H])
    _, state = cell(tw.constant(X[:, 0]), tw.nn.rnn_cell.LSTMStateTuple(tw.constant(c0), zero))
    c, values = evaluate(state.c)
    prefix = "layer_norm_basic_lstm_cell"
    assert sorted(values) == [f"{prefix}/bias", f"{prefix}/kernel"]
    i, j, f, _ = np.split(X[:, 0] @ values[f"{prefix}/kernel"][:D] + values[f"{prefix}/bias"], 4,
                          axis=1)
    # each candidate unit is either dropped (0) or kept and scaled by 1 / keep_prob
    g = (c - c0 * sigmoid(f + 1.0)) / sigmoid(i)
    kept = np.isclose(g, 2 * np.tanh(j), atol=1e-4)
    assert np.all(kept | np.isclose(g, 0.0, atol=1e-4))


def test_ugrnn_cell_matches_numpy() -> None:
    cell = tw.contrib.rnn.UGRNNCell(H, forget_bias=0.3)
    h0 = RNG.randn(B, H).astype(np.float32)
    out, state = cell(tw.constant(X[:, 0]), tw.constant(h0))
    (o, s), values = evaluate([out, state])
    assert sorted(values) == ["ugrnn_cell/bias", "ugrnn_cell/kernel"]
    g, c = np.split(np.concatenate([X[:, 0], h0], 1) @ values["ugrnn_cell/kernel"]
                    + values["ugrnn_cell/bias"], 2, axis=1)
    g = sigmoid(g + 0.3)
    np.testing.assert_allclose(o, g * h0 + (1 - g) * np.tanh(c), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(o, s)


def test_lstm_block_fused_cell_runs_a_time_major_sequence_with_lengths() -> None:
    cell = tw.contrib.rnn.LSTMBlockFusedCell(H, forget_bias=0.7)
    x = X.transpose(1, 0, 2)
    outputs, state = cell(tw.constant(x), dtype=tw.float32, sequence_length=LENGTHS)
    (o, c, h), values = evaluate([outputs, state.c, state.h])
    assert sorted(values) == ["lstm_fused_cell/bias", "lstm_fused_cell/kernel"]
    assert o.shape == (T, B, H)
    want_c, want_h = np.zeros((B, H), np.float32), np.zeros((B, H), np.float32)
    for t in range(T):
        gates = np.concatenate([x[t], want_h], 1) @ values["lstm_fused_cell/kernel"] + \
            values["lstm_fused_cell/bias"]
        i, j, f, g = np.split(gates, 4, axis=1)
        new_c = want_c * sigmoid(f + 0.7) + sigmoid(i) * np.tanh(j)
        new_h = np.tanh(new_c) * sigmoid(g)
        live = (t < LENGTHS)[:, None]
        np.testing.assert_allclose(o[t], np.where(live, new_h, 0.0), rtol=1e-5, atol=1e-6)
        want_c, want_h = np.where(live, new_c, want_c), np.where(live, new_h, want_h)
    np.testing.assert_allclose(c, want_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, want_h, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="rank 3"):
        tw.contrib.rnn.LSTMBlockFusedCell(H)(tw.constant(X[:, 0]), dtype=tw.float32)


def test_projection_wrappers_own_a_scope_and_project() -> None:
    rnn = tw.contrib.rnn
    out_cell = rnn.OutputProjectionWrapper(rnn.BasicRNNCell(H), 5)
    in_cell = rnn.InputProjectionWrapper(rnn.BasicRNNCell(H), 4, activation=tw.nn.relu)
    h0 = RNG.randn(B, H).astype(np.float32)
    out_p, state_p = out_cell(tw.constant(X[:, 0]), tw.constant(h0))
    out_i, _ = in_cell(tw.constant(X[:, 0]), tw.constant(h0))
    assert out_cell.output_size == 5 and in_cell.output_size == H
    (op, sp, oi), v = evaluate([out_p, state_p, out_i])
    state = np.tanh(np.concatenate([X[:, 0], h0], 1)
                    @ v["output_projection_wrapper/basic_rnn_cell/kernel"]
                    + v["output_projection_wrapper/basic_rnn_cell/bias"])
    np.testing.assert_allclose(sp, state, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(op, state @ v["output_projection_wrapper/kernel"]
                               + v["output_projection_wrapper/bias"], rtol=1e-5, atol=1e-6)
    proj = np.maximum(X[:, 0] @ v["input_projection_wrapper/kernel"]
                      + v["input_projection_wrapper/bias"], 0)
    np.testing.assert_allclose(oi, np.tanh(
        np.concatenate([proj, h0], 1) @ v["input_projection_wrapper/basic_rnn_cell/kernel"]
        + v["input_projection_wrapper/basic_rnn_cell/bias"]), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="output_size must be > 0"):
        rnn.OutputProjectionWrapper(rnn.BasicRNNCell(H), 0)
    with pytest.raises(TypeError, match="not RNNCell"):
        rnn.InputProjectionWrapper("cell", 3)


def test_embedding_wrapper_embeds_ids_and_runs_over_static_rnn() -> None:
    rnn = tw.contrib.rnn
    cell = rnn.EmbeddingWrapper(rnn.BasicRNNCell(H), embedding_classes=6, embedding_size=2)
    ids = np.array([[0, 5, 2], [3, 3, 1]], np.int32)
    outputs, state = tw.nn.static_rnn(cell, [tw.constant(i) for i in ids], dtype=tw.float32)
    (o, s), v = evaluate([outputs, state])
    emb = v["rnn/embedding_wrapper/embedding"]
    assert emb.shape == (6, 2) and np.abs(emb).max() <= np.sqrt(3)
    h = np.zeros((B, H), np.float32)
    for t in range(2):
        h = np.tanh(np.concatenate([emb[ids[t]], h], 1)
                    @ v["rnn/embedding_wrapper/basic_rnn_cell/kernel"]
                    + v["rnn/embedding_wrapper/basic_rnn_cell/bias"])
        np.testing.assert_allclose(o[t], h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s, h, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="must be > 0"):
        rnn.EmbeddingWrapper(rnn.BasicRNNCell(H), 0, 2)


@pytest.mark.parametrize("couple", [True, False])
def test_highway_wrapper_mixes_input_and_output(couple: bool) -> None:
    cell = tw.contrib.rnn.HighwayWrapper(tw.contrib.rnn.BasicRNNCell(D),
                                         couple_carry_transform_gates=couple,
                                         carry_bias_init=0.5)
    h0 = RNG.randn(B, D).astype(np.float32)
    out, _ = cell(tw.constant(X[:, 0]), tw.constant(h0))
    o, v = evaluate(out)
    np.testing.assert_array_equal(v["carry_b"], np.full(D, 0.5, np.float32))
    y = np.tanh(np.concatenate([X[:, 0], h0], 1) @ v["basic_rnn_cell/kernel"]
                + v["basic_rnn_cell/bias"])
    carry = sigmoid(X[:, 0] @ v["carry_w"] + v["carry_b"])
    transform = 1 - carry if couple else sigmoid(X[:, 0] @ v["transform_w"] + v["transform_b"])
    assert ("transform_w" in v) is not couple
    np.testing.assert_allclose(o, X[:, 0] * carry + y * transform, rtol=1e-5, atol=1e-6)
