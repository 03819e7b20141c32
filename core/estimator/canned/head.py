"""The head of a canned estimator, as TF 1.15's ``tensorflow_estimator/.../canned/head.py``:
from a model's logits it builds the predictions, the loss, the eval metrics and the train op.

Contract: `Head.create_estimator_spec(features, mode, logits, labels, optimizer, train_op_fn,
regularization_losses)` works under the name scope ``head`` (or the head's name): logits must be
``[D0, ..., DN, logits_dimension]`` (``ValueError`` when statically not); the predictions
(`PredictionKeys`) are built under ``head/predictions``; PREDICT returns them with the export
outputs (signatures ``serving_default`` and `ServingKeys`, as TF 1.15); EVAL adds the loss
(the weighted per-example loss reduced by `loss_reduction`, plus any regularization losses) and
the metrics (`MetricKeys`; the `Estimator` adds ``loss``); TRAIN builds the train op from
exactly one of `optimizer` (``minimize`` with the global step) or `train_op_fn`, groups it
with the ``UPDATE_OPS`` collection, and adds ``loss`` and, for the SUM reduction,
``average_loss`` summaries. Labels of rank ``logits' rank - 1`` gain a last dimension of 1.
The weight column (a feature name or a ``numeric_column``) scales each example's loss and
metrics. Subclasses define `logits_dimension`, `create_loss`, `_predictions`,
`_export_outputs` and `_eval_metric_ops`.
"""

from __future__ import annotations

import abc
import collections
from typing import Any

from tensorweave.api import array_ops, check_ops, math_ops, metrics, string_ops
from tensorweave.api.control_flow_ops import group, identity
from tensorweave.api.feature_column_base import LazyBuilder
from tensorweave.api.feature_column_dense import NumericColumn, numeric_column
from tensorweave.api.losses import Reduction
from tensorweave.api.scopes import get_collection, name_scope
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.api.summary_ops import scalar
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.graph import GraphKeys, Tensor, get_default_graph
from tensorweave.estimator.export import ClassificationOutput, ExportOutput
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorweave.train.training_util import get_global_step

__all__ = ["Head", "LossSpec", "MetricKeys", "PredictionKeys", "ServingKeys"]


class PredictionKeys:
    """The keys of a canned estimator's predictions."""

    LOGITS = "logits"
    LOGISTIC = "logistic"
    PROBABILITIES = "probabilities"
    CLASS_IDS = "class_ids"
    CLASSES = "classes"
    ALL_CLASS_IDS = "all_class_ids"
    ALL_CLASSES = "all_classes"
    PREDICTIONS = "predictions"


class ServingKeys:
    """The keys of a canned estimator's export outputs (signatures), besides
    ``serving_default``."""

    CLASSIFY = "classification"
    REGRESS = "regression"
    PREDICT = "predict"


class MetricKeys:
    """The keys of a canned estimator's eval metrics."""

    LOSS = "loss"
    LOSS_MEAN = "average_loss"
    LOSS_REGULARIZATION = "regularization_loss"
    ACCURACY = "accuracy"
    PRECISION = "precision"
    RECALL = "recall"
    ACCURACY_BASELINE = "accuracy_baseline"
    AUC = "auc"
    AUC_PR = "auc_precision_recall"
    LABEL_MEAN = "label/mean"
    PREDICTION_MEAN = "prediction/mean"


# training_loss: the reduced weighted loss; unreduced_loss: per example and logit, unweighted;
# weights: the example weights (1.0 without a weight column); processed_labels: labels as the
# loss saw them (vocabulary ids, float, reshaped).
LossSpec = collections.namedtuple(
    "LossSpec", ["training_loss", "unreduced_loss", "weights", "processed_labels"])


def check_loss_reduction(loss_reduction: str) -> None:
    if loss_reduction not in Reduction.all() or loss_reduction == Reduction.NONE:
        raise ValueError(f"Invalid loss_reduction: {loss_reduction}")


def check_label_vocabulary(label_vocabulary: Any, error: type[Exception]) -> None:
    if label_vocabulary is not None and not isinstance(label_vocabulary, (list, tuple)):
        raise error(f"label_vocabulary should be a list or a tuple. Given type: "
                    f"{type(label_vocabulary)}")


def summary_key(head_name: str | None, key: str) -> str:
    return f"{key}/{head_name}" if head_name else key


