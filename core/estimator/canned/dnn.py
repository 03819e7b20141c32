"""`DNNClassifier` and `DNNRegressor`, as ``tf.compat.v1.estimator``'s (TF 1.15).

Contract: under the variable scope ``dnn``, ``feature_column.input_layer`` over
`feature_columns` (scope ``input_from_feature_columns``, so an embedding is
``dnn/input_from_feature_columns/input_layer/<column>/embedding_weights``), then per entry of
`hidden_units` a dense layer ``dnn/hiddenlayer_<i>`` (kernel and bias, Glorot-uniform kernel,
`activation_fn`, default ReLU), dropout at rate `dropout` in TRAIN only, and with `batch_norm`
a batch normalization ``dnn/hiddenlayer_<i>/batchnorm_<i>`` (momentum 0.999, its moving
averages updated with each train step); then the logits layer ``dnn/logits``. Each layer
writes ``<scope>/fraction_of_zero_values`` and ``<scope>/activation`` summaries. `optimizer` is
a name (built with learning rate 0.05), an `Optimizer` or a callable returning one (default
``"Adagrad"``). `features` must be a dict (``ValueError``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from tensorweave.api import init_ops, layers, nn_ops
from tensorweave.api.feature_column_lib import input_layer
from tensorweave.api.losses import Reduction
from tensorweave.api.summary_ops import histogram, scalar
from tensorweave.api.variable_scope import variable_scope
from tensorweave.engine.graph.graph import Tensor
from tensorweave.estimator.canned.head import Head
from tensorweave.estimator.canned.heads import binary_or_multi_class_head, regression_head
from tensorweave.estimator.canned.linear import check_features_dict
from tensorweave.estimator.canned.optimizers import get_optimizer_instance
from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorweave.estimator.run_config import RunConfig

__all__ = ["DNNClassifier", "DNNRegressor", "dnn_logits"]

_LEARNING_RATE = 0.05


def _layer_summary(value: Tensor, tag: str) -> None:
    scalar(f"{tag}/fraction_of_zero_values", nn_ops.zero_fraction(value))
    histogram(f"{tag}/activation", value)


def _dense(inputs: Tensor, units: int, activation_fn: Callable[[Tensor], Tensor] | None,
           scope: Any) -> Tensor:
    """A dense layer whose variables live directly in `scope` (``<scope>/kernel``)."""
    return layers.Dense(units, activation=activation_fn,
                        kernel_initializer=init_ops.glorot_uniform_initializer(), name=scope,
                        _scope=scope).apply(inputs)


def dnn_logits(features: dict[str, Any], mode: str, units: int, hidden_units: Iterable[int],
               feature_columns: Iterable[Any], activation_fn: Callable[[Tensor], Tensor],
               dropout: float | None, batch_norm: bool, partitioner: Any = None) -> Tensor:
    """The ``[batch, units]`` logits of the network; call it inside the ``dnn`` variable
    scope."""
    is_training = mode == ModeKeys.TRAIN
    with variable_scope("input_from_feature_columns", values=list(features.values()),
                        partitioner=partitioner):
        net = input_layer(features, list(feature_columns))
    for layer_id, num_units in enumerate(hidden_units):
        with variable_scope(f"hiddenlayer_{layer_id}", values=[net]) as scope:
            net = _dense(net, num_units, activation_fn, scope)
            if dropout is not None and is_training:
                net = layers.dropout(net, rate=dropout, training=True)
            if batch_norm:
                net = layers.batch_normalization(net, momentum=0.999, training=is_training,
                                                 name=f"batchnorm_{layer_id}")
        _layer_summary(net, scope.name)
    with variable_scope("logits", values=[net]) as scope:
        logits = _dense(net, units, None, scope)
    _layer_summary(logits, scope.name)
    return logits


def _dnn_model_fn(features: Any, labels: Any, mode: str, head: Head,
                  hidden_units: tuple[int, ...], feature_columns: tuple[Any, ...],
                  optimizer: Any, activation_fn: Callable[[Tensor], Tensor],
                  dropout: float | None, input_layer_partitioner: Any,
                  batch_norm: bool) -> EstimatorSpec:
    check_features_dict(features)
    optimizer = get_optimizer_instance(optimizer, learning_rate=_LEARNING_RATE)
    with variable_scope("dnn", values=list(features.values())):
        logits = dnn_logits(features, mode, head.logits_dimension, hidden_units,
                            feature_columns, activation_fn, dropout, batch_norm,
                            input_layer_partitioner)
    return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      optimizer=optimizer, logits=logits)


def _bound_model_fn(head: Head, hidden_units: Any, feature_columns: Any, optimizer: Any,
                    activation_fn: Callable[[Tensor], Tensor], dropout: float | None,
                    input_layer_partitioner: Any, batch_norm: bool) -> Any:
    hidden_units, feature_columns = tuple(hidden_units), tuple(feature_columns or [])

    def model_fn(features: Any, labels: Any, mode: str) -> EstimatorSpec:
        return _dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns,
                             optimizer, activation_fn, dropout, input_layer_partitioner,
                             batch_norm)

    return model_fn


class DNNClassifier(Estimator):
    """A feed-forward network that classifies into `n_classes`; see the module docstring."""

    def __init__(self, hidden_units: Iterable[int], feature_columns: Any,
                 model_dir: str | None = None, n_classes: int = 2, weight_column: Any = None,
                 label_vocabulary: Any = None, optimizer: Any = "Adagrad",
                 activation_fn: Callable[[Tensor], Tensor] = nn_ops.relu,
                 dropout: float | None = None, input_layer_partitioner: Any = None,
                 config: RunConfig | None = None, warm_start_from: Any = None,
                 loss_reduction: str = Reduction.SUM, batch_norm: bool = False) -> None:
        head = binary_or_multi_class_head(n_classes, weight_column, label_vocabulary,
                                          loss_reduction)
        super().__init__(_bound_model_fn(head, hidden_units, feature_columns, optimizer,
                                         activation_fn, dropout, input_layer_partitioner,
                                         batch_norm),
                         model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNRegressor(Estimator):
    """A feed-forward network that predicts `label_dimension` values; see the module
    docstring."""

    def __init__(self, hidden_units: Iterable[int], feature_columns: Any,
                 model_dir: str | None = None, label_dimension: int = 1,
                 weight_column: Any = None, optimizer: Any = "Adagrad",
                 activation_fn: Callable[[Tensor], Tensor] = nn_ops.relu,
                 dropout: float | None = None, input_layer_partitioner: Any = None,
                 config: RunConfig | None = None, warm_start_from: Any = None,
                 loss_reduction: str = Reduction.SUM, batch_norm: bool = False) -> None:
        head = regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(_bound_model_fn(head, hidden_units, feature_columns, optimizer,
                                         activation_fn, dropout, input_layer_partitioner,
                                         batch_norm),
                         model_dir=model_dir, config=config, warm_start_from=warm_start_from)
