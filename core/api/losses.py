"""``tw.losses``: the loss functions of ``tf.compat.v1.losses`` and the loss collections.

Contract: every loss builds, under a name scope named after itself (``absolute_difference``,
``softmax_cross_entropy_loss``, ...), the per-element losses in float32 (cross-entropies keep the
logits' dtype) and reduces them with `compute_weighted_loss`: ``losses * weights`` summed, then
divided as the `Reduction` says (by default by the number of non-zero weights, broadcast to the
losses' shape), with ``div_no_nan`` so that all-zero weights give 0. The result has the losses'
dtype and is added to `loss_collection` (``LOSSES`` by default). Weights must be a scalar or have
the losses' rank with each dimension 1 or equal to the losses' one; shapes known at construction
are checked there with TF's `ValueError` (unknown ones fail at run time in the multiply).

Two losses reduce on their own, as TF's: ``cosine_distance`` keeps the reduced `axis` (size 1)
in its per-element losses; ``mean_pairwise_squared_error`` has no `reduction`: per batch item
``b`` it is ``2 * sum(d**2) / (n - 1) - 2 * sum(d)**2 / (n * (n - 1))`` over the differences
``d = predictions - labels`` of the item, ``n`` its count of non-zero weights (a division by a
non-positive count gives 0), times the item's weights, summed over the batch.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops, nn_ops
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.gradients import stop_gradient
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.graph import GraphKeys, Tensor, get_default_graph

__all__ = [
    "Reduction", "absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance",
    "get_losses", "get_regularization_loss", "get_regularization_losses", "get_total_loss",
    "hinge_loss", "huber_loss", "log_loss", "mean_pairwise_squared_error", "mean_squared_error",
    "sigmoid_cross_entropy", "softmax_cross_entropy", "sparse_softmax_cross_entropy",
]


class Reduction:
    """How `compute_weighted_loss` reduces the weighted losses."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key: str) -> None:
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}.")


_BROADCAST_ERROR = "weights can not be broadcast to values."


# -- collections ---------------------------------------------------------------------------------


def add_loss(loss: Any, loss_collection: str | None = GraphKeys.LOSSES) -> None:
    """Add `loss` to `loss_collection` (nothing when it is None)."""
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope: str | None = None,
               loss_collection: str = GraphKeys.LOSSES) -> list[Any]:
    """The losses of `loss_collection`, filtered by `scope`."""
    return get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope: str | None = None) -> list[Any]:
    """The regularization losses, filtered by `scope`."""
    return get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope: str | None = None,
                            name: str = "total_regularization_loss") -> Tensor:
    """The sum of the regularization losses, or a float32 0 when there is none."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant(0.0)


def get_total_loss(add_regularization_losses: bool = True, name: str = "total_loss",
                   scope: str | None = None) -> Tensor:
    """The sum of the losses (and, by default, of the regularization losses)."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope=scope)
    return math_ops.add_n(losses, name=name)


# -- reduction -----------------------------------------------------------------------------------


def _assert_broadcastable(weights: Tensor, values: Tensor) -> None:
    """TF's static ``assert_broadcastable``: weights are a scalar, or of the values' rank with
    each dimension 1 or the values' one."""
    w_shape, v_shape = weights.shape, values.shape
    if w_shape.ndims is None or v_shape.ndims is None or w_shape.ndims == 0:
        return
    if w_shape.ndims != v_shape.ndims:
        raise ValueError(f"{_BROADCAST_ERROR} values.rank={v_shape.ndims}. "
                         f"weights.rank={w_shape.ndims}. values.shape={v_shape}. "
                         f"weights.shape={w_shape}.")
    for i, (w, v) in enumerate(zip(w_shape.as_list(), v_shape.as_list(), strict=True)):
        if w is not None and v is not None and w not in (1, v):
            raise ValueError(f"{_BROADCAST_ERROR} Mismatch at dim {i}. "
                             f"values.shape={v_shape.as_list()} "
                             f"weights.shape={w_shape.as_list()}.")


def _broadcast_weights(weights: Tensor, values: Tensor) -> Tensor:
    if weights.shape.is_fully_defined() and weights.shape == values.shape:
        return weights
    return math_ops.multiply(weights, array_ops.ones_like(values))


def _num_elements(losses: Tensor) -> Tensor:
    with name_scope(None, "num_elements") as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), losses.dtype)


def _num_present(losses: Tensor, weights: Any) -> Tensor:
    """How many losses have a non-zero weight (all of them for a non-zero Python weight)."""
    if isinstance(weights, float) and weights != 0.0:
        return _num_elements(losses)
    with name_scope(None, "num_present", [losses, weights]) as scope:
        weights = math_ops.cast(weights, dtypes.float32)
        present = array_ops.where(math_ops.equal(weights, 0.0), array_ops.zeros_like(weights),
                                  array_ops.ones_like(weights))
        present = _broadcast_weights(present, losses)
        return math_ops.reduce_sum(present, name=scope)