class Head(abc.ABC):
    """Predictions, loss, metrics and train op from logits; see the module docstring."""

    def __init__(self, weight_column: Any, loss_reduction: str, name: str | None) -> None:
        self._weight_column = weight_column
        self._loss_reduction = loss_reduction
        self._name = name

    @property
    def name(self) -> str | None:
        return self._name

    @property
    @abc.abstractmethod
    def logits_dimension(self) -> int:
        """The size of the logits' last dimension."""

    @abc.abstractmethod
    def create_loss(self, features: Any, mode: str, logits: Tensor, labels: Any) -> LossSpec:
        """The loss of `logits` against `labels`."""

    @abc.abstractmethod
    def _predictions(self, logits: Tensor) -> dict[str, Tensor]:
        """The predictions from checked float32 logits."""

    @abc.abstractmethod
    def _export_outputs(self, predictions: dict[str, Tensor]) -> dict[str, ExportOutput]:
        """The PREDICT spec's export outputs, keyed by ``serving_default`` and the
        `ServingKeys` (TF 1.15's)."""

    @abc.abstractmethod
    def _eval_metric_ops(self, loss_spec: LossSpec, predictions: dict[str, Tensor],
                         regularization_loss: Tensor | None) -> dict[str, Any]:
        """The eval metrics, keyed by `MetricKeys` (suffixed by the head's name)."""

    def _metric_key(self, key: str) -> str:
        return summary_key(self._name, key)

    def _weights(self, features: Any, logits: Tensor,
                 allow_per_logit_weights: bool = False) -> Any:
        return weights_matching_logits(features, self._weight_column, logits,
                                       allow_per_logit_weights)

    def _regularization_metric(self, regularization_loss: Tensor | None) -> dict[str, Any]:
        if regularization_loss is None:
            return {}
        return {self._metric_key(MetricKeys.LOSS_REGULARIZATION): metrics.mean(
            regularization_loss, name=MetricKeys.LOSS_REGULARIZATION)}

    def create_estimator_spec(self, features: Any, mode: str, logits: Any, labels: Any = None,
                              optimizer: Any = None, train_op_fn: Any = None,
                              regularization_losses: Any = None) -> EstimatorSpec:
        """The `EstimatorSpec` of `mode`; see the module docstring."""
        with name_scope(self._name, "head"):
            logits = check_logits_final_dim(logits, self.logits_dimension)
            with name_scope(None, "predictions", [logits]):
                predictions = self._predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=predictions,
                                     export_outputs=self._export_outputs(predictions))
            loss_spec = self.create_loss(features, mode, logits, labels)
            regularization_loss = None
            loss = loss_spec.training_loss
            if regularization_losses:
                regularization_loss = math_ops.add_n(list(regularization_losses))
                loss = math_ops.add_n([loss, regularization_loss])
            if mode == ModeKeys.EVAL:
                with name_scope(None, "metrics"):
                    metric_ops = self._eval_metric_ops(loss_spec, predictions,
                                                       regularization_loss)
                return EstimatorSpec(mode, predictions=predictions, loss=loss,
                                     eval_metric_ops=metric_ops)
            train_op = _train_op(loss, optimizer, train_op_fn)
            mean_loss = None
            if self._loss_reduction == Reduction.SUM:
                weight_sum = math_ops.reduce_sum(
                    loss_spec.weights * array_ops.ones_like(loss_spec.unreduced_loss))
                mean_loss = loss_spec.training_loss / weight_sum
        with name_scope(""):
            scalar(summary_key(self._name, MetricKeys.LOSS), loss)
            if mean_loss is not None:
                scalar(summary_key(self._name, MetricKeys.LOSS_MEAN), mean_loss)
            if regularization_loss is not None:
                scalar(summary_key(self._name, MetricKeys.LOSS_REGULARIZATION),
                       regularization_loss)
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)


def _train_op(loss: Tensor, optimizer: Any, train_op_fn: Any) -> Any:
    if optimizer is not None:
        if train_op_fn is not None:
            raise ValueError("train_op_fn and optimizer cannot both be set.")
        train_op = optimizer.minimize(loss, global_step=get_global_step())
    elif train_op_fn is not None:
        train_op = train_op_fn(loss)
    else:
        raise ValueError("train_op_fn and optimizer cannot both be None.")
    update_ops = get_collection(GraphKeys.UPDATE_OPS)
    return group(train_op, *update_ops) if update_ops else train_op


