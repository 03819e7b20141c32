"""The binary classification head (TF's ``_BinaryLogisticHeadWithSigmoidCrossEntropyLoss``):
one logit per example, sigmoid cross-entropy loss.

Contract: labels are float in ``[0, 1]`` (or, with `label_vocabulary`, strings of that
two-entry vocabulary), checked at run time. Predictions: ``logits``, ``logistic`` (sigmoid),
``probabilities`` (softmax of ``[0, logit]``), ``class_ids`` (int64 ``[batch, 1]``),
``classes`` (their strings), ``all_class_ids``, ``all_classes``. Eval metrics: ``accuracy``,
``precision``, ``recall``, ``auc``, ``auc_precision_recall``, ``average_loss``,
``label/mean``, ``prediction/mean`` (of the logistic), ``accuracy_baseline`` (max(label mean,
1 - label mean)) and, with regularization losses, ``regularization_loss``. Export outputs:
``serving_default`` and ``classification`` (scores: ``probabilities``; classes: every class
name), ``regression`` (``logistic``) and ``predict`` (every prediction).
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops, metrics, nn_ops
from tensorweave.api.losses import Reduction, compute_weighted_loss
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.estimator.canned.head import (
    Head,
    LossSpec,
    MetricKeys,
    PredictionKeys,
    ServingKeys,
    all_class_ids,
    all_classes,
    assert_range,
    broadcast_weights,
    check_label_vocabulary,
    check_loss_reduction,
    class_names,
    classification_output,
    dense_labels_matching_logits,
    predictions_mean,
    vocabulary_ids,
)
from tensorweave.estimator.export import ExportOutput, PredictOutput, RegressionOutput
from tensorweave.saved_model.signature_constants import DEFAULT_SERVING_SIGNATURE_DEF_KEY

__all__ = ["BinaryClassHead"]


class BinaryClassHead(Head):
    """See the module docstring."""

    def __init__(self, weight_column: Any = None, label_vocabulary: Any = None,
                 loss_reduction: str = Reduction.SUM, name: str | None = None) -> None:
        check_label_vocabulary(label_vocabulary, TypeError)
        check_loss_reduction(loss_reduction)
        super().__init__(weight_column, loss_reduction, name)
        self._label_vocabulary = tuple(label_vocabulary) if label_vocabulary else None

    @property
    def logits_dimension(self) -> int:
        return 1

    def create_loss(self, features: Any, mode: str, logits: Tensor, labels: Any) -> LossSpec:
        logits = convert_to_tensor(logits)
        labels = dense_labels_matching_logits(labels, logits, 1)
        if self._label_vocabulary is not None:
            labels = vocabulary_ids(labels, self._label_vocabulary)
        labels = assert_range(math_ops.cast(labels, dtypes.float32), 2)
        unweighted = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        weights = self._weights(features, logits)
        training_loss = compute_weighted_loss(unweighted, weights=weights,
                                              reduction=self._loss_reduction)
        return LossSpec(training_loss, unweighted, weights, labels)

    def _predictions(self, logits: Tensor) -> dict[str, Tensor]:
        keys = PredictionKeys
        logistic = math_ops.sigmoid(logits, name=keys.LOGISTIC)
        two_class_logits = array_ops.concat([array_ops.zeros_like(logits), logits], -1,
                                            name="two_class_logits")
        class_ids = math_ops.argmax(two_class_logits, axis=-1, name=keys.CLASS_IDS)
        class_ids = array_ops.expand_dims(class_ids, -1)
        return {
            keys.LOGITS: logits,
            keys.LOGISTIC: logistic,
            keys.PROBABILITIES: nn_ops.softmax(two_class_logits, name=keys.PROBABILITIES),
            keys.CLASS_IDS: class_ids,
            keys.CLASSES: class_names(class_ids, self._label_vocabulary),
            keys.ALL_CLASS_IDS: all_class_ids(logits, 2),
            keys.ALL_CLASSES: all_classes(logits, 2, self._label_vocabulary),
        }

    def _export_outputs(self, predictions: dict[str, Tensor]) -> dict[str, ExportOutput]:
        classify = classification_output(predictions[PredictionKeys.PROBABILITIES], 2,
                                         self._label_vocabulary)
        return {DEFAULT_SERVING_SIGNATURE_DEF_KEY: classify, ServingKeys.CLASSIFY: classify,
                ServingKeys.REGRESS: RegressionOutput(predictions[PredictionKeys.LOGISTIC]),
                ServingKeys.PREDICT: PredictOutput(predictions)}

    def _eval_metric_ops(self, loss_spec: LossSpec, predictions: dict[str, Tensor],
                         regularization_loss: Tensor | None) -> dict[str, Any]:
        keys, key = MetricKeys, self._metric_key
        labels, weights = loss_spec.processed_labels, loss_spec.weights
        class_ids = predictions[PredictionKeys.CLASS_IDS]
        logistic = predictions[PredictionKeys.LOGISTIC]
        label_weights = broadcast_weights(weights, labels)
        labels_mean = metrics.mean(labels, weights=label_weights, name=keys.LABEL_MEAN)
        with name_scope(None, "accuracy_baseline", list(labels_mean)):
            value, update = labels_mean
            baseline = (math_ops.maximum(value, 1.0 - value, name="value"),
                        math_ops.maximum(update, 1.0 - update, name="update_op"))
        return {
            key(keys.LOSS_MEAN): metrics.mean(
                loss_spec.unreduced_loss,
                weights=broadcast_weights(weights, loss_spec.unreduced_loss),
                name=keys.LOSS_MEAN),
            key(keys.ACCURACY): metrics.accuracy(labels, class_ids, weights=label_weights,
                                                 name=keys.ACCURACY),
            key(keys.PRECISION): metrics.precision(labels, class_ids, weights=label_weights,
                                                   name=keys.PRECISION),
            key(keys.RECALL): metrics.recall(labels, class_ids, weights=label_weights,
                                             name=keys.RECALL),
            key(keys.PREDICTION_MEAN): predictions_mean(logistic, weights,
                                                        keys.PREDICTION_MEAN),
            key(keys.LABEL_MEAN): labels_mean,
            key(keys.ACCURACY_BASELINE): baseline,
            key(keys.AUC): metrics.auc(labels, logistic, weights=label_weights, name=keys.AUC),
            key(keys.AUC_PR): metrics.auc(labels, logistic, weights=label_weights, curve="PR",
                                          name=keys.AUC_PR),
            **self._regularization_metric(regularization_loss),
        }
