"""`tw.contrib.legacy_seq2seq`: the decoders and seq2seq models against explicit numpy
unrollings (teacher forcing and greedy `feed_previous`, as a bool and as a tensor), the
attention decoder's reads, TF's variable names, the sequence losses against numpy, bucketing
with shared variables, and a training run whose loss drops."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import tensorweave as tw
from tests.rnn_support import evaluate

ls = tw.contrib.legacy_seq2seq
B, T, D, H = 3, 3, 2, 4
RNG = np.random.RandomState(11)
X = RNG.randn(T, B, D).astype(np.float32)
IDS = RNG.randint(0, 5, (T, B)).astype(np.int32)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def rnn_step(v: dict[str, np.ndarray], prefix: str, x: np.ndarray, h: np.ndarray) -> np.ndarray:
    return np.tanh(np.concatenate([x, h], 1) @ v[f"{prefix}/kernel"] + v[f"{prefix}/bias"])


def dense(v: dict[str, np.ndarray], prefix: str, *xs: np.ndarray) -> np.ndarray:
    return np.concatenate(xs, 1) @ v[f"{prefix}/kernel"] + v[f"{prefix}/bias"]


def test_rnn_decoder_matches_a_loop_and_feeds_back_through_loop_function() -> None:
    h0 = RNG.randn(B, H).astype(np.float32)
    cell = tw.nn.rnn_cell.BasicRNNCell(H)
    outputs, state = ls.rnn_decoder([tw.constant(x) for x in X], tw.constant(h0), cell)
    steps = []
    fed, _ = ls.rnn_decoder([tw.constant(x) for x in X], tw.constant(h0), cell,
                            loop_function=lambda prev, i: steps.append(i) or prev[:, :D],
                            scope="looped")
    assert steps == [1, 2]
    (o, s, f), v = evaluate([outputs, state, fed])
    assert sorted(v) == ["rnn_decoder/basic_rnn_cell/bias", "rnn_decoder/basic_rnn_cell/kernel"]
    h, g = h0, h0
    for t in range(T):
        h = rnn_step(v, "rnn_decoder/basic_rnn_cell", X[t], h)
        g = rnn_step(v, "rnn_decoder/basic_rnn_cell", X[0] if t == 0 else g[:, :D], g)
        np.testing.assert_allclose(o[t], h, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(f[t], g, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s, h, rtol=1e-5, atol=1e-6)


def test_basic_and_tied_seq2seq_encode_then_decode() -> None:
    enc, dec = [tw.constant(x) for x in X], [tw.constant(x) for x in X[::-1]]
    basic, _ = ls.basic_rnn_seq2seq(enc, dec, tw.nn.rnn_cell.BasicRNNCell(H))
    tied, _ = ls.tied_rnn_seq2seq(enc, dec, tw.nn.rnn_cell.BasicRNNCell(H))
    (ob, ot), v = evaluate([basic, tied])
    assert sorted(v) == sorted(f"{p}/basic_rnn_cell/{n}" for n in ("kernel", "bias") for p in (
        "basic_rnn_seq2seq/rnn", "basic_rnn_seq2seq/rnn_decoder",
        "combined_tied_rnn_seq2seq/tied_rnn_seq2seq"))
    for out, enc_prefix, dec_prefix in (
            (ob, "basic_rnn_seq2seq/rnn", "basic_rnn_seq2seq/rnn_decoder"),
            (ot, "combined_tied_rnn_seq2seq/tied_rnn_seq2seq",
             "combined_tied_rnn_seq2seq/tied_rnn_seq2seq")):
        h = np.zeros((B, H), np.float32)
        for x in X:
            h = rnn_step(v, f"{enc_prefix}/basic_rnn_cell", x, h)
        for t, x in enumerate(X[::-1]):
            h = rnn_step(v, f"{dec_prefix}/basic_rnn_cell", x, h)
            np.testing.assert_allclose(out[t], h, rtol=1e-5, atol=1e-6)


def embedding_rnn_reference(v: dict[str, np.ndarray], feed_previous: bool) -> list[np.ndarray]:
    scope = "embedding_rnn_seq2seq"
    h = np.zeros((B, H), np.float32)
    for ids in IDS:
        h = rnn_step(v, f"{scope}/rnn/embedding_wrapper/basic_rnn_cell",
                     v[f"{scope}/rnn/embedding_wrapper/embedding"][ids], h)
    dec = f"{scope}/embedding_rnn_decoder"
    cell = f"{dec}/rnn_decoder/output_projection_wrapper"
    outs, symbols = [], IDS[0]
    for t in range(T):
        symbols = symbols if t == 0 or feed_previous else IDS[t]
        h = rnn_step(v, f"{cell}/basic_rnn_cell", v[f"{dec}/embedding"][symbols], h)
        outs.append(dense(v, cell, h))
        symbols = outs[-1].argmax(1)
    return outs


@pytest.mark.parametrize("feed_previous", [False, True])
def test_embedding_rnn_seq2seq_teacher_forcing_and_greedy(feed_previous: bool) -> None:
    outputs, _ = ls.embedding_rnn_seq2seq([tw.constant(i) for i in IDS],
                                          [tw.constant(i) for i in IDS],
                                          tw.nn.rnn_cell.BasicRNNCell(H), 5, 6, 3,
                                          feed_previous=feed_previous)
    assert outputs[0].shape.as_list() == [B, 6]
    o, v = evaluate(outputs)
    assert v["embedding_rnn_seq2seq/rnn/embedding_wrapper/embedding"].shape == (5, 3)
    assert v["embedding_rnn_seq2seq/embedding_rnn_decoder/embedding"].shape == (6, 3)
    for got, want in zip(o, embedding_rnn_reference(v, feed_previous)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_embedding_rnn_seq2seq_with_a_feed_previous_tensor_shares_one_model() -> None:
    feed = tw.placeholder(tw.bool, [])
    outputs, state = ls.embedding_rnn_seq2seq([tw.constant(i) for i in IDS],
                                              [tw.constant(i) for i in IDS],
                                              tw.nn.rnn_cell.BasicRNNCell(H), 5, 6, 3,
                                              feed_previous=feed)
    assert len(outputs) == T and state.shape.as_list() == [B, H]
    variables = tw.global_variables()
    assert len(variables) == 8  # one encoder, one decoder, no second copy
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        v = {x.name[:-2]: val for x, val in zip(variables, sess.run(variables))}
        for flag in (False, True):
            got = sess.run(outputs, {feed: flag})
            for g, want in zip(got, embedding_rnn_reference(v, flag)):
                np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)


def test_embedding_rnn_decoder_output_projection_feeds_projected_argmax() -> None:
    w = RNG.randn(H, 6).astype(np.float32)
    b = RNG.randn(6).astype(np.float32)
    h0 = RNG.randn(B, H).astype(np.float32)
    outputs, _ = ls.embedding_rnn_decoder([tw.constant(i) for i in IDS], tw.constant(h0),
                                          tw.nn.rnn_cell.BasicRNNCell(H), 6, 3,
                                          output_projection=(w, b), feed_previous=True)
    o, v = evaluate(outputs)
    h, symbols = h0, IDS[0]
    for t in range(T):
        h = rnn_step(v, "embedding_rnn_decoder/rnn_decoder/basic_rnn_cell",
                     v["embedding_rnn_decoder/embedding"][symbols], h)
        np.testing.assert_allclose(o[t], h, rtol=1e-4, atol=1e-5)
        symbols = (h @ w + b).argmax(1)
    with pytest.raises(ValueError):
        ls.embedding_rnn_decoder([tw.constant(IDS[0])], tw.constant(h0),
                                 tw.nn.rnn_cell.BasicRNNCell(H), 6, 3,
                                 output_projection=(w[:, :5], b), scope="bad")


def test_attention_decoder_matches_numpy_with_two_heads() -> None:
    L = 5
    states = RNG.randn(B, L, H).astype(np.float32)
    h0 = RNG.randn(B, H).astype(np.float32)
    outputs, state = ls.attention_decoder([tw.constant(x) for x in X], tw.constant(h0),
                                          tw.constant(states), tw.nn.rnn_cell.BasicRNNCell(H),
                                          output_size=3, num_heads=2)
    (o, s), v = evaluate([outputs, state])
    p = "attention_decoder"
    assert sorted(v) == sorted([f"{p}/AttnW_0", f"{p}/AttnV_0", f"{p}/AttnW_1", f"{p}/AttnV_1",
                                f"{p}/kernel", f"{p}/bias", f"{p}/basic_rnn_cell/kernel",
                                f"{p}/basic_rnn_cell/bias"] + [
        f"{p}/{s}/{n}" for s in ("Attention_0", "Attention_1", "AttnOutputProjection")
        for n in ("kernel", "bias")])
    assert v[f"{p}/AttnW_0"].shape == (1, 1, H, H)

    def attend(query: np.ndarray) -> list[np.ndarray]:
        reads = []
        for a in range(2):
            feats = states @ v[f"{p}/AttnW_{a}"][0, 0]
            y = dense(v, f"{p}/Attention_{a}", query)
            weights = softmax((v[f"{p}/AttnV_{a}"] * np.tanh(feats + y[:, None])).sum(-1))
            reads.append((weights[:, :, None] * states).sum(1))
        return reads

    h, attns = h0, [np.zeros((B, H), np.float32)] * 2
    for t in range(T):
        h = rnn_step(v, f"{p}/basic_rnn_cell", dense(v, p, X[t], *attns), h)
        attns = attend(h)
        np.testing.assert_allclose(o[t], dense(v, f"{p}/AttnOutputProjection", h, *attns),
                                   rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(s, h, rtol=1e-5, atol=1e-6)


def test_attention_decoder_rejects_bad_arguments() -> None:
    cell = tw.nn.rnn_cell.BasicRNNCell(H)
    states = tw.constant(np.zeros((B, 2, H), np.float32))
    with pytest.raises(ValueError, match="at least 1 input"):
        ls.attention_decoder([], tw.zeros([B, H]), states, cell)
    with pytest.raises(ValueError, match="less than 1 heads"):
        ls.attention_decoder([tw.constant(X[0])], tw.zeros([B, H]), states, cell, num_heads=0)
    with pytest.raises(ValueError, match="Shape\\[2\\]"):
        ls.attention_decoder([tw.constant(X[0])], tw.zeros([B, H]),
                             tw.placeholder(tw.float32, [B, 2, None]), cell)


def test_embedding_attention_seq2seq_names_and_feed_previous_tensor() -> None:
    feed = tw.placeholder(tw.bool, [])
    outputs, state = ls.embedding_attention_seq2seq(
        [tw.constant(i) for i in IDS], [tw.constant(i) for i in IDS],
        tw.nn.rnn_cell.GRUCell(H), 5, 6, 3, feed_previous=feed, initial_state_attention=True)
    assert outputs[0].shape.as_list() == [B, 6] and state.shape.as_list() == [B, H]
    names = {v.name[:-2] for v in tw.global_variables()}
    dec = "embedding_attention_seq2seq/embedding_attention_decoder"
    assert {"embedding_attention_seq2seq/rnn/embedding_wrapper/embedding",
            "embedding_attention_seq2seq/rnn/embedding_wrapper/gru_cell/gates/kernel",
            f"{dec}/embedding", f"{dec}/attention_decoder/AttnW_0",
            f"{dec}/attention_decoder/output_projection_wrapper/kernel",
            f"{dec}/attention_decoder/output_projection_wrapper/gru_cell/candidate/bias",
            f"{dec}/attention_decoder/AttnOutputProjection/kernel"} <= names
    assert len(names) == 20
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        forced, greedy = sess.run(outputs, {feed: False}), sess.run(outputs, {feed: True})
    np.testing.assert_allclose(forced[0], greedy[0], rtol=1e-5)  # same GO step
    assert not np.allclose(forced[1:], greedy[1:]) or np.array_equal(
        np.stack(forced)[:-1].argmax(-1), IDS[1:])


def test_sequence_losses_match_numpy() -> None:
    logits = RNG.randn(T, B, 6).astype(np.float32)
    weights = RNG.rand(T, B).astype(np.float32)
    args = ([tw.constant(x) for x in logits], [tw.constant(i) for i in IDS],
            [tw.constant(w) for w in weights])
    by_example = ls.sequence_loss_by_example(*args)
    summed = ls.sequence_loss_by_example(*args, average_across_timesteps=False)
    mean = ls.sequence_loss(*args)
    total = ls.sequence_loss(*args, average_across_batch=False)
    custom = ls.sequence_loss_by_example(
        *args, softmax_loss_function=lambda labels, logits: tw.nn.
        sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits) * 2.0)
    (e, s, m, t, c), _ = evaluate([by_example, summed, mean, total, custom])
    crossent = -np.log(np.take_along_axis(softmax(logits), IDS[..., None], -1))[..., 0]
    want_sum = (crossent * weights).sum(0)
    want = want_sum / (weights.sum(0) + 1e-12)
    np.testing.assert_allclose(e, want, rtol=1e-5)
    np.testing.assert_allclose(s, want_sum, rtol=1e-5)
    np.testing.assert_allclose(m, want.sum() / B, rtol=1e-5)
    np.testing.assert_allclose(t, want.sum(), rtol=1e-5)
    np.testing.assert_allclose(c, 2 * want, rtol=1e-5)
    assert e.dtype == np.float32 and m.shape == ()
    with pytest.raises(ValueError, match="Lengths of logits, weights, and targets"):
        ls.sequence_loss_by_example(args[0], args[1][:2], args[2])


def test_model_with_buckets_shares_variables_and_trains() -> None:
    buckets = [(2, 2), (3, 3)]
    enc = [tw.placeholder(tw.int32, [None]) for _ in range(3)]
    dec = [tw.placeholder(tw.int32, [None]) for _ in range(4)]
    weights = [tw.ones_like(d, dtype=tw.float32) for d in dec[:3]]
    cell = tw.nn.rnn_cell.GRUCell(8)  # copied per bucket, as TF's translate model does

    def model(e: list, d: list) -> tuple:
        return ls.embedding_rnn_seq2seq(e, d, copy.deepcopy(cell), 5, 5, 4)

    outputs, losses = ls.model_with_buckets(enc, dec[:3], dec[1:], weights, buckets, model)
    assert [len(o) for o in outputs] == [2, 3] and len(losses) == 2
    assert len(tw.trainable_variables()) == 12  # both buckets use one model
    with tw.variable_scope(tw.get_variable_scope(), reuse=True):
        _, per_example = ls.model_with_buckets(enc, dec[:3], dec[1:], weights, buckets, model,
                                               per_example_loss=True)
    assert len(tw.trainable_variables()) == 12
    assert [loss.shape.ndims for loss in per_example] == [1, 1]
    train = tw.train.AdamOptimizer(0.05).minimize(losses[1])
    # copy task: the decoder repeats the encoder's symbols after a GO symbol 0
    data = RNG.randint(1, 5, (3, 16)).astype(np.int32)
    feed = {**{e: d for e, d in zip(enc, data)}, dec[0]: np.zeros(16, np.int32),
            **{d: x for d, x in zip(dec[1:], data)}}
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        first = sess.run(losses[1], feed)
        for _ in range(60):
            sess.run(train, feed)
        last = sess.run(losses[1], feed)
    assert last < 0.5 * first
    with pytest.raises(ValueError, match="encoder_inputs"):
        ls.model_with_buckets(enc[:1], dec, dec, weights, buckets, lambda e, d: None)


def test_embedding_tied_rnn_seq2seq_feed_previous_tensor_matches_the_bool_models() -> None:
    enc, dec = [tw.constant(i) for i in IDS], [tw.constant(i) for i in IDS]
    feed = tw.placeholder(tw.bool, [])
    cell = tw.nn.rnn_cell.BasicLSTMCell(H)
    outputs, state = ls.embedding_tied_rnn_seq2seq(enc, dec, cell, 5, 3, feed_previous=feed)
    assert isinstance(state, tw.nn.rnn_cell.LSTMStateTuple)
    names = sorted(v.name[:-2] for v in tw.global_variables())
    scope = "embedding_tied_rnn_seq2seq"
    tied = f"{scope}/combined_tied_rnn_seq2seq/tied_rnn_seq2seq/output_projection_wrapper"
    assert names == sorted([f"{scope}/embedding", f"{tied}/basic_lstm_cell/kernel",
                            f"{tied}/basic_lstm_cell/bias", f"{tied}/kernel", f"{tied}/bias"])
    with tw.variable_scope(tw.get_variable_scope(), reuse=True):
        forced, _ = ls.embedding_tied_rnn_seq2seq(enc, dec, cell, 5, 3, feed_previous=False)
        greedy, _ = ls.embedding_tied_rnn_seq2seq(enc, dec, cell, 5, 3, feed_previous=True)
    assert len(tw.global_variables()) == 5
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        for flag, want in ((False, forced), (True, greedy)):
            got, expected = sess.run([outputs, want], {feed: flag})
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_char_rnn_style_decoder_state_is_fed_back_as_a_nested_tuple() -> None:
    cell = tw.nn.rnn_cell.MultiRNNCell([tw.nn.rnn_cell.BasicLSTMCell(H) for _ in range(2)])
    x = tw.placeholder(tw.float32, [B, 2, D])
    initial = cell.zero_state(B, tw.float32)
    steps = [tw.squeeze(s, [1]) for s in tw.split(x, 2, 1)]
    outputs, final = ls.rnn_decoder(steps, initial, cell, scope="rnnlm")
    one, one_final = ls.rnn_decoder(steps[:1], initial, cell, scope="rnnlm")
    seq = X.transpose(1, 0, 2)[:, :2]
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        both = sess.run(outputs, {x: seq})
        state = sess.run(one_final, {x: seq})
        # the second step alone, from the first step's state fed as (LSTMStateTuple, ...)
        second = sess.run(one[0], {x: seq[:, ::-1], initial: state})
        with pytest.raises(ValueError, match="Key had 2 elements, but value had 1"):
            sess.run(one[0], {x: seq, initial: (state[0],)})
    np.testing.assert_allclose(second, both[1], rtol=1e-5, atol=1e-6)
