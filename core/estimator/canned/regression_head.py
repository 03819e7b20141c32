"""The regression head (TF's ``_RegressionHeadWithMeanSquaredErrorLoss``): `label_dimension`
logits per example, squared-error loss.

Contract: labels are ``[batch, label_dimension]`` (``[batch]`` when it is 1), cast to float32.
The weight column may give one weight per example or per label dimension. Prediction:
``predictions`` (the logits, through `inverse_link_fn` when given). Eval metrics:
``average_loss``, ``label/mean``, ``prediction/mean`` and, with regularization losses,
``regularization_loss``. Export outputs: ``serving_default`` and ``regression``
(``predictions``) and ``predict`` (every prediction).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import math_ops, metrics
from tensorweave.api.losses import Reduction, compute_weighted_loss, mean_squared_error
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.estimator.canned.head import (
    Head,
    LossSpec,
    MetricKeys,
    PredictionKeys,
    ServingKeys,
    broadcast_weights,
    check_loss_reduction,
    dense_labels_matching_logits,
    predictions_mean,
)
from tensorweave.estimator.export import ExportOutput, PredictOutput, RegressionOutput
from tensorweave.saved_model.signature_constants import DEFAULT_SERVING_SIGNATURE_DEF_KEY

__all__ = ["RegressionHead"]


class RegressionHead(Head):
    """See the module docstring."""

    def __init__(self, label_dimension: int = 1, weight_column: Any = None,
                 loss_reduction: str = Reduction.SUM,
                 inverse_link_fn: Callable[[Tensor], Tensor] | None = None,
                 name: str | None = None) -> None:
        if label_dimension < 1:
            raise ValueError(f"Invalid label_dimension {label_dimension}.")
        check_loss_reduction(loss_reduction)
        super().__init__(weight_column, loss_reduction, name)
        self._label_dimension = label_dimension
        self._inverse_link_fn = inverse_link_fn

    @property
    def logits_dimension(self) -> int:
        return self._label_dimension

    def create_loss(self, features: Any, mode: str, logits: Tensor, labels: Any) -> LossSpec:
        logits = convert_to_tensor(logits)
        labels = dense_labels_matching_logits(labels, logits, self._label_dimension)
        labels = math_ops.cast(labels, dtypes.float32)
        unweighted = mean_squared_error(labels=labels, predictions=logits,
                                        reduction=Reduction.NONE)
        weights = self._weights(features, logits, allow_per_logit_weights=True)
        training_loss = compute_weighted_loss(unweighted, weights=weights,
                                              reduction=self._loss_reduction)
        return LossSpec(training_loss, unweighted, weights, labels)

    def _predictions(self, logits: Tensor) -> dict[str, Tensor]:
        if self._inverse_link_fn is None:
            return {PredictionKeys.PREDICTIONS: logits}
        return {PredictionKeys.PREDICTIONS: self._inverse_link_fn(logits),
                PredictionKeys.LOGITS: logits}

    def _export_outputs(self, predictions: dict[str, Tensor]) -> dict[str, ExportOutput]:
        regress = RegressionOutput(predictions[PredictionKeys.PREDICTIONS])
        return {DEFAULT_SERVING_SIGNATURE_DEF_KEY: regress, ServingKeys.REGRESS: regress,
                ServingKeys.PREDICT: PredictOutput(predictions)}

    def _eval_metric_ops(self, loss_spec: LossSpec, predictions: dict[str, Tensor],
                         regularization_loss: Tensor | None) -> dict[str, Any]:
        keys, key = MetricKeys, self._metric_key
        weights, labels = loss_spec.weights, loss_spec.processed_labels
        return {
            key(keys.LOSS_MEAN): metrics.mean(
                loss_spec.unreduced_loss,
                weights=broadcast_weights(weights, loss_spec.unreduced_loss),
                name=keys.LOSS_MEAN),
            key(keys.PREDICTION_MEAN): predictions_mean(
                predictions[PredictionKeys.PREDICTIONS], weights, keys.PREDICTION_MEAN),
            key(keys.LABEL_MEAN): metrics.mean(labels,
                                               weights=broadcast_weights(weights, labels),
                                               name=keys.LABEL_MEAN),
            **self._regularization_metric(regularization_loss),
        }