# -- checks on logits, labels and weights ----------------------------------------------------


def check_logits_final_dim(logits: Any, expected: int) -> Tensor:
    """`logits` as float32, checked to be ``[D0, ..., DN, expected]``."""
    with name_scope(None, "logits", [logits]):
        logits = math_ops.cast(convert_to_tensor(logits), dtypes.float32)
        shape = logits.shape
        if shape.ndims is not None:
            if shape.ndims < 2:
                raise ValueError(f"logits shape must be [D0, D1, ... DN, logits_dimension], "
                                 f"got {shape}.")
            if shape[-1] is not None and shape[-1] != expected:
                raise ValueError(f"logits shape must be [D0, D1, ... DN, logits_dimension="
                                 f"{expected}], got {shape}.")
        return logits


def dense_labels_matching_logits(labels: Any, logits: Tensor, expected_dim: int) -> Tensor:
    """`labels` checked (statically, and at run time) to be ``logits' shape[:-1] +
    [expected_dim]``; labels one rank short gain a last dimension."""
    if labels is None:
        raise ValueError("You must provide a labels Tensor. Given: None. Suggested "
                         "troubleshooting steps: Check that your data contain your label "
                         "feature. Check that your input_fn properly parses and returns labels.")
    with name_scope(None, "labels", [labels, logits]) as scope:
        if isinstance(labels, SparseTensor):
            raise ValueError(
                f"SparseTensor labels are not supported. labels must be a Tensor of shape "
                f"[D0, D1, ..., DN, {expected_dim}], e.g. [batch_size, {expected_dim}]. "
                "Suggested Fix (1): Check the label feature in your data. Each example must "
                f"contain {expected_dim} value(s). If not, your choice of label was probably "
                "incorrect. Suggested Fix (2): In your input_fn, use "
                "tf.sparse_tensor_to_dense() to turn labels into a Tensor.")
        labels = convert_to_tensor(labels)
        if labels.shape.ndims is not None and logits.shape.ndims is not None \
                and labels.shape.ndims == logits.shape.ndims - 1:
            labels = array_ops.expand_dims(labels, -1)
        message = (f"labels shape must be [D0, D1, ... DN, {expected_dim}]. Suggested Fix: "
                   "check your n_classes argument to the estimator and/or the shape of your "
                   "label.")
        if labels.shape.ndims is not None:
            if labels.shape.ndims < 2:
                raise ValueError(message)
            last = labels.shape[-1]
            if last is not None and last != expected_dim:
                raise ValueError(
                    f"Mismatched label shape. Expected labels dimension={expected_dim}.  "
                    f"Received {last}. Suggested Fix:If your classifier expects one-hot "
                    "encoding label,check your n_classes argument to the estimator and/or the "
                    "shape of your label. Otherwise, check the shape of your label.")
        expected = array_ops.concat([array_ops.shape(logits)[:-1], [expected_dim]], 0)
        check = check_ops.assert_equal(expected, array_ops.shape(labels), message=message)
        with get_default_graph().control_dependencies([check]):
            return identity(labels, name=scope.rstrip("/"))


def weights_matching_logits(features: Any, weight_column: Any, logits: Tensor,
                            allow_per_logit_weights: bool = False) -> Any:
    """The example weights of `weight_column` as float32 ``[D0, ..., DN, 1]`` (or per logit
    when allowed); 1.0 without a weight column."""
    if weight_column is None:
        return 1.0
    with name_scope(None, "weights", list(features.values()) + [logits]) as scope:
        if isinstance(weight_column, str):
            weight_column = numeric_column(key=weight_column, shape=(1,))
        if not isinstance(weight_column, NumericColumn):
            raise TypeError("Weight column must be either a string or _NumericColumn. "
                            f"Given type: {type(weight_column)}.")
        weights = weight_column._get_dense_tensor(LazyBuilder(features))
        if not (weights.dtype.is_floating or weights.dtype.is_integer):
            raise ValueError(f"Weight column should be castable to float. Given dtype: "
                             f"{weights.dtype}")
        weights = math_ops.cast(weights, dtypes.float32, name="weights")
        weights_shape = array_ops.shape(weights, name="weights_shape")
        logits_shape = array_ops.shape(logits, name="logits_shape")
        if weights.shape.ndims is not None and logits.shape.ndims is not None \
                and weights.shape.ndims == logits.shape.ndims - 1:
            check = check_ops.assert_equal(logits_shape[:-1], weights_shape,
                                           message=_weights_message(allow_per_logit_weights))
            with get_default_graph().control_dependencies([check]):
                return array_ops.expand_dims(weights, -1, name=scope.rstrip("/"))
        one_per_example = array_ops.concat([logits_shape[:-1], [1]], 0)
        if allow_per_logit_weights and weights.shape.ndims is not None \
                and weights.shape[-1] is not None and weights.shape[-1] != 1:
            check = check_ops.assert_equal(logits_shape, weights_shape,
                                           message=_weights_message(True))
        else:
            check = check_ops.assert_equal(one_per_example, weights_shape,
                                           message=_weights_message(allow_per_logit_weights))
        with get_default_graph().control_dependencies([check]):
            return identity(weights, name=scope.rstrip("/"))


