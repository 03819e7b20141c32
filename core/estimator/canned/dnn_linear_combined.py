"""`DNNLinearCombinedClassifier` and `DNNLinearCombinedRegressor` (wide & deep), as
``tf.compat.v1.estimator``'s (TF 1.15).

Contract: the logits are the sum of a linear model over `linear_feature_columns` (variables
``linear/linear_model/...``) and a network over `dnn_feature_columns` (``dnn/...``, as
`DNNClassifier`); either part may be absent, not both (``ValueError``), and a network needs
`dnn_hidden_units` (``ValueError``). Each part has its own optimizer, applied to the trainable
variables of its scope only: `linear_optimizer` (default ``"Ftrl"``, a name built with
learning rate ``min(0.005, 1 / sqrt(len(linear_feature_columns)))``) and `dnn_optimizer`
(default ``"Adagrad"``, learning rate 0.001); the train op runs both, then adds 1 to the
global step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from tensorweave.api import nn_ops, state_ops
from tensorweave.api.control_flow_ops import group
from tensorweave.api.losses import Reduction
from tensorweave.api.scopes import get_collection
from tensorweave.api.summary_ops import histogram, scalar
from tensorweave.api.variable_scope import variable_scope
from tensorweave.engine.graph.graph import GraphKeys, Tensor, get_default_graph
from tensorweave.estimator.canned.dnn import dnn_logits
from tensorweave.estimator.canned.head import Head
from tensorweave.estimator.canned.heads import binary_or_multi_class_head, regression_head
from tensorweave.estimator.canned.linear import check_features_dict, linear_logits
from tensorweave.estimator.canned.optimizers import get_optimizer_instance
from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.model_fn import EstimatorSpec
from tensorweave.estimator.run_config import RunConfig
from tensorweave.train.training_util import get_global_step

__all__ = ["DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor"]

_DNN_LEARNING_RATE = 0.001
_LINEAR_LEARNING_RATE = 0.005


def _linear_learning_rate(num_linear_feature_columns: int) -> float:
    return min(_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(num_linear_feature_columns))


def _check_columns(linear_feature_columns: Any, dnn_feature_columns: Any) -> None:
    if not linear_feature_columns and not dnn_feature_columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be "
                         "defined.")


class _Settings:
    """The constructor's arguments that shape the model."""

    def __init__(self, linear_feature_columns: Any, linear_optimizer: Any,
                 dnn_feature_columns: Any, dnn_optimizer: Any, dnn_hidden_units: Any,
                 dnn_activation_fn: Callable[[Tensor], Tensor], dnn_dropout: float | None,
                 input_layer_partitioner: Any, batch_norm: bool,
                 linear_sparse_combiner: str) -> None:
        _check_columns(linear_feature_columns, dnn_feature_columns)
        self.linear_feature_columns = tuple(linear_feature_columns or [])
        self.linear_optimizer = linear_optimizer
        self.dnn_feature_columns = tuple(dnn_feature_columns or [])
        self.dnn_optimizer = dnn_optimizer
        self.dnn_hidden_units = tuple(dnn_hidden_units or [])
        self.dnn_activation_fn = dnn_activation_fn
        self.dnn_dropout = dnn_dropout
        self.input_layer_partitioner = input_layer_partitioner
        self.batch_norm = batch_norm
        self.linear_sparse_combiner = linear_sparse_combiner


