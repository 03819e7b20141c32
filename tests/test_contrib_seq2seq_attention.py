"""`tw.contrib.seq2seq`'s attention: Luong and Bahdanau scores and alignments against numpy
(masked memory, scale, normalize), TF's variable names, the `AttentionWrapper` step against a
hand-written one, alignment history, `clone`, and construction errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw

s2s = tw.contrib.seq2seq
RNG = np.random.RandomState(3)
MEMORY = RNG.randn(2, 4, 3).astype(np.float32)
QUERY = RNG.randn(2, 5).astype(np.float32)
LENGTHS = np.array([4, 2], np.int32)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def variables(sess: tw.Session) -> dict[str, np.ndarray]:
    found = tw.global_variables()
    return dict(zip((v.op.name for v in found), sess.run(found)))


def masked_softmax(score: np.ndarray) -> np.ndarray:
    return softmax(np.where(np.arange(4) < LENGTHS[:, None], score, -np.inf))


def test_luong_alignments_by_hand() -> None:
    # a tiny case worked by hand: keys are the memory itself (identity memory layer)
    memory = np.array([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]], np.float32)
    with tw.Graph().as_default():
        mechanism = s2s.LuongAttention(2, memory, memory_sequence_length=[2])
        alignments, state = mechanism(tw.constant([[2.0, 0.0]]), None)
        with tw.Session() as sess:
            kernel = [v for v in tw.global_variables() if v.op.name == "memory_layer/kernel"][0]
            sess.run(tw.global_variables_initializer())
            sess.run(kernel.assign(np.eye(2, dtype=np.float32)))
            got, got_state = sess.run([alignments, state])
    # scores [2, 0, -inf]: softmax -> [e^2, 1, 0] / (e^2 + 1)
    np.testing.assert_allclose(got, [[np.e ** 2 / (np.e ** 2 + 1), 1 / (np.e ** 2 + 1), 0.0]],
                               rtol=1e-6)
    np.testing.assert_array_equal(got, got_state)


def test_luong_scaled_against_numpy() -> None:
    with tw.Graph().as_default():
        mechanism = s2s.LuongAttention(5, MEMORY, memory_sequence_length=LENGTHS, scale=True)
        with tw.variable_scope("cell"):
            alignments, _ = mechanism(QUERY, None)
        with tw.Session() as sess:
            sess.run(tw.global_variables_initializer())
            sess.run(tw.assign(tw.global_variables()[-1], 0.5))
            v = variables(sess)
            got, values = sess.run([alignments, mechanism.values])
    assert sorted(v) == ["cell/luong_attention/attention_g", "memory_layer/kernel"]
    keys = MEMORY @ v["memory_layer/kernel"]
    score = 0.5 * np.einsum("bd,btd->bt", QUERY, keys)
    np.testing.assert_allclose(got, masked_softmax(score), rtol=1e-5, atol=1e-7)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(values, MEMORY * (np.arange(4) < LENGTHS[:, None])[..., None])


@pytest.mark.parametrize("normalize", [False, True])
def test_bahdanau_against_numpy(normalize: bool) -> None:
    with tw.Graph().as_default():
        mechanism = s2s.BahdanauAttention(6, MEMORY, memory_sequence_length=LENGTHS,
                                          normalize=normalize)
        alignments, _ = mechanism(QUERY, None)
        with tw.Session() as sess:
            sess.run(tw.global_variables_initializer())
            v = variables(sess)
            got = sess.run(alignments)
    prefix = "bahdanau_attention/"
    expected = {"memory_layer/kernel", prefix + "query_layer/kernel", prefix + "attention_v"}
    if normalize:
        expected |= {prefix + "attention_g", prefix + "attention_b"}
        np.testing.assert_allclose(v[prefix + "attention_g"], np.sqrt(1 / 6), rtol=1e-6)
    assert set(v) == expected
    keys = MEMORY @ v["memory_layer/kernel"]
    query = (QUERY @ v[prefix + "query_layer/kernel"])[:, None]
    vec = v[prefix + "attention_v"]
    if normalize:
        vec = v[prefix + "attention_g"] * vec / np.sqrt((vec ** 2).sum())
        query = query + v[prefix + "attention_b"]
    score = (vec * np.tanh(keys + query)).sum(-1)
    np.testing.assert_allclose(got, masked_softmax(score), rtol=1e-5, atol=1e-7)


def test_hardmax_probability_fn() -> None:
    with tw.Graph().as_default():
        mechanism = s2s.LuongAttention(5, MEMORY, probability_fn=s2s.hardmax)
        alignments, _ = mechanism(QUERY, None)
        with tw.Session() as sess:
            sess.run(tw.global_variables_initializer())
            v = variables(sess)
            got = sess.run(alignments)
    score = np.einsum("bd,btd->bt", QUERY, MEMORY @ v["memory_layer/kernel"])
    np.testing.assert_array_equal(got, np.eye(4, dtype=np.float32)[score.argmax(-1)])


def test_attention_wrapper_step_against_numpy() -> None:
    inputs = RNG.randn(2, 2).astype(np.float32)
    with tw.Graph().as_default():
        mechanism = s2s.LuongAttention(4, MEMORY, memory_sequence_length=LENGTHS)
        cell = s2s.AttentionWrapper(tw.nn.rnn_cell.BasicRNNCell(4), mechanism,
                                    attention_layer_size=3, alignment_history=True)
        assert cell.output_size == 3
        assert cell.state_size.attention == 3 and cell.state_size.alignments == 4
        state = cell.zero_state(2, tw.float32)
        assert isinstance(state, s2s.AttentionWrapperState)
        output, new = cell(inputs, state)
        history = new.alignment_history.stack()
        with tw.Session() as sess:
            sess.run(tw.global_variables_initializer())
            v = variables(sess)
            got, got_new, got_history = sess.run([output, new._replace(
                alignment_history=()), history])
    assert set(v) == {"memory_layer/kernel", "attention_wrapper/basic_rnn_cell/kernel",
                      "attention_wrapper/basic_rnn_cell/bias",
                      "attention_wrapper/attention_layer/kernel"}
    # previous attention is zero: the cell sees concat([inputs, 0])
    cell_in = np.concatenate([inputs, np.zeros((2, 3), np.float32)], 1)
    h = np.tanh(np.concatenate([cell_in, np.zeros((2, 4))], 1)
                @ v["attention_wrapper/basic_rnn_cell/kernel"]
                + v["attention_wrapper/basic_rnn_cell/bias"])
    align = masked_softmax(np.einsum("bd,btd->bt", h, MEMORY @ v["memory_layer/kernel"]))
    context = np.einsum("bt,btd->bd", align,
                        MEMORY * (np.arange(4) < LENGTHS[:, None])[..., None])
    attention = np.concatenate([h, context], 1) @ v["attention_wrapper/attention_layer/kernel"]
    np.testing.assert_allclose(got, attention, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_new.cell_state, h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_new.alignments, align, rtol=1e-5, atol=1e-6)
    assert got_new.time == 1
    np.testing.assert_allclose(got_history, align[None], rtol=1e-5, atol=1e-6)


def test_without_attention_layer_or_output_attention() -> None:
    with tw.Graph().as_default():
        mechanisms = [s2s.LuongAttention(4, MEMORY), s2s.BahdanauAttention(2, MEMORY)]
        cell = s2s.AttentionWrapper(tw.nn.rnn_cell.BasicRNNCell(4), mechanisms,
                                    output_attention=False,
                                    cell_input_fn=lambda inputs, attention: inputs)
        assert cell.output_size == 4
        assert cell.state_size.attention == 6  # two contexts of depth 3
        state = cell.zero_state(2, tw.float32)
        assert len(state.alignments) == 2 and state.alignment_history == ((), ())
        output, new = cell(tw.ones([2, 1]), state)
        assert output.shape.as_list() == [2, 4]
        assert new.attention.shape.as_list() == [2, 6]


def test_clone_and_initial_cell_state() -> None:
    with tw.Graph().as_default():
        mechanism = s2s.LuongAttention(4, MEMORY)
        initial = tw.fill([2, 4], 2.0)
        cell = s2s.AttentionWrapper(tw.nn.rnn_cell.BasicRNNCell(4), mechanism,
                                    initial_cell_state=initial)
        state = cell.zero_state(2, tw.float32)
        placeholder = tw.placeholder(tw.float32, [None, 4])
        cloned = state.clone(cell_state=placeholder)
        assert cloned.cell_state is placeholder and placeholder.shape.as_list() == [2, 4]
        assert cloned.alignments is state.alignments
        with pytest.raises(ValueError):
            state.clone(cell_state=tw.zeros([3, 4]))
        with tw.Session() as sess:
            np.testing.assert_array_equal(sess.run(state.cell_state), np.full((2, 4), 2.0))


def test_construction_errors() -> None:
    with tw.Graph().as_default():
        mechanism = s2s.LuongAttention(5, MEMORY)
        with pytest.raises(ValueError, match="Incompatible or unknown inner dimensions"):
            mechanism(tw.zeros([2, 4]), None)
        with pytest.raises(TypeError, match="AttentionMechanism"):
            s2s.AttentionWrapper(tw.nn.rnn_cell.BasicRNNCell(4), object())
        with pytest.raises(ValueError, match="exactly one integer per"):
            s2s.AttentionWrapper(tw.nn.rnn_cell.BasicRNNCell(4), mechanism,
                                 attention_layer_size=[2, 3])
        with pytest.raises(ValueError, match="Only one of"):
            s2s.AttentionWrapper(tw.nn.rnn_cell.BasicRNNCell(4), mechanism,
                                 attention_layer_size=2, attention_layer=tw.layers.Dense(2))
        with pytest.raises(ValueError, match="fully defined inner dims"):
            s2s.LuongAttention(3, tw.placeholder(tw.float32, [2, 4, None]))
        cell = s2s.AttentionWrapper(tw.nn.rnn_cell.BasicRNNCell(4), mechanism)
        with pytest.raises(TypeError, match="AttentionWrapperState"):
            cell(tw.zeros([2, 1]), tw.zeros([2, 4]))
