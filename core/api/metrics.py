"""``tw.metrics``: the streaming metrics of ``tf.compat.v1.metrics``.

Contract: each metric opens ``variable_scope(name, <metric>)`` and keeps its running totals in
float32 scalar variables (``accuracy/total``, ``accuracy/count``, ``precision/true_positives/count``
...) that are local, non-trainable and in ``METRIC_VARIABLES``, so
``local_variables_initializer`` resets them. It returns ``(value, update_op)``: `value` reads the
totals, `update_op` adds the batch to them and returns the updated metric. `value` is added to
`metrics_collections` and `update_op` to `updates_collections`. A mean over no values (or over
zero weights) is 0, and so are precision and recall without any positive prediction/label.
`auc` keeps per-threshold confusion counts (``auc/true_positives``, ...) and sums the curve's
area over them as TF does.
Labels, predictions and weights may differ by a trailing axis of size 1 (TF's squeezable
dimensions); other shape mismatches raise `ValueError` at construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api.control_flow_ops import identity
from tensorweave.api.scopes import control_dependencies
from tensorweave.api.state_ops import assign_add
from tensorweave.api.variable_scope import variable_scope
from tensorweave.api.variables import Variable
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.graph import GraphKeys, Tensor, get_default_graph

__all__ = [
    "accuracy", "auc", "false_negatives", "false_positives", "mean", "mean_absolute_error",
    "mean_squared_error", "precision", "recall", "root_mean_squared_error", "true_positives",
]

Collections = Sequence[str] | None


def metric_variable(shape: Any, dtype: Any, validate_shape: bool = True,
                    name: str | None = None) -> Variable:
    """A zero-initialized local variable holding a metric's running state."""
    return Variable(lambda: array_ops.zeros(shape, dtype), trainable=False,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                    validate_shape=validate_shape, name=name)


def _add_to(collections: Collections, value: Any) -> None:
    if collections:
        get_default_graph().add_to_collections(collections, value)


def _squeeze_last(x: Tensor, than: Tensor) -> Tensor:
    """`x` without its last axis when that axis is 1 and makes `x` one rank above `than`."""
    if x.shape.ndims is not None and than.shape.ndims is not None and \
            x.shape.ndims == than.shape.ndims + 1 and x.shape[-1] == 1:
        return array_ops.squeeze(x, [-1])
    return x


def _remove_squeezable_dimensions(predictions: Any, labels: Any,
                                  weights: Any) -> tuple[Tensor, Tensor | None, Tensor | None]:
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels = convert_to_tensor(labels)
        labels, predictions = _squeeze_last(labels, predictions), _squeeze_last(predictions,
                                                                                labels)
        predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    w_rank, p_rank = weights.shape.ndims, predictions.shape.ndims
    if w_rank not in (None, 0) and p_rank is not None:
        if w_rank - p_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
        elif p_rank - w_rank == 1:
            weights = array_ops.expand_dims(weights, -1)
    return predictions, labels, weights


def mean(values: Any, weights: Any = None, metrics_collections: Collections = None,
         updates_collections: Collections = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The (weighted) mean of all `values` seen: ``total / count``."""
    with variable_scope(name, "mean", [values, weights]):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = math_ops.multiply(math_ops.cast(weights, dtypes.float32),
                                        array_ops.ones_like(values))
            values = math_ops.multiply(values, weights)
            num_values = math_ops.reduce_sum(weights)
        update_total = assign_add(total, math_ops.reduce_sum(values))
        with control_dependencies([values]):
            update_count = assign_add(count, num_values)
        value = math_ops.div_no_nan(total, math_ops.maximum(count, 0.0), name="value")
        update_op = math_ops.div_no_nan(update_total, math_ops.maximum(update_count, 0.0),
                                        name="update_op")
        _add_to(metrics_collections, value)
        _add_to(updates_collections, update_op)
        return value, update_op


def accuracy(labels: Any, predictions: Any, weights: Any = None,
             metrics_collections: Collections = None, updates_collections: Collections = None,
             name: str | None = None) -> tuple[Tensor, Tensor]:
    """How often `predictions` equal `labels` (predictions are cast to the labels' dtype)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    if labels.dtype != predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def mean_squared_error(labels: Any, predictions: Any, weights: Any = None,
                       metrics_collections: Collections = None,
                       updates_collections: Collections = None,
                       name: str | None = None) -> tuple[Tensor, Tensor]:
    """The mean of ``(labels - predictions) ** 2``."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    errors = math_ops.squared_difference(labels, predictions)
    return mean(errors, weights, metrics_collections, updates_collections,
                name or "mean_squared_error")


def mean_absolute_error(labels: Any, predictions: Any, weights: Any = None,
                        metrics_collections: Collections = None,
                        updates_collections: Collections = None,
                        name: str | None = None) -> tuple[Tensor, Tensor]:
    """The mean of ``|predictions - labels|``."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    errors = math_ops.abs(predictions - labels)
    return mean(errors, weights, metrics_collections, updates_collections,
                name or "mean_absolute_error")


def root_mean_squared_error(labels: Any, predictions: Any, weights: Any = None,
                            metrics_collections: Collections = None,
                            updates_collections: Collections = None,
                            name: str | None = None) -> tuple[Tensor, Tensor]:
    """The square root of `mean_squared_error`'s running mean."""
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None,
                                         name or "root_mean_squared_error")
    rmse, update_rmse = math_ops.sqrt(mse), math_ops.sqrt(update_mse)
    _add_to(metrics_collections, rmse)
    _add_to(updates_collections, update_rmse)
    return rmse, update_rmse


