"""`tw.contrib.losses`' own formulas: ``cosine_distance`` (the axis dropped) and
``mean_pairwise_squared_error`` (divided by ``n`` and ``n ** 2``), against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw

losses = tw.contrib.losses
RNG = np.random.default_rng(5)


def _run(fetches):
    with tw.Session() as sess:
        return sess.run(fetches)


def _randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_cosine_distance_drops_the_axis():
    predictions, labels = _randn(4, 3), _randn(4, 3)
    weights = np.array([1.0, 0.0, 2.0, 0.5], np.float32)  # one weight per row, as contrib takes
    loss = losses.cosine_distance(predictions, labels, axis=1, weights=weights)
    per_row = 1 - np.sum(predictions * labels, axis=1)
    np.testing.assert_allclose(_run(loss), np.sum(per_row * weights) / 3, rtol=1e-5)
    assert loss in tw.losses.get_losses() and loss.dtype == tw.float32
    np.testing.assert_allclose(_run(losses.cosine_distance(predictions, labels, dim=0)),
                               np.mean(1 - np.sum(predictions * labels, axis=0)), rtol=1e-5)
    with pytest.raises(ValueError, match="You must specify 'axis'"):
        losses.cosine_distance(predictions, labels)


def _np_contrib_pairwise(predictions, labels, weights):
    diffs = (predictions - labels).reshape(len(labels), -1)
    size = diffs.shape[1]
    n = np.broadcast_to(np.asarray(weights) != 0, (len(labels),)) * float(size)
    safe = lambda num, den: np.where(den > 0, num / np.where(den > 0, den, 1), 0)  # noqa: E731
    per_item = 2 * safe(np.sum(diffs ** 2, 1), n) - 2 * safe(np.sum(diffs, 1) ** 2, n ** 2)
    return np.sum(per_item) * weights if np.ndim(weights) == 0 else np.sum(per_item * weights)


@pytest.mark.parametrize("weights", [1.0, 2.5, 0.0, np.array([1.0, 0.0, 3.0], np.float32)])
def test_mean_pairwise_squared_error(weights):
    predictions, labels = _randn(3, 2, 2), _randn(3, 2, 2)
    loss = losses.mean_pairwise_squared_error(predictions, labels, weights)
    np.testing.assert_allclose(_run(loss), _np_contrib_pairwise(predictions, labels, weights),
                               rtol=1e-5, atol=1e-6)
    assert loss in tw.losses.get_losses()


def test_mean_pairwise_squared_error_needs_known_ranks():
    unknown = tw.placeholder(tw.float32)
    with pytest.raises(ValueError, match="ndims cannot be None"):
        losses.mean_pairwise_squared_error(unknown, unknown)
    with pytest.raises(ValueError, match="ndims cannot be None"):
        losses.mean_pairwise_squared_error(_randn(2, 3), _randn(2, 3), unknown)