def _safe_mean(total: Tensor, count: Tensor) -> Tensor:
    return math_ops.div_no_nan(total, count, name="value")


def compute_weighted_loss(losses: Any, weights: Any = 1.0, scope: str | None = None,
                          loss_collection: str | None = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """``losses * weights`` reduced as `reduction` says, in the losses' dtype, added to
    `loss_collection`."""
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss", [losses, weights]):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype
        if not isinstance(weights, float):  # a Python float stays one for `_num_present`
            weights = convert_to_tensor(weights)
            _assert_broadcastable(weights, losses)
        losses = math_ops.cast(losses, dtypes.float32)
        float_weights = math_ops.cast(weights, dtypes.float32)
        weighted = math_ops.multiply(losses, float_weights)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = math_ops.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_mean(loss, math_ops.reduce_sum(
                    math_ops.multiply(array_ops.ones_like(losses), float_weights)))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_mean(loss, _num_present(losses, weights))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_mean(loss, _num_elements(losses))
        loss = math_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


# -- losses --------------------------------------------------------------------------------------


def _check_present(**args: Any) -> None:
    for key, value in args.items():
        if value is None:
            raise ValueError(f"{key} must not be None.")


def _float_pair(labels: Any, predictions: Any) -> tuple[Tensor, Tensor]:
    predictions = math_ops.cast(predictions, dtypes.float32)
    labels = math_ops.cast(labels, dtypes.float32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return labels, predictions


def absolute_difference(labels: Any, predictions: Any, weights: Any = 1.0,
                        scope: str | None = None,
                        loss_collection: str | None = GraphKeys.LOSSES,
                        reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted ``|predictions - labels|``."""
    _check_present(labels=labels, predictions=predictions)
    with name_scope(scope, "absolute_difference", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def mean_squared_error(labels: Any, predictions: Any, weights: Any = 1.0,
                       scope: str | None = None,
                       loss_collection: str | None = GraphKeys.LOSSES,
                       reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted ``(predictions - labels) ** 2``."""
    _check_present(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_squared_error", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def huber_loss(labels: Any, predictions: Any, weights: Any = 1.0, delta: float = 1.0,
               scope: str | None = None, loss_collection: str | None = GraphKeys.LOSSES,
               reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted ``0.5 * e ** 2`` for ``|e| <= delta``, else ``delta * (|e| - 0.5 * delta)``."""
    _check_present(labels=labels, predictions=predictions)
    with name_scope(scope, "huber_loss", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        abs_error = math_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        losses = math_ops.add(
            math_ops.multiply(constant(0.5, quadratic.dtype),
                              math_ops.multiply(quadratic, quadratic)),
            math_ops.multiply(delta, linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def log_loss(labels: Any, predictions: Any, weights: Any = 1.0, epsilon: float = 1e-7,
             scope: str | None = None, loss_collection: str | None = GraphKeys.LOSSES,
             reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted ``-labels * log(p + eps) - (1 - labels) * log(1 - p + eps)``."""
    _check_present(labels=labels, predictions=predictions)
    with name_scope(scope, "log_loss", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        positive = math_ops.multiply(labels, math_ops.log(predictions + epsilon))
        negative = math_ops.multiply(1 - labels, math_ops.log(1 - predictions + epsilon))
        losses = math_ops.negative(positive) - negative
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def hinge_loss(labels: Any, logits: Any, weights: Any = 1.0, scope: str | None = None,
               loss_collection: str | None = GraphKeys.LOSSES,
               reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted ``max(0, 1 - (2 * labels - 1) * logits)`` for 0/1 `labels`."""
    _check_present(labels=labels, logits=logits)
    with name_scope(scope, "hinge_loss", [logits, labels, weights]) as scope:
        labels, logits = _float_pair(labels, logits)
        all_ones = array_ops.ones_like(labels)
        signs = math_ops.subtract(2 * labels, all_ones)
        losses = nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(signs, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels: Any, logits: Any, weights: Any = 1.0,
                          label_smoothing: float = 0, scope: str | None = None,
                          loss_collection: str | None = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted sigmoid cross-entropy; labels smoothed towards 1/2 by `label_smoothing`."""
    _check_present(multi_class_labels=multi_class_labels, logits=logits)
    with name_scope(scope, "sigmoid_cross_entropy_loss",
                    [logits, multi_class_labels, weights]) as scope:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(multi_class_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                          name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels: Any, logits: Any, weights: Any = 1.0,
                          label_smoothing: float = 0, scope: str | None = None,
                          loss_collection: str | None = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted softmax cross-entropy of one-hot labels, smoothed towards uniform by
    `label_smoothing`."""
    _check_present(onehot_labels=onehot_labels, logits=logits)
    with name_scope(scope, "softmax_cross_entropy_loss",
                    [logits, onehot_labels, weights]) as scope:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(onehot_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(labels)[-1], logits.dtype)
            labels = labels * (1.0 - label_smoothing) + label_smoothing / num_classes
        labels = stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits,
                                                             name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def _remove_squeezable_dimensions(labels: Tensor, logits: Tensor,
                                  weights: Any) -> tuple[Tensor, Any]:
    """Sparse `labels` of `logits`' rank lose their last axis (if it is 1), and so do `weights`
    one rank above the labels."""
    labels_rank, logits_rank = labels.shape.ndims, logits.shape.ndims
    if labels_rank is not None and logits_rank is not None:
        if labels_rank == logits_rank and labels.shape[-1] == 1:
            labels = array_ops.squeeze(labels, [-1])
    if isinstance(weights, float):  # kept a Python number for `_num_present`'s shortcut
        return labels, weights
    weights = convert_to_tensor(weights)
    if weights.shape.ndims is not None and labels.shape.ndims is not None and \
            weights.shape.ndims - labels.shape.ndims == 1:
        weights = array_ops.squeeze(weights, [-1])
    return labels, weights


def sparse_softmax_cross_entropy(labels: Any, logits: Any, weights: Any = 1.0,
                                 scope: str | None = None,
                                 loss_collection: str | None = GraphKeys.LOSSES,
                                 reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted softmax cross-entropy of integer class `labels` (``[batch]`` or
    ``[batch, 1]``)."""
    _check_present(labels=labels, logits=logits)
    with name_scope(scope, "sparse_softmax_cross_entropy_loss",
                    [logits, labels, weights]) as scope:
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels)
        labels, weights = _remove_squeezable_dimensions(labels, logits, weights)
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                                 name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)



def cosine_distance(labels: Any, predictions: Any, axis: int | None = None, weights: Any = 1.0,
                    scope: str | None = None, loss_collection: str | None = GraphKeys.LOSSES,
                    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
                    dim: int | None = None) -> Tensor:
    """Weighted ``1 - sum(labels * predictions, axis)`` of unit-normalized vectors along
    `axis` (kept, with size 1)."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    _check_present(labels=labels, predictions=predictions)
    with name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        products = math_ops.multiply(predictions, labels)
        losses = 1 - math_ops.reduce_sum(products, axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def _present_per_item(diffs: Tensor, weights: Tensor, inner_axes: Tensor) -> Tensor:
    """Per batch item, how many elements of `diffs` have a non-zero weight (kept dims)."""
    with name_scope(None, "num_present", [diffs, weights]) as scope:
        present = array_ops.where(math_ops.equal(weights, 0.0), array_ops.zeros_like(weights),
                                  array_ops.ones_like(weights))
        present = _broadcast_weights(present, diffs)
        return math_ops.reduce_sum(present, axis=inner_axes, keepdims=True, name=scope)


def mean_pairwise_squared_error(labels: Any, predictions: Any, weights: Any = 1.0,
                                scope: str | None = None,
                                loss_collection: str | None = GraphKeys.LOSSES) -> Tensor:
    """The weighted mean squared difference of the pairwise differences of each batch item's
    predictions and labels; see the module docstring."""
    _check_present(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_pairwise_squared_error",
                    [predictions, labels, weights]) as scope:
        weights = math_ops.cast(weights, dtypes.float32)
        labels, predictions = _float_pair(labels, predictions)
        _assert_broadcastable(weights, labels)
        diffs = math_ops.subtract(predictions, labels)
        inner_axes = array_ops.range(1, array_ops.rank(diffs))
        count = _present_per_item(diffs, weights, inner_axes)
        sum_squares = math_ops.reduce_sum(math_ops.square(diffs), axis=inner_axes, keepdims=True)
        # an item with no weighted element divides by 0, which div_no_nan turns into 0
        term1 = 2.0 * math_ops.div_no_nan(sum_squares, math_ops.maximum(count - 1, 0.0),
                                          name="value")
        sums = math_ops.reduce_sum(diffs, axis=inner_axes, keepdims=True)
        term2 = 2.0 * math_ops.div_no_nan(
            math_ops.square(sums), math_ops.maximum(math_ops.multiply(count, count - 1), 0.0),
            name="value")
        loss = math_ops.reduce_sum(math_ops.multiply(term1 - term2, weights))
        mean_loss = array_ops.where(math_ops.reduce_sum(count) > 0, loss,
                                    array_ops.zeros_like(loss), name="value")
        add_loss(mean_loss, loss_collection)
        return mean_loss