# -- confusion counts ----------------------------------------------------------------------------


def _bools(labels: Any, predictions: Any, weights: Any) -> tuple[Tensor, Tensor, Any]:
    predictions, labels, weights = _remove_squeezable_dimensions(
        math_ops.cast(predictions, dtypes.bool_), math_ops.cast(labels, dtypes.bool_), weights)
    return labels, predictions, weights


def _count_condition(values: Tensor, weights: Any, metrics_collections: Collections,
                     updates_collections: Collections) -> tuple[Tensor, Tensor]:
    """The running (weighted) number of true `values`."""
    count = metric_variable([], dtypes.float32, name="count")
    values = math_ops.cast(values, dtypes.float32)
    if weights is not None:
        weights = convert_to_tensor(weights)
        if weights.shape.ndims not in (None, 0, values.shape.ndims):
            raise ValueError(f"weights must be a scalar or have the rank of the values "
                             f"({values.shape.ndims}), got shape {weights.shape}")
        values = math_ops.multiply(values, math_ops.cast(weights, dtypes.float32))
    value = identity(count)
    update_op = assign_add(count, math_ops.reduce_sum(values))
    _add_to(metrics_collections, value)
    _add_to(updates_collections, update_op)
    return value, update_op


def _confusion_count(default_name: str, label: bool, prediction: bool) -> Any:
    def metric(labels: Any, predictions: Any, weights: Any = None,
               metrics_collections: Collections = None, updates_collections: Collections = None,
               name: str | None = None) -> tuple[Tensor, Tensor]:
        with variable_scope(name, default_name, [predictions, labels, weights]):
            labels, predictions, weights = _bools(labels, predictions, weights)
            hit = math_ops.logical_and(math_ops.equal(labels, label),
                                       math_ops.equal(predictions, prediction))
            return _count_condition(hit, weights, metrics_collections, updates_collections)

    metric.__name__ = metric.__qualname__ = default_name
    metric.__doc__ = (f"The running (weighted) count of elements whose label is {label} and "
                      f"whose prediction is {prediction}.")
    return metric


true_positives = _confusion_count("true_positives", True, True)
false_positives = _confusion_count("false_positives", False, True)
false_negatives = _confusion_count("false_negatives", True, False)


def _ratio(hits: Tensor, misses: Tensor, name: str) -> Tensor:
    """``hits / (hits + misses)``, 0 when both are 0."""
    total = hits + misses
    return array_ops.where(math_ops.greater(total, 0.0), math_ops.truediv(hits, total),
                           array_ops.zeros_like(total), name=name)


def _precision_or_recall(default_name: str, misses: Any) -> Any:
    def metric(labels: Any, predictions: Any, weights: Any = None,
               metrics_collections: Collections = None, updates_collections: Collections = None,
               name: str | None = None) -> tuple[Tensor, Tensor]:
        with variable_scope(name, default_name, [predictions, labels, weights]):
            labels, predictions, weights = _bools(labels, predictions, weights)
            tp, tp_update = true_positives(labels, predictions, weights)
            other, other_update = misses(labels, predictions, weights)
            value = _ratio(tp, other, "value")
            update_op = _ratio(tp_update, other_update, "update_op")
            _add_to(metrics_collections, value)
            _add_to(updates_collections, update_op)
            return value, update_op

    metric.__name__ = metric.__qualname__ = default_name
    return metric


precision = _precision_or_recall("precision", false_positives)
precision.__doc__ = "``true_positives / (true_positives + false_positives)``."
recall = _precision_or_recall("recall", false_negatives)
recall.__doc__ = "``true_positives / (true_positives + false_negatives)``."


