"""``tf.contrib.metrics`` (also ``tf.contrib.slim.metrics``): the ``streaming_*`` metrics, which
take the predictions first, as wrappers of `tensorweave.metrics`, and metric aggregation.

Contract: ``streaming_<m>(predictions, labels, weights=None, metrics_collections=None,
updates_collections=None, name=None, ...)`` is ``tw.metrics.<m>(labels, predictions, ...)``
(``streaming_mean(values, ...)`` is ``tw.metrics.mean``): a ``(value, update_op)`` pair over
local variables. `aggregate_metrics` splits pairs into a list of values and a list of update
ops; `aggregate_metric_map` does it for a name -> pair dict, giving two dicts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import metrics as _metrics
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "aggregate_metric_map", "aggregate_metrics", "streaming_accuracy", "streaming_auc",
    "streaming_false_negatives", "streaming_false_positives", "streaming_mean",
    "streaming_mean_absolute_error", "streaming_mean_squared_error", "streaming_precision",
    "streaming_recall", "streaming_root_mean_squared_error", "streaming_true_positives",
]

Metric = Callable[..., tuple[Tensor, Tensor]]


def _predictions_first(metric: Metric) -> Metric:
    def streaming(predictions: Any, labels: Any, weights: Any = None, *args: Any,
                  **kwargs: Any) -> tuple[Tensor, Tensor]:
        return metric(labels, predictions, weights, *args, **kwargs)

    streaming.__name__ = f"streaming_{metric.__name__}"
    streaming.__doc__ = f"``tw.metrics.{metric.__name__}`` with `predictions` first."
    return streaming


streaming_mean = _metrics.mean
streaming_accuracy = _predictions_first(_metrics.accuracy)
streaming_auc = _predictions_first(_metrics.auc)
streaming_false_negatives = _predictions_first(_metrics.false_negatives)
streaming_false_positives = _predictions_first(_metrics.false_positives)
streaming_mean_absolute_error = _predictions_first(_metrics.mean_absolute_error)
streaming_mean_squared_error = _predictions_first(_metrics.mean_squared_error)
streaming_precision = _predictions_first(_metrics.precision)
streaming_recall = _predictions_first(_metrics.recall)
streaming_root_mean_squared_error = _predictions_first(_metrics.root_mean_squared_error)
streaming_true_positives = _predictions_first(_metrics.true_positives)


def aggregate_metrics(*value_update_tuples: tuple[Any, Any]) -> tuple[list[Any], list[Any]]:
    """The values and the update ops of ``(value, update_op)`` pairs, as two lists."""
    if not value_update_tuples:
        raise ValueError("Expected at least one value_tensor/update_op pair")
    values, updates = zip(*value_update_tuples, strict=True)
    return list(values), list(updates)


def aggregate_metric_map(names_to_tuples: dict[str, tuple[Any, Any]]
                         ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``{name: value}`` and ``{name: update_op}`` from ``{name: (value, update_op)}``."""
    names = list(names_to_tuples)
    values, updates = aggregate_metrics(*(names_to_tuples[n] for n in names))
    return dict(zip(names, values, strict=True)), dict(zip(names, updates, strict=True))
