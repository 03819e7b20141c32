"""`LinearClassifier` and `LinearRegressor`, as ``tf.compat.v1.estimator``'s (TF 1.15).

Contract: the logits are ``feature_column.linear_model`` over `feature_columns` under the
variable scope ``linear``, so the variables are ``linear/linear_model/<column>/weights`` and
``linear/linear_model/bias_weights`` (all starting at zero); the head is binary, multi-class
(`n_classes` > 2) or regression (`label_dimension`). `optimizer` is a name, an `Optimizer` or a
callable returning one (default ``"Ftrl"``; a name is built with learning rate 0.2, and
``None`` means FTRL at ``min(0.2, 1 / sqrt(len(feature_columns)))``). Training also writes the
``bias`` and ``fraction_of_zero_weights`` summaries. `features` must be a dict
(``ValueError``). Partitioners are rejected, as everywhere in tensorweave.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from tensorweave.api import array_ops, nn_ops
from tensorweave.api.feature_column_lib import linear_model
from tensorweave.api.losses import Reduction
from tensorweave.api.summary_ops import histogram, scalar
from tensorweave.api.variable_scope import variable_scope
from tensorweave.engine.graph.graph import Tensor
from tensorweave.estimator.canned.head import Head
from tensorweave.estimator.canned.heads import binary_or_multi_class_head, regression_head
from tensorweave.estimator.canned.optimizers import get_optimizer_instance
from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.model_fn import EstimatorSpec
from tensorweave.estimator.run_config import RunConfig
from tensorweave.train.ftrl import FtrlOptimizer

__all__ = ["LinearClassifier", "LinearRegressor", "linear_logits"]

_LEARNING_RATE = 0.2


def check_features_dict(features: Any) -> None:
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: "
                         f"{type(features)}")


def linear_logits(features: dict[str, Any], feature_columns: Iterable[Any], units: int,
                  sparse_combiner: str) -> Tensor:
    """The ``[batch, units]`` logits of a linear model, with its summaries; call it inside
    the ``linear`` variable scope."""
    cols_to_vars: dict[Any, Any] = {}
    logits = linear_model(features, list(feature_columns), units=units,
                          sparse_combiner=sparse_combiner, cols_to_vars=cols_to_vars)
    bias = cols_to_vars.pop("bias")[0]
    if units > 1:
        histogram("bias", bias)
    else:
        scalar("bias", bias[0])
    weights = [array_ops.reshape(w, [-1]) for ws in cols_to_vars.values() for w in ws]
    if weights:
        scalar("fraction_of_zero_weights", nn_ops.zero_fraction(array_ops.concat(weights, 0)))
    return logits


def _linear_model_fn(features: Any, labels: Any, mode: str, head: Head,
                     feature_columns: tuple[Any, ...], optimizer: Any, partitioner: Any,
                     sparse_combiner: str) -> EstimatorSpec:
    check_features_dict(features)
    if optimizer is None:
        optimizer = FtrlOptimizer(min(_LEARNING_RATE, 1.0 / math.sqrt(len(feature_columns))))
    optimizer = get_optimizer_instance(optimizer, learning_rate=_LEARNING_RATE)
    with variable_scope("linear", values=list(features.values()), partitioner=partitioner):
        logits = linear_logits(features, feature_columns, head.logits_dimension,
                               sparse_combiner)
    return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      optimizer=optimizer, logits=logits)


def _bound_model_fn(head: Head, feature_columns: Any, optimizer: Any, partitioner: Any,
                    sparse_combiner: str) -> Any:
    feature_columns = tuple(feature_columns or [])

    def model_fn(features: Any, labels: Any, mode: str) -> EstimatorSpec:
        return _linear_model_fn(features, labels, mode, head, feature_columns, optimizer,
                                partitioner, sparse_combiner)

    return model_fn


class LinearClassifier(Estimator):
    """A linear model that classifies into `n_classes`; see the module docstring."""

    def __init__(self, feature_columns: Any, model_dir: str | None = None, n_classes: int = 2,
                 weight_column: Any = None, label_vocabulary: Any = None,
                 optimizer: Any = "Ftrl", config: RunConfig | None = None,
                 partitioner: Any = None, warm_start_from: Any = None,
                 loss_reduction: str = Reduction.SUM, sparse_combiner: str = "sum") -> None:
        head = binary_or_multi_class_head(n_classes, weight_column, label_vocabulary,
                                          loss_reduction)
        super().__init__(_bound_model_fn(head, feature_columns, optimizer, partitioner,
                                         sparse_combiner),
                         model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearRegressor(Estimator):
    """A linear model that predicts `label_dimension` values; see the module docstring."""

    def __init__(self, feature_columns: Any, model_dir: str | None = None,
                 label_dimension: int = 1, weight_column: Any = None, optimizer: Any = "Ftrl",
                 config: RunConfig | None = None, partitioner: Any = None,
                 warm_start_from: Any = None, loss_reduction: str = Reduction.SUM,
                 sparse_combiner: str = "sum") -> None:
        head = regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(_bound_model_fn(head, feature_columns, optimizer, partitioner,
                                         sparse_combiner),
                         model_dir=model_dir, config=config, warm_start_from=warm_start_from)