# -- area under the curve ------------------------------------------------------------------------

_AUC_EPSILON = 1e-6  # keeps empty confusion counts from dividing by zero
_SUMMATIONS = {"trapezoidal": lambda a, b: (a + b) / 2.0, "minoring": math_ops.minimum,
               "majoring": math_ops.maximum}


def _confusion_at_thresholds(labels: Any, predictions: Any, thresholds: list[float],
                             weights: Any) -> tuple[dict[str, Variable], dict[str, Tensor]]:
    """Running ``tp``, ``fn``, ``tn`` and ``fp`` counts at each threshold (a prediction above
    the threshold is positive), as variables and as update ops."""
    predictions, labels, weights = _remove_squeezable_dimensions(
        math_ops.cast(predictions, dtypes.float32), math_ops.cast(labels, dtypes.bool_), weights)
    pred_is_pos = math_ops.greater(array_ops.reshape(predictions, [1, -1]),
                                   constant([[t] for t in thresholds], dtypes.float32))
    label_is_pos = array_ops.reshape(labels, [1, -1])
    pred_is_neg, label_is_neg = math_ops.logical_not(pred_is_pos), math_ops.logical_not(
        label_is_pos)
    if weights is not None:
        weights = math_ops.multiply(math_ops.cast(weights, dtypes.float32),
                                    array_ops.ones_like(predictions))
        weights = array_ops.reshape(weights, [1, -1])
    cases = {"tp": ("true_positives", label_is_pos, pred_is_pos),
             "fn": ("false_negatives", label_is_pos, pred_is_neg),
             "tn": ("true_negatives", label_is_neg, pred_is_neg),
             "fp": ("false_positives", label_is_neg, pred_is_pos)}
    values, updates = {}, {}
    for key, (name, label_side, pred_side) in cases.items():
        count = metric_variable([len(thresholds)], dtypes.float32, name=name)
        hits = math_ops.cast(math_ops.logical_and(label_side, pred_side), dtypes.float32)
        if weights is not None:
            hits = math_ops.multiply(hits, weights)
        updates[key] = assign_add(count, math_ops.reduce_sum(hits, 1))
        values[key] = count
    return values, updates


def auc(labels: Any, predictions: Any, weights: Any = None, num_thresholds: int = 200,
        metrics_collections: Collections = None, updates_collections: Collections = None,
        curve: str = "ROC", name: str | None = None, summation_method: str = "trapezoidal",
        thresholds: Sequence[float] | None = None) -> tuple[Tensor, Tensor]:
    """The area under the ROC (or PR) curve, as a Riemann sum over `num_thresholds` thresholds
    in ``[0, 1]`` of the streamed confusion counts; `predictions` are probabilities."""
    with variable_scope(name, "auc", [labels, predictions, weights]):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"curve must be either ROC or PR, {curve} unknown")
        if summation_method == "careful_interpolation":
            if curve == "PR":
                raise ValueError("tensorweave's auc does not implement careful_interpolation "
                                 "for PR curves; use trapezoidal, minoring or majoring")
            summation_method = "trapezoidal"  # what TF computes for ROC
        if summation_method not in _SUMMATIONS:
            raise ValueError(f"Invalid summation_method: {summation_method}")
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
        else:
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        kepsilon = 1e-7  # the end points sit just outside [0, 1]
        edges = [0.0 - kepsilon, *inner, 1.0 + kepsilon]
        values, updates = _confusion_at_thresholds(labels, predictions, edges, weights)
        combine = _SUMMATIONS[summation_method]

        def area(counts: dict[str, Any], op_name: str) -> Tensor:
            tp, fn, tn, fp = (counts[k] for k in ("tp", "fn", "tn", "fp"))
            recall = math_ops.truediv(tp + _AUC_EPSILON, tp + fn + _AUC_EPSILON)
            if curve == "ROC":
                x, y = math_ops.truediv(fp, fp + tn + _AUC_EPSILON), recall
            else:
                x, y = recall, math_ops.truediv(tp + _AUC_EPSILON, tp + fp + _AUC_EPSILON)
            widths = x[:len(edges) - 1] - x[1:]
            return math_ops.reduce_sum(math_ops.multiply(widths, combine(y[:len(edges) - 1],
                                                                         y[1:])), name=op_name)

        value = area(values, "value")
        update_op = area(updates, "update_op")
        _add_to(metrics_collections, value)
        _add_to(updates_collections, update_op)
        return value, update_op
