"""`tw.contrib.seq2seq.sequence_loss`: every reduction against a numpy cross-entropy, a custom
loss function, zero weights, and the rank and flag errors."""

from __future__ import annotations

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
