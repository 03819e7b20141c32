"""`tw.contrib.seq2seq`'s beam search. Utilities: `gather_tree` (the ``GatherTree`` op) against
TF's documented example and a numpy backtracking, lengths and end tokens, bad parents and
shapes; `tile_batch` on tensors and nests. `BeamSearchDecoder`: against a brute-force
enumeration of every sequence of a tiny vocabulary (a table cell whose logits depend on the
previous token and on its state, so parent-ordered state gathering matters), with and without a
length penalty; beam width 1 against greedy decoding; finished beams and lengths in a
hand-computed case; a length penalty changing the winner; an attention decoder over a tiled
memory end to end; construction errors."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import tensorweave as tw

s2s = tw.contrib.seq2seq


def run(fetches: object) -> object:
    with tw.Session() as sess:
        return sess.run(fetches)


def backtrack(step_ids: np.ndarray, parent_ids: np.ndarray, lengths: np.ndarray,
              end: int) -> np.ndarray:
    steps, batch, width = step_ids.shape
    out = np.full_like(step_ids, end)
    for b in range(batch):
        n = min(steps, lengths[b])
        for k in range(width):
            beam = k
            for t in range(n - 1, -1, -1):
                out[t, b, k] = step_ids[t, b, beam]
                beam = parent_ids[t, b, beam]
            seen = False
            for t in range(n):
                if seen:
                    out[t, b, k] = end
                seen = seen or out[t, b, k] == end
    return out


def test_gather_tree_documented_example() -> None:
    with tw.Graph().as_default():
        beams = s2s.gather_tree([[[1, 2, 3]], [[4, 5, 6]], [[7, 8, 9]]],
                                [[[0, 0, 0]], [[0, 1, 1]], [[2, 1, 2]]], [3], 10)
        assert beams.shape.as_list() == [3, 1, 3] and beams.op.type == "GatherTree"
        got = run(beams)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [[[2, 2, 2]], [[6, 5, 6]], [[7, 8, 9]]])


def test_gather_tree_lengths_and_end_tokens_against_numpy() -> None:
    rng = np.random.RandomState(0)
    step_ids = rng.randint(0, 5, (6, 3, 4)).astype(np.int32)
    parent_ids = rng.randint(0, 4, (6, 3, 4)).astype(np.int32)
    lengths = np.array([6, 3, 0], np.int32)
    with tw.Graph().as_default():
        got = run(s2s.gather_tree(step_ids, parent_ids, lengths, 4))
    np.testing.assert_array_equal(got, backtrack(step_ids, parent_ids, lengths, 4))
    assert (got[:, 2] == 4).all() and (got[3:, 1] == 4).all()


def test_gather_tree_errors() -> None:
    with tw.Graph().as_default():
        bad = s2s.gather_tree([[[0, 1]], [[1, 0]]], [[[0, 0]], [[5, 0]]], [2], 9)
        with pytest.raises(tw.errors.InvalidArgumentError, match="invalid parent id 5"):
            run(bad)
        with pytest.raises(ValueError, match="rank 3"):
            s2s.gather_tree([[1, 2]], [[1, 2]], [1], 0)
        with pytest.raises(ValueError, match="rank 0"):
            s2s.gather_tree([[[1]]], [[[0]]], [1], [0])
        with pytest.raises(ValueError):
            s2s.gather_tree(np.zeros((2, 3, 2), np.int32), np.zeros((2, 3, 2), np.int32),
                            [1, 1], 0)
        with pytest.raises(TypeError):
            s2s.gather_tree(np.zeros((1, 1, 1), np.float32), np.zeros((1, 1, 1), np.float32),
                            [1], 0.0)


def test_tile_batch() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tw.Graph().as_default():
        tiled = s2s.tile_batch(x, 3)
        nest = s2s.tile_batch((tw.constant([1, 2]), {"m": tw.ones([2, 1, 2])}), 2)
        assert tiled.shape.as_list() == [6, 3] and nest[1]["m"].shape.as_list() == [4, 1, 2]
        with pytest.raises(ValueError, match="rank"):
            s2s.tile_batch(tw.constant(1.0), 2)
        got, got_nest = run([tiled, nest])
    np.testing.assert_array_equal(got, np.repeat(x, 3, axis=0))
    np.testing.assert_array_equal(got_nest[0], [1, 1, 2, 2])


# -- BeamSearchDecoder -----------------------------------------------------------------------


class TableCell(tw.nn.rnn_cell.RNNCell):
    """Inputs are one-hot previous tokens; the state counts them; the logits are
    ``onehot @ A + counts @ B``."""

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        super().__init__()
        self._a, self._b = a, b

    @property
    def state_size(self) -> int:
        return self._a.shape[0]

    @property
    def output_size(self) -> int:
        return self._a.shape[1]

    def build(self, inputs_shape: Any) -> None:
        pass

    def call(self, inputs: Any, state: Any) -> tuple[Any, Any]:
        counts = state + inputs
        return tw.matmul(inputs, self._a) + tw.matmul(counts, self._b), counts


def log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max()
    return x - np.log(np.exp(x).sum())


def sequence_log_prob(a: np.ndarray, b: np.ndarray, start: int, seq: tuple[int, ...],
                      end: int) -> float:
    counts, prev, total = np.zeros(a.shape[0]), start, 0.0
    for token in seq:
        onehot = np.eye(a.shape[0])[prev]
        counts = counts + onehot
        total += log_softmax(onehot @ a + counts @ b)[token]
        if token == end:
            break
        prev = token
    return total


def brute_force(a: np.ndarray, b: np.ndarray, start: int, end: int, steps: int,
                weight: float) -> list[tuple[float, tuple[int, ...], int, float]]:
    """Every sequence of `steps` tokens (padded with `end` after the first `end`), as
    ``(score, ids, length, log_prob)``, best first. TF 1.15 counts a hypothesis's end token in
    its length only from the step after it was emitted: one that ends exactly at the last step
    is scored without it."""
    found = []
    for seq in itertools.product(range(a.shape[1]), repeat=steps):
        first_end = seq.index(end) if end in seq else None
        if first_end is not None and any(t != end for t in seq[first_end:]):
            continue
        length = steps if first_end is None else first_end + 1
        scored = steps if first_end is None else (
            first_end if first_end == steps - 1 else first_end + 1)
        lp = sequence_log_prob(a, b, start, seq, end)
        found.append((lp / ((5.0 + scored) / 6.0) ** weight, seq, length, lp))
    return sorted(found, key=lambda f: -f[0])


def beam_decode(a: np.ndarray, b: np.ndarray, starts: list[int], end: int, width: int,
                steps: int, **kwargs: Any) -> tuple[Any, Any, Any]:
    with tw.Graph().as_default():
        cell = TableCell(tw.constant(a), tw.constant(b))
        embedding = np.eye(a.shape[0], dtype=np.float32)
        decoder = s2s.BeamSearchDecoder(cell, embedding, starts, end,
                                        cell.zero_state(len(starts) * width, tw.float32),
                                        width, **kwargs)
        outputs, state, _ = s2s.dynamic_decode(decoder, maximum_iterations=steps)
        assert isinstance(outputs, s2s.FinalBeamSearchDecoderOutput)
        assert outputs.predicted_ids.shape.as_list() == [len(starts), None, width]
        assert isinstance(state, s2s.BeamSearchDecoderState)
        return (*run((outputs, state)), decoder.output_dtype)


@pytest.mark.parametrize("weight", [0.0, 0.8])
def test_beam_search_matches_brute_force(weight: float) -> None:
    # Vocabulary {0 (end), 1, 2} plus start token 3, 4 steps: the 15 hypotheses of 3 tokens
    # all fit in 15 beams, so the search is exhaustive and must return the exact top 15 of
    # the 31 complete hypotheses.
    rng = np.random.RandomState(7)
    a, b = rng.randn(4, 3).astype(np.float32), rng.randn(4, 3).astype(np.float32)
    width, steps, starts = 15, 4, [3, 1]
    outputs, state, out_dtype = beam_decode(a, b, starts, 0, width, steps,
                                            length_penalty_weight=weight)
    assert out_dtype.scores == tw.float32 and out_dtype.predicted_ids == tw.int32
    ids = outputs.predicted_ids
    assert ids.dtype == np.int32 and ids.shape == (2, steps, width)
    assert state.lengths.dtype == np.int64
    for entry, start in enumerate(starts):
        expected = brute_force(a.astype(np.float64), b.astype(np.float64), start, 0, steps,
                               weight)
        gaps = -np.diff([e[0] for e in expected[:width + 1]])
        assert gaps.min() > 1e-4  # the setup is tie-free, so the order is determined
        top = expected[:width]
        np.testing.assert_array_equal(ids[entry].T, [e[1] for e in top])
        np.testing.assert_allclose(outputs.beam_search_decoder_output.scores[entry, -1],
                                   [e[0] for e in top], rtol=1e-5)
        np.testing.assert_array_equal(state.lengths[entry], [e[2] for e in top])
        np.testing.assert_allclose(state.log_probs[entry], [e[3] for e in top], rtol=1e-5)
        np.testing.assert_array_equal(state.finished[entry], [0 in e[1] for e in top])


def test_beam_width_one_is_greedy_decoding() -> None:
    rng = np.random.RandomState(3)
    a, b = rng.randn(6, 5).astype(np.float32), 0.3 * rng.randn(6, 5).astype(np.float32)
    starts = [5, 2, 4]
    outputs, state, _ = beam_decode(a, b, starts, 0, 1, 7)
    with tw.Graph().as_default():
        cell = TableCell(tw.constant(a), tw.constant(b))
        helper = s2s.GreedyEmbeddingHelper(np.eye(6, dtype=np.float32), starts, 0)
        decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(3, tw.float32))
        greedy, _, greedy_lengths = run(s2s.dynamic_decode(decoder, impute_finished=True,
                                                           maximum_iterations=7))
    np.testing.assert_array_equal(outputs.predicted_ids[:, :, 0], greedy.sample_id)
    np.testing.assert_array_equal(state.lengths[:, 0], greedy_lengths)
    log_probs = greedy.rnn_output - np.log(np.exp(greedy.rnn_output).sum(-1, keepdims=True))
    picked = np.take_along_axis(log_probs, greedy.sample_id[..., None], -1)[..., 0]
    mask = np.arange(7)[None] < greedy_lengths[:, None]
    np.testing.assert_allclose(state.log_probs[:, 0], (picked * mask).sum(1), rtol=1e-5)


def table(rows: dict[int, list[float]], vocab: int = 3, tokens: int = 4) -> np.ndarray:
    """Logits ``log p`` after each previous token (uniform for unlisted ones)."""
    out = np.zeros((tokens, vocab), np.float32)
    for prev, probs in rows.items():
        out[prev] = np.log(probs)
    return out


def test_finished_beams_extend_with_end_token_at_no_cost() -> None:
    # From the start token (3): p(end)=.6, p(1)=.3. After 1: p(end)=.9. Both beams finish
    # at step 1 ([end, end] keeps log .6), so decoding stops after two of ten steps.
    a = table({3: [0.6, 0.3, 0.1], 1: [0.9, 0.05, 0.05]})
    outputs, state, _ = beam_decode(a, np.zeros_like(a), [3], 0, 2, 10)
    step = outputs.beam_search_decoder_output
    np.testing.assert_array_equal(outputs.predicted_ids[0], [[0, 1], [0, 0]])
    np.testing.assert_array_equal(step.predicted_ids[0], [[0, 1], [0, 0]])
    np.testing.assert_array_equal(step.parent_ids[0], [[0, 0], [0, 1]])
    np.testing.assert_allclose(step.scores[0], np.log([[0.6, 0.3], [0.6, 0.27]]), rtol=1e-5)
    np.testing.assert_allclose(state.log_probs[0], np.log([0.6, 0.27]), rtol=1e-5)
    np.testing.assert_array_equal(state.lengths[0], [1, 2])
    assert state.finished.all()


def test_length_penalty_changes_the_winner() -> None:
    # [end] has log p = log .55; [1, 2, end] has log(.45 * .95 * .95). Scored when emitted,
    # the long one's length is 2 (its end token counts from the next step on).
    a = table({3: [0.55, 0.45, 1e-6], 1: [0.025, 0.025, 0.95], 2: [0.95, 0.025, 0.025]})
    short, long_ = np.log(0.55), np.log(0.45 * 0.95 * 0.95)
    for weight, winner in ((0.0, [0, 0, 0]), (3.0, [1, 2, 0])):
        outputs, state, _ = beam_decode(a, np.zeros_like(a), [3], 0, 2, 6,
                                        length_penalty_weight=weight)
        np.testing.assert_array_equal(outputs.predicted_ids[0, :, 0], winner)
        scores = sorted([short, long_ / (7.0 / 6.0) ** weight], reverse=True)
        np.testing.assert_allclose(outputs.beam_search_decoder_output.scores[0, -1], scores,
                                   rtol=1e-5)
        assert sorted(state.lengths[0].tolist()) == [1, 3]


def test_attention_decoder_over_tiled_memory() -> None:
    width, vocab, steps = 3, 7, 6
    rng = np.random.RandomState(5)
    memory_value = rng.randn(2, 5, 6).astype(np.float32)
    lengths_value = np.array([5, 3], np.int32)
    with tw.Graph().as_default():
        memory = tw.placeholder(tw.float32, [None, 5, 6])
        memory_lengths = tw.placeholder(tw.int32, [None])
        batch = tw.shape(memory)[0]
        tiled_memory, tiled_lengths = s2s.tile_batch((memory, memory_lengths), width)
        mechanism = s2s.LuongAttention(8, tiled_memory, memory_sequence_length=tiled_lengths)
        cell = s2s.AttentionWrapper(tw.nn.rnn_cell.LSTMCell(8), mechanism,
                                    attention_layer_size=8, alignment_history=True)
        embedding = tw.constant(rng.randn(vocab, 4).astype(np.float32))
        decoder = s2s.BeamSearchDecoder(
            cell, embedding, tw.fill([batch], 1), 0,
            cell.zero_state(batch * width, tw.float32), width,
            output_layer=tw.layers.Dense(vocab), length_penalty_weight=0.6,
            coverage_penalty_weight=0.4)
        outputs, state, _ = s2s.dynamic_decode(decoder, maximum_iterations=steps)
        history = state.cell_state.alignment_history
        assert isinstance(history, tw.Tensor) and history.shape.as_list() == [None, None, 5]
        assert state.accumulated_attention_probs.shape.as_list() == [None, width, 5]
        fetches = (outputs, state.lengths, history)
        with tw.Session() as sess:
            sess.run(tw.global_variables_initializer())
            both = sess.run(fetches, {memory: memory_value, memory_lengths: lengths_value})
            alone = [sess.run(fetches, {memory: memory_value[i:i + 1],
                                        memory_lengths: lengths_value[i:i + 1]})
                     for i in range(2)]
    out, lengths, hist = both
    time = out.predicted_ids.shape[1]
    assert out.predicted_ids.shape == (2, time, width) and 1 <= time <= steps
    assert hist.shape == (time, 2 * width, 5)
    np.testing.assert_allclose(hist.sum(-1), 1.0, rtol=1e-5)
    assert (hist.reshape(time, 2, width, 5)[:, 1, :, 3:] == 0).all()
    final_scores = out.beam_search_decoder_output.scores[:, -1]
    assert (np.diff(final_scores, axis=1) <= 0).all()
    # Batch entries are searched independently: decoding each alone gives the same beams.
    for i, (single, single_lengths, _) in enumerate(alone):
        t = single.predicted_ids.shape[1]
        np.testing.assert_array_equal(single.predicted_ids[0], out.predicted_ids[i, :t])
        assert (out.predicted_ids[i, t:] == 0).all()
        np.testing.assert_array_equal(single_lengths[0], lengths[i])


def test_beam_search_decoder_construction_errors() -> None:
    with tw.Graph().as_default():
        cell = TableCell(tw.constant(np.zeros((4, 3), np.float32)),
                         tw.constant(np.zeros((4, 3), np.float32)))
        embedding = np.eye(4, dtype=np.float32)
        state = cell.zero_state(4, tw.float32)
        with pytest.raises(ValueError, match="start_tokens must be a vector"):
            s2s.BeamSearchDecoder(cell, embedding, [[3]], 0, state, 2)
        with pytest.raises(ValueError, match="end_token must be a scalar"):
            s2s.BeamSearchDecoder(cell, embedding, [3, 3], [0], state, 2)
        with pytest.raises(ValueError, match="zero_state with batch_size"):
            s2s.BeamSearchDecoder(cell, embedding, [3, 3], 0, cell.zero_state(2, tw.float32),
                                  2)
        with pytest.raises(ValueError, match="beam_width"):
            s2s.BeamSearchDecoder(cell, embedding, [3, 3], 0, state, 0)
        with pytest.raises(TypeError, match="output_layer"):
            s2s.BeamSearchDecoder(cell, embedding, [3, 3], 0, state, 2, output_layer=3)
        with pytest.raises(TypeError, match="not an RNNCell"):
            s2s.BeamSearchDecoder(object(), embedding, [3, 3], 0, state, 2)
        with pytest.raises(ValueError, match="no cell is attentional"):
            s2s.BeamSearchDecoder(cell, embedding, [3, 3], 0, state, 2,
                                  coverage_penalty_weight=0.5).initialize()