def _combined_model_fn(features: Any, labels: Any, mode: str, head: Head,
                       s: _Settings) -> EstimatorSpec:
    check_features_dict(features)
    parts: list[tuple[Tensor, Any, str]] = []  # (logits, optimizer, variable scope)
    if s.dnn_feature_columns:
        dnn_optimizer = get_optimizer_instance(s.dnn_optimizer,
                                               learning_rate=_DNN_LEARNING_RATE)
        if not s.dnn_hidden_units:
            raise ValueError("dnn_hidden_units must be defined when dnn_feature_columns is "
                             "specified.")
        with variable_scope("dnn", values=list(features.values())) as scope:
            logits = dnn_logits(features, mode, head.logits_dimension, s.dnn_hidden_units,
                                s.dnn_feature_columns, s.dnn_activation_fn, s.dnn_dropout,
                                s.batch_norm, s.input_layer_partitioner)
        parts.append((logits, dnn_optimizer, scope.name))
    if s.linear_feature_columns:
        linear_optimizer = get_optimizer_instance(
            s.linear_optimizer,
            learning_rate=_linear_learning_rate(len(s.linear_feature_columns)))
        with variable_scope("linear", values=list(features.values())) as scope:
            logits = linear_logits(features, s.linear_feature_columns, head.logits_dimension,
                                   s.linear_sparse_combiner)
            scalar(f"{scope.name}/fraction_of_zero_values", nn_ops.zero_fraction(logits))
            histogram(f"{scope.name}/activation", logits)
        parts.append((logits, linear_optimizer, scope.name))
    logits = parts[0][0] if len(parts) == 1 else parts[0][0] + parts[1][0]

    def train_op_fn(loss: Tensor) -> Any:
        train_ops = [optimizer.minimize(loss, var_list=get_collection(
            GraphKeys.TRAINABLE_VARIABLES, scope=scope_name))
            for _, optimizer, scope_name in parts]
        global_step = get_global_step()
        with get_default_graph().control_dependencies([group(*train_ops)]), \
                get_default_graph().colocate_with(global_step.op):
            return state_ops.assign_add(global_step, 1)

    return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      train_op_fn=train_op_fn, logits=logits)


def _bound_model_fn(head: Head, settings: _Settings) -> Any:
    def model_fn(features: Any, labels: Any, mode: str) -> EstimatorSpec:
        return _combined_model_fn(features, labels, mode, head, settings)

    return model_fn


class DNNLinearCombinedClassifier(Estimator):
    """Wide & deep classification into `n_classes`; see the module docstring."""

    def __init__(self, model_dir: str | None = None, linear_feature_columns: Any = None,
                 linear_optimizer: Any = "Ftrl", dnn_feature_columns: Any = None,
                 dnn_optimizer: Any = "Adagrad", dnn_hidden_units: Iterable[int] | None = None,
                 dnn_activation_fn: Callable[[Tensor], Tensor] = nn_ops.relu,
                 dnn_dropout: float | None = None, n_classes: int = 2,
                 weight_column: Any = None, label_vocabulary: Any = None,
                 input_layer_partitioner: Any = None, config: RunConfig | None = None,
                 warm_start_from: Any = None, loss_reduction: str = Reduction.SUM,
                 batch_norm: bool = False, linear_sparse_combiner: str = "sum") -> None:
        settings = _Settings(linear_feature_columns, linear_optimizer, dnn_feature_columns,
                             dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                             input_layer_partitioner, batch_norm, linear_sparse_combiner)
        head = binary_or_multi_class_head(n_classes, weight_column, label_vocabulary,
                                          loss_reduction)
        super().__init__(_bound_model_fn(head, settings), model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


class DNNLinearCombinedRegressor(Estimator):
    """Wide & deep regression of `label_dimension` values; see the module docstring."""

    def __init__(self, model_dir: str | None = None, linear_feature_columns: Any = None,
                 linear_optimizer: Any = "Ftrl", dnn_feature_columns: Any = None,
                 dnn_optimizer: Any = "Adagrad", dnn_hidden_units: Iterable[int] | None = None,
                 dnn_activation_fn: Callable[[Tensor], Tensor] = nn_ops.relu,
                 dnn_dropout: float | None = None, label_dimension: int = 1,
                 weight_column: Any = None, input_layer_partitioner: Any = None,
                 config: RunConfig | None = None, warm_start_from: Any = None,
                 loss_reduction: str = Reduction.SUM, batch_norm: bool = False,
                 linear_sparse_combiner: str = "sum") -> None:
        settings = _Settings(linear_feature_columns, linear_optimizer, dnn_feature_columns,
                             dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                             input_layer_partitioner, batch_norm, linear_sparse_combiner)
        head = regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(_bound_model_fn(head, settings), model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
