"""The multi-class head (TF's ``_MultiClassHeadWithSoftmaxCrossEntropyLoss``): `n_classes`
logits per example, sparse softmax cross-entropy loss.

Contract: `n_classes` > 2 (``ValueError`` otherwise). Labels are integer class ids in
``[0, n_classes)`` (or, with `label_vocabulary`, strings of it), checked at run time; a float
label is a ``ValueError`` at graph construction. Predictions: ``logits``, ``probabilities``
(softmax), ``class_ids`` (int64 ``[batch, 1]``), ``classes`` (their strings),
``all_class_ids``, ``all_classes``. Eval metrics: ``accuracy``, ``average_loss`` and, with
regularization losses, ``regularization_loss``. Export outputs: ``serving_default`` and
``classification`` (scores: ``probabilities``; classes: every class name) and ``predict``
(every prediction).
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops, metrics, nn_ops
from tensorweave.api.losses import Reduction, compute_weighted_loss, sparse_softmax_cross_entropy
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
    vocabulary_ids,
)
from tensorweave.estimator.export import ExportOutput, PredictOutput
from tensorweave.saved_model.signature_constants import DEFAULT_SERVING_SIGNATURE_DEF_KEY

__all__ = ["MultiClassHead"]


class MultiClassHead(Head):
    """See the module docstring."""

    def __init__(self, n_classes: int, weight_column: Any = None, label_vocabulary: Any = None,
                 loss_reduction: str = Reduction.SUM, name: str | None = None) -> None:
        if n_classes is None:
            raise ValueError("n_classes cannot be None")
        if n_classes <= 2:
            raise ValueError(f"n_classes must be > 2: {n_classes}.")
        check_label_vocabulary(label_vocabulary, ValueError)
        check_loss_reduction(loss_reduction)
        super().__init__(weight_column, loss_reduction, name)
        self._n_classes = n_classes
        self._label_vocabulary = tuple(label_vocabulary) if label_vocabulary else None

    @property
    def logits_dimension(self) -> int:
        return self._n_classes

    def _label_ids(self, labels: Tensor) -> Tensor:
        if self._label_vocabulary is None:
            if not labels.dtype.is_integer:
                raise ValueError(f"Labels dtype should be integer. Instead got {labels.dtype}.")
            return assert_range(labels, self._n_classes)
        if labels.dtype != dtypes.string:
            raise ValueError("Labels dtype should be string if there is a vocabulary. Instead "
                             f"got {labels.dtype}")
        return assert_range(vocabulary_ids(labels, self._label_vocabulary), self._n_classes)

    def create_loss(self, features: Any, mode: str, logits: Tensor, labels: Any) -> LossSpec:
        logits = convert_to_tensor(logits)
        labels = dense_labels_matching_logits(labels, logits, 1)
        label_ids = self._label_ids(labels)
        unweighted = sparse_softmax_cross_entropy(labels=label_ids, logits=logits,
                                                  reduction=Reduction.NONE)
        # The loss drops the label's last dimension: restore it to match the weights.
        unweighted = array_ops.expand_dims(unweighted, -1)
        weights = self._weights(features, logits)
        training_loss = compute_weighted_loss(unweighted, weights=weights,
                                              reduction=self._loss_reduction)
        return LossSpec(training_loss, unweighted, weights, label_ids)

    def _predictions(self, logits: Tensor) -> dict[str, Tensor]:
        keys = PredictionKeys
        class_ids = math_ops.argmax(logits, axis=-1, name=keys.CLASS_IDS)
        class_ids = array_ops.expand_dims(class_ids, -1)
        return {
            keys.LOGITS: logits,
            keys.PROBABILITIES: nn_ops.softmax(logits, name=keys.PROBABILITIES),
            keys.CLASS_IDS: class_ids,
            keys.CLASSES: class_names(class_ids, self._label_vocabulary),
            keys.ALL_CLASS_IDS: all_class_ids(logits, self._n_classes),
            keys.ALL_CLASSES: all_classes(logits, self._n_classes, self._label_vocabulary),
        }

    def _export_outputs(self, predictions: dict[str, Tensor]) -> dict[str, ExportOutput]:
        classify = classification_output(predictions[PredictionKeys.PROBABILITIES],
                                         self._n_classes, self._label_vocabulary)
        return {DEFAULT_SERVING_SIGNATURE_DEF_KEY: classify, ServingKeys.CLASSIFY: classify,
                ServingKeys.PREDICT: PredictOutput(predictions)}

    def _eval_metric_ops(self, loss_spec: LossSpec, predictions: dict[str, Tensor],
                         regularization_loss: Tensor | None) -> dict[str, Any]:
        keys, key = MetricKeys, self._metric_key
        weights = loss_spec.weights
        return {
            key(keys.LOSS_MEAN): metrics.mean(
                loss_spec.unreduced_loss,
                weights=broadcast_weights(weights, loss_spec.unreduced_loss),
                name=keys.LOSS_MEAN),
            key(keys.ACCURACY): metrics.accuracy(
                loss_spec.processed_labels, predictions[PredictionKeys.CLASS_IDS],
                weights=broadcast_weights(weights, loss_spec.processed_labels),
                name=keys.ACCURACY),
            **self._regularization_metric(regularization_loss),
        }
