"""``tf.contrib.losses`` (also ``tf.contrib.slim.losses``): TF1's deprecated loss functions, which
take the predictions or logits first, as wrappers of `tensorweave.losses`.

Contract: each function is the `tensorweave.losses` one with contrib's argument order and
names (``softmax_cross_entropy(logits, onehot_labels, ...)``), the default reduction (sum over
the non-zero weights) and the ``LOSSES`` collection; the collection functions are
`tensorweave.losses`' own. Contrib's own formulas: ``cosine_distance`` drops the reduced `axis`
from its per-element losses; ``mean_pairwise_squared_error`` divides per batch item by ``n`` and
``n ** 2`` (not ``n - 1`` and ``n * (n - 1)`` as `tensorweave.losses`), where ``n`` is the
item's count of non-zero weights times the elements each weight covers, and sums the items'
losses times their weights (rank-1 weights, or a scalar for the whole sum); it needs the ranks of
the inputs and weights at construction (`ValueError`).
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api import losses as _losses
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.losses import (
    add_loss,
    compute_weighted_loss,
    get_losses,
    get_regularization_losses,
    get_total_loss,
)
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance", "get_losses",
    "get_regularization_losses", "get_total_loss", "hinge_loss", "log_loss",
    "mean_pairwise_squared_error", "mean_squared_error", "sigmoid_cross_entropy",
    "softmax_cross_entropy", "sparse_softmax_cross_entropy",
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


def cosine_distance(predictions: Any, labels: Any = None, axis: int | None = None,
                    weights: Any = 1.0, scope: str | None = None,
                    dim: int | None = None) -> Tensor:
    """Weighted mean of ``1 - sum(predictions * labels, axis)`` (`axis` dropped)."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    with name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]) as scope:
        labels, predictions = _losses._float_pair(labels, predictions)
        losses = 1 - math_ops.reduce_sum(math_ops.multiply(predictions, labels), axis=[axis])
        return _losses.compute_weighted_loss(losses, weights, scope=scope)


def _present_per_item(diffs: Tensor, weights: Tensor) -> Tensor:
    """Per batch item, the non-zero weights times the elements of `diffs` each one covers."""
    if weights.shape.ndims == 0:
        batch = array_ops.shape(diffs)[0]
        per_item = math_ops.cast(array_ops.size(diffs), dtypes.float32) / math_ops.cast(
            batch, dtypes.float32)
        per_item = array_ops.where(math_ops.equal(weights, 0.0), 0.0, per_item)
        return array_ops.ones(array_ops.reshape(batch, [1])) * per_item
    nonzero = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(weights, 0.0), dtypes.float32),
                                  axis=list(range(1, weights.shape.ndims)))
    covered = array_ops.shape(diffs)[weights.shape.ndims:]
    return nonzero * math_ops.cast(math_ops.reduce_prod(covered), dtypes.float32)


def _safe_div(numerator: Tensor, denominator: Tensor) -> Tensor:
    positive = math_ops.greater(denominator, 0.0)
    safe = array_ops.where(positive, denominator, array_ops.ones_like(denominator))
    return array_ops.where(positive, numerator / safe, array_ops.zeros_like(numerator))


def mean_pairwise_squared_error(predictions: Any, labels: Any = None, weights: Any = 1.0,
                                scope: str | None = None) -> Tensor:
    """The weighted squared differences of the pairwise differences within each batch item;
    see the module docstring."""
    with name_scope(scope, "mean_pairwise_squared_error",
                    [predictions, labels, weights]) as scope:
        labels, predictions = _losses._float_pair(labels, predictions)
        weights = math_ops.cast(convert_to_tensor(weights), dtypes.float32)
        diffs = math_ops.subtract(predictions, labels)
        if diffs.shape.ndims is None:
            raise ValueError("diffs.get_shape().ndims cannot be None")
        if weights.shape.ndims is None:
            raise ValueError("weights.get_shape().ndims cannot be None")
        inner = list(range(1, diffs.shape.ndims))
        count = _present_per_item(diffs, weights)
        term1 = 2.0 * _safe_div(math_ops.reduce_sum(math_ops.square(diffs), axis=inner), count)
        term2 = 2.0 * _safe_div(math_ops.square(math_ops.reduce_sum(diffs, axis=inner)),
                                math_ops.square(count))
        per_item = term1 - term2
        if weights.shape.ndims == 0:
            loss = math_ops.reduce_sum(per_item) * weights
        else:
            loss = math_ops.reduce_sum(math_ops.multiply(per_item, weights))
        mean_loss = array_ops.where(math_ops.reduce_sum(count) > 0, loss,
                                    array_ops.zeros_like(loss), name="value")
        add_loss(mean_loss)
        return mean_loss
