"""`tw.contrib.seq2seq.sequence_loss`: every reduction against a numpy cross-entropy, a custom
loss function, zero weights, and the rank and flag errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tw

sequence_loss = tw.contrib.seq2seq.sequence_loss
RNG = np.random.RandomState(4)
LOGITS = RNG.randn(2, 3, 5).astype(np.float32)
TARGETS = RNG.randint(0, 5, (2, 3)).astype(np.int32)
WEIGHTS = np.array([[1.0, 1.0, 0.0], [1.0, 0.5, 1.0]], np.float32)


def crossent() -> np.ndarray:
    shifted = LOGITS - LOGITS.max(-1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(log_softmax, TARGETS[..., None], -1)[..., 0] * WEIGHTS


def run(*args: object, **kwargs: object) -> np.ndarray:
    with tw.Session() as sess:
        return sess.run(sequence_loss(LOGITS, TARGETS, WEIGHTS, *args, **kwargs))


def test_averages() -> None:
    c = crossent()
    got = run()
    assert got.dtype == np.float32 and got.shape == ()
    assert got == pytest.approx(c.sum() / WEIGHTS.sum(), rel=1e-5)
    np.testing.assert_allclose(run(True, False), c.sum(1) / WEIGHTS.sum(1), rtol=1e-5)
    np.testing.assert_allclose(run(False, True), c.sum(0) / WEIGHTS.sum(0), rtol=1e-5)
    np.testing.assert_allclose(run(False, False), c, rtol=1e-5)


def test_sums_divide_by_the_nonzero_weights() -> None:
    c = crossent()
    both = run(False, False, True, True)
    assert both == pytest.approx(c.sum() / np.count_nonzero(WEIGHTS), rel=1e-5)
    np.testing.assert_allclose(run(False, False, True, False),
                               c.sum(1) / np.count_nonzero(WEIGHTS, 1), rtol=1e-5)


def test_custom_loss_function_and_zero_weights() -> None:
    def half_loss(labels: object, logits: object) -> object:
        return 0.5 * tw.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                   logits=logits)

    assert run(softmax_loss_function=half_loss) == pytest.approx(
        0.5 * crossent().sum() / WEIGHTS.sum(), rel=1e-5)
    with tw.Session() as sess:
        zero = sess.run(sequence_loss(LOGITS, TARGETS, np.zeros_like(WEIGHTS)))
    assert zero == 0.0


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="Logits must be"):
        sequence_loss(LOGITS[0], TARGETS, WEIGHTS)
    with pytest.raises(ValueError, match="Targets must be"):
        sequence_loss(LOGITS, TARGETS[0], WEIGHTS)
    with pytest.raises(ValueError, match="Weights must be"):
        sequence_loss(LOGITS, TARGETS, WEIGHTS[0])
    with pytest.raises(ValueError, match="average_across_timesteps and sum_over_timesteps"):
        sequence_loss(LOGITS, TARGETS, WEIGHTS, sum_over_timesteps=True)
    with pytest.raises(ValueError, match="average_across_batch and sum_over_batch"):
        sequence_loss(LOGITS, TARGETS, WEIGHTS, False, True, False, True)


# -- decoders and helpers ---------------------------------------------------------------------

s2s = tw.contrib.seq2seq


def _rnn_step(x: np.ndarray, h: np.ndarray, kernel: np.ndarray, bias: np.ndarray) -> np.ndarray:
    return np.tanh(np.concatenate([x, h], 1) @ kernel + bias)


def _values(sess: tw.Session, names: list[str]) -> list[np.ndarray]:
    by_name = {v.op.name: v for v in tw.global_variables()}
    return sess.run([by_name[n] for n in names])


def test_training_helper_decode_matches_a_python_loop() -> None:
    rng = np.random.RandomState(0)
    x = rng.randn(3, 4, 2).astype(np.float32)
    lengths = np.array([4, 2, 3], np.int32)
    with tw.Graph().as_default():
        cell = tw.nn.rnn_cell.BasicRNNCell(5)
        decoder = s2s.BasicDecoder(cell, s2s.TrainingHelper(x, lengths),
                                   cell.zero_state(3, tw.float32),
                                   output_layer=tw.layers.Dense(3))
        outputs, state, seq_lengths = s2s.dynamic_decode(decoder, impute_finished=True)
        assert isinstance(outputs, s2s.BasicDecoderOutput)
        assert outputs.rnn_output.shape.as_list() == [3, None, 3]
        assert outputs.sample_id.dtype == tw.int32
        assert sorted(v.op.name for v in tw.global_variables()) == [
            "decoder/basic_rnn_cell/bias", "decoder/basic_rnn_cell/kernel",
            "decoder/dense/bias", "decoder/dense/kernel"]
        with tw.Session() as sess:
            sess.run(tw.global_variables_initializer())
            got, got_state, got_lengths = sess.run([outputs, state, seq_lengths])
            k, b, w, wb = _values(sess, ["decoder/basic_rnn_cell/kernel",
                                         "decoder/basic_rnn_cell/bias", "decoder/dense/kernel",
                                         "decoder/dense/bias"])
    h = np.zeros((3, 5), np.float32)
    want = np.zeros((3, 4, 3), np.float32)
    final = np.zeros_like(h)
    for t in range(4):
        h = _rnn_step(x[:, t], h, k, b)
        live = t < lengths
        want[live, t] = (h @ w + wb)[live]
        final[lengths == t + 1] = h[lengths == t + 1]
    np.testing.assert_allclose(got.rnn_output, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got.sample_id, np.where(lengths[:, None] > np.arange(4),
                                                          want.argmax(-1), 0))
    np.testing.assert_allclose(got_state, final, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got_lengths, lengths)


def _greedy_graph(maximum_iterations: int | None, impute_finished: bool = False,
                  output_time_major: bool = False) -> tuple[Any, ...]:
    rng = np.random.RandomState(1)
    embedding = rng.randn(4, 3).astype(np.float32)
    cell = tw.nn.rnn_cell.BasicRNNCell(4)
    helper = s2s.GreedyEmbeddingHelper(embedding, [0, 1, 2], end_token=3)
    decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(3, tw.float32))
    outputs, state, lengths = s2s.dynamic_decode(
        decoder, output_time_major=output_time_major, impute_finished=impute_finished,
        maximum_iterations=maximum_iterations)
    return embedding, outputs, state, lengths


def _greedy_reference(embedding: np.ndarray, k: np.ndarray, b: np.ndarray,
                      steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    h = np.zeros((3, 4), np.float32)
    inputs = embedding[[0, 1, 2]]
    finished = np.zeros(3, bool)
    lengths = np.zeros(3, np.int32)
    outs, ids = [], []
    for t in range(steps):
        h = _rnn_step(inputs, h, k, b)
        sample = h.argmax(-1)
        lengths = np.where(finished, lengths, t + 1)
        finished |= sample == 3
        outs.append(h)
        ids.append(sample)
        inputs = embedding[sample]
        if finished.all():
            break
    return np.stack(outs, 1), np.stack(ids, 1), lengths


def test_greedy_embedding_helper_stops_at_the_end_token_or_maximum_iterations() -> None:
    with tw.Graph().as_default():
        embedding, outputs, _, lengths = _greedy_graph(6)
        with tw.Session() as sess:
            sess.run(tw.global_variables_initializer())
            got, got_lengths = sess.run([outputs, lengths])
            k, b = _values(sess, ["decoder/basic_rnn_cell/kernel", "decoder/basic_rnn_cell/bias"])
    want, ids, want_lengths = _greedy_reference(embedding, k, b, 6)
    np.testing.assert_allclose(got.rnn_output, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got.sample_id, ids)
    np.testing.assert_array_equal(got_lengths, want_lengths)
    assert got_lengths.dtype == np.int32


def test_output_time_major_and_zero_maximum_iterations() -> None:
    with tw.Graph().as_default():
        _, outputs, _, lengths = _greedy_graph(2, impute_finished=True, output_time_major=True)
        assert outputs.rnn_output.shape.as_list() == [None, 3, 4]
        _, empty, _, empty_lengths = _greedy_graph(0)
        with tw.Session() as sess:
            sess.run(tw.global_variables_initializer())
            got, got_empty, got_empty_lengths = sess.run([outputs, empty, empty_lengths])
    assert got.rnn_output.shape[1:] == (3, 4) and got.rnn_output.shape[0] <= 2
    assert got_empty.rnn_output.shape == (3, 0, 4)
    np.testing.assert_array_equal(got_empty_lengths, [0, 0, 0])


def test_sample_embedding_helper_is_seeded_and_follows_sharp_logits() -> None:
    def build() -> Any:
        helper = s2s.SampleEmbeddingHelper(np.eye(3, dtype=np.float32), [0, 0], end_token=2,
                                           softmax_temperature=0.5, seed=7)
        finished, inputs = helper.initialize()
        logits = tw.constant([[0.0, 50.0, 0.0], [0.0, 0.0, 50.0]])
        ids = helper.sample(0, logits, None)
        done, next_inputs, _ = helper.next_inputs(0, logits, None, ids)
        return finished, inputs, ids, done, next_inputs

    with tw.Graph().as_default(), tw.Session() as sess:
        finished, inputs, ids, done, next_inputs = sess.run(build())
    np.testing.assert_array_equal(finished, [False, False])
    np.testing.assert_array_equal(inputs, np.eye(3)[[0, 0]])
    np.testing.assert_array_equal(ids, [1, 2])
    np.testing.assert_array_equal(done, [False, True])
    np.testing.assert_array_equal(next_inputs, np.eye(3)[[1, 2]])


def test_inference_and_scheduled_helpers() -> None:
    with tw.Graph().as_default():
        helper = s2s.InferenceHelper(
            sample_fn=lambda out: out * 2.0, sample_shape=[2], sample_dtype=tw.float32,
            start_inputs=tw.zeros([3, 2]), end_fn=lambda s: tw.reduce_sum(s, -1) > 3.0)
        assert helper.sample_ids_shape.as_list() == [2]
        outs = tw.constant([[1.0, 1.0], [0.0, 0.5], [3.0, 0.0]])
        ids = helper.sample(0, outs, None)
        done, nxt, _ = helper.next_inputs(0, outs, None, ids)
        always = s2s.ScheduledEmbeddingTrainingHelper(
            np.ones((2, 3, 4), np.float32), [3, 3], np.eye(4, dtype=np.float32) * 5.0,
            sampling_probability=1.0, seed=3, scheduling_seed=4)
        logits = tw.constant([[0.0, 0.0, 60.0, 0.0], [60.0, 0.0, 0.0, 0.0]])
        sampled = always.sample(0, logits, None)
        _, sampled_inputs, _ = always.next_inputs(0, logits, None, sampled)
        with tw.Session() as sess:
            got = sess.run([ids, done, nxt, sampled, sampled_inputs])
    np.testing.assert_allclose(got[0], [[2, 2], [0, 1], [6, 0]])
    np.testing.assert_array_equal(got[1], [True, False, True])
    np.testing.assert_allclose(got[2], got[0])
    np.testing.assert_array_equal(got[3], [2, 0])
    np.testing.assert_allclose(got[4], np.eye(4)[[2, 0]] * 5.0)


def test_decoder_construction_errors() -> None:
    with tw.Graph().as_default():
        with pytest.raises(ValueError, match="sequence_length to be a vector"):
            s2s.TrainingHelper(np.zeros((2, 3, 1), np.float32), [[3, 3]])
        with pytest.raises(ValueError, match="start_tokens must be a vector"):
            s2s.GreedyEmbeddingHelper(np.eye(3, dtype=np.float32), 0, 1)
        with pytest.raises(ValueError, match="end_token must be a scalar"):
            s2s.GreedyEmbeddingHelper(np.eye(3, dtype=np.float32), [0], [1])
        with pytest.raises(TypeError, match="Expected decoder to be type Decoder"):
            s2s.dynamic_decode(object())
        with pytest.raises(TypeError, match="not an RNNCell"):
            s2s.BasicDecoder(object(), None, None)


def test_gradients_train_an_attention_copy_model() -> None:
    vocab, steps, batch, units = 6, 4, 16, 16
    rng = np.random.RandomState(0)
    with tw.Graph().as_default():
        tw.set_random_seed(1)
        src = tw.placeholder(tw.int32, [batch, steps])
        embedding = tw.get_variable("embedding", [vocab + 1, 8])
        memory, enc_state = tw.nn.dynamic_rnn(
            tw.nn.rnn_cell.GRUCell(units), tw.nn.embedding_lookup(embedding, src),
            dtype=tw.float32, scope="encoder")
        target = tw.reverse(src, [1])
        dec_in = tw.concat([tw.fill([batch, 1], vocab), target[:, :-1]], 1)
        cell = s2s.AttentionWrapper(tw.nn.rnn_cell.GRUCell(units),
                                    s2s.LuongAttention(units, memory),
                                    attention_layer_size=units)
        helper = s2s.TrainingHelper(tw.nn.embedding_lookup(embedding, dec_in),
                                    tw.fill([batch], steps))
        decoder = s2s.BasicDecoder(cell, helper,
                                   cell.zero_state(batch, tw.float32).clone(cell_state=enc_state),
                                   output_layer=tw.layers.Dense(vocab))
        outputs, _, _ = s2s.dynamic_decode(decoder)
        loss = sequence_loss(outputs.rnn_output, target, tw.ones([batch, steps]))
        train = tw.train.AdamOptimizer(0.03).minimize(loss)
        with tw.Session() as sess:
            sess.run(tw.global_variables_initializer())
            losses = [sess.run([loss, train], {src: rng.randint(0, vocab, (batch, steps))})[0]
                      for _ in range(80)]
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:3])
