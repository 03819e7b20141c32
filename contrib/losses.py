"""``tf.contrib.losses`` (also ``tf.contrib.slim.losses``): TF1's deprecated loss functions, which
take the predictions or logits first, as wrappers of `tensorweave.losses`.

Contract: each function is the `tensorweave.losses` one with contrib's argument order and
names (``softmax_cross_entropy(logits, onehot_labels, ...)``), the default reduction (sum over
the non-zero weights) and the ``LOSSES`` collection; the collection functions are
`tensorweave.losses`' own.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import losses as _losses
from tensorweave.api.losses import (
    add_loss,
    compute_weighted_loss,
    get_losses,
    get_regularization_losses,
    get_total_loss,
)
from tensorweave.framework.graph import Tensor

__all__ = [
    "absolute_difference", "add_loss", "compute_weighted_loss", "get_losses",
    "get_regularization_losses", "get_total_loss", "hinge_loss", "log_loss",
    "mean_squared_error", "sigmoid_cross_entropy", "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]


def absolute_difference(predictions: Any, labels: Any = None, weights: Any = 1.0,
                        scope: str | None = None) -> Tensor:
    """Weighted mean of ``|predictions - labels|``."""
    return _losses.absolute_difference(labels, predictions, weights, scope=scope)


def mean_squared_error(predictions: Any, labels: Any = None, weights: Any = 1.0,
                       scope: str | None = None) -> Tensor:
    """Weighted mean of ``(predictions - labels) ** 2``."""
    return _losses.mean_squared_error(labels, predictions, weights, scope=scope)


def log_loss(predictions: Any, labels: Any = None, weights: Any = 1.0, epsilon: float = 1e-7,
             scope: str | None = None) -> Tensor:
    """Weighted mean of the binary cross-entropy of probabilities `predictions`."""
    return _losses.log_loss(labels, predictions, weights, epsilon=epsilon, scope=scope)


def hinge_loss(logits: Any, labels: Any = None, scope: str | None = None) -> Tensor:
    """Mean of ``max(0, 1 - (2 * labels - 1) * logits)``."""
    return _losses.hinge_loss(labels, logits, scope=scope)


def sigmoid_cross_entropy(logits: Any, multi_class_labels: Any, weights: Any = 1.0,
                          label_smoothing: float = 0, scope: str | None = None) -> Tensor:
    """Weighted mean of the element-wise sigmoid cross-entropy."""
    return _losses.sigmoid_cross_entropy(multi_class_labels, logits, weights,
                                         label_smoothing=label_smoothing, scope=scope)


def softmax_cross_entropy(logits: Any, onehot_labels: Any, weights: Any = 1.0,
                          label_smoothing: float = 0, scope: str | None = None) -> Tensor:
    """Weighted mean of the softmax cross-entropy of each row of `logits`."""
    return _losses.softmax_cross_entropy(onehot_labels, logits, weights,
                                         label_smoothing=label_smoothing, scope=scope)


def sparse_softmax_cross_entropy(logits: Any, labels: Any, weights: Any = 1.0,
                                 scope: str | None = None) -> Tensor:
    """Weighted mean of the softmax cross-entropy against integer class `labels`."""
    return _losses.sparse_softmax_cross_entropy(labels, logits, weights, scope=scope)