def _weights_message(allow_per_logit_weights: bool) -> str:
    if allow_per_logit_weights:
        return ("weights shape must be [D0, D1, ... DN], [D0, D1, ... DN, 1] or "
                "[D0, D1, ... DN, logits_dimension]")
    return "weights shape must be [D0, D1, ... DN] or [D0, D1, ... DN, 1]"


def broadcast_weights(weights: Any, values: Tensor) -> Any:
    """`weights` times ones shaped like `values` (the metrics take weights per value)."""
    if isinstance(weights, float):
        return None if weights == 1.0 else weights
    return math_ops.multiply(weights, array_ops.ones_like(values))


# -- class ids and names ---------------------------------------------------------------------


def assert_range(labels: Tensor, n_classes: int, message: str | None = None) -> Tensor:
    """`labels`, checked at run time to lie in ``[0, n_classes)``."""
    with name_scope(None, "assert_range", [labels]):
        below = check_ops.assert_less_equal(
            labels, constant(n_classes - 1, labels.dtype),
            message=message or "Labels must <= n_classes - 1")
        above = check_ops.assert_non_negative(labels, message=message or "Labels must >= 0")
        with get_default_graph().control_dependencies([below, above]):
            return identity(labels)


def vocabulary_ids(labels: Tensor, vocabulary: tuple[str, ...]) -> Tensor:
    """The int64 index of each string label in `vocabulary`, -1 when absent (TF's
    ``index_table_from_tensor(...).lookup``)."""
    with name_scope(None, "class_id_lookup", [labels]):
        keys = constant(list(vocabulary), dtypes.string, name="keys")
        matches = math_ops.equal(array_ops.expand_dims(labels, -1), keys)
        index = math_ops.argmax(math_ops.cast(matches, dtypes.int32), axis=-1,
                                output_type=dtypes.int64)
        return array_ops.where(math_ops.reduce_any(matches, axis=-1), index,
                               array_ops.fill(array_ops.shape(index), constant(-1, dtypes.int64)))


def class_names(class_ids: Tensor, vocabulary: tuple[str, ...] | None) -> Tensor:
    """The string name of each class id: its vocabulary entry, or the id as text."""
    if vocabulary:
        return array_ops.gather(constant(list(vocabulary), dtypes.string), class_ids,
                                name="class_string_lookup")
    return string_ops.as_string(class_ids, name="str_classes")


def all_class_ids(logits: Tensor, n_classes: int) -> Tensor:
    batch_size = array_ops.shape(logits)[0]
    return array_ops.tile(array_ops.expand_dims(array_ops.range(n_classes), 0), [batch_size, 1])


def all_classes(logits: Tensor, n_classes: int, vocabulary: tuple[str, ...] | None) -> Tensor:
    batch_size = array_ops.shape(logits)[0]
    if vocabulary:
        names = constant(list(vocabulary), dtypes.string)
    else:
        names = string_ops.as_string(array_ops.range(n_classes))
    return array_ops.tile(array_ops.expand_dims(names, 0), [batch_size, 1])


def classification_output(scores: Tensor, n_classes: int,
                          vocabulary: tuple[str, ...] | None) -> ClassificationOutput:
    """The scores with every class's name per example (the classify API wants string
    classes)."""
    return ClassificationOutput(scores=scores, classes=all_classes(scores, n_classes, vocabulary))


def predictions_mean(predictions: Tensor, weights: Any, name: str) -> Any:
    predictions = math_ops.cast(predictions, dtypes.float32)
    return metrics.mean(predictions, weights=broadcast_weights(weights, predictions), name=name)
