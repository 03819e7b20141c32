"""`BaselineClassifier` and `BaselineRegressor`, as ``tf.compat.v1.estimator``'s (TF 1.15):
models that ignore the feature values and learn one bias per logit.

Contract: the logits are the variable ``baseline/bias`` (``[logits_dimension]``, zeros)
broadcast to ``[batch, logits_dimension]``; the batch size is the first dimension of the
features (the weight column excepted), checked equal across them at run time. A classifier so
learns the (log-odds of the) class frequencies, a regressor the label mean. `optimizer` is a
name (built with learning rate 0.3), an `Optimizer` or a callable returning one (default
``"Ftrl"``).
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, check_ops, init_ops, math_ops
from tensorweave.api.feature_column_dense import NumericColumn
from tensorweave.api.losses import Reduction
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.api.variable_scope import get_variable, variable_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Tensor, get_default_graph
from tensorweave.estimator.canned.head import Head
from tensorweave.estimator.canned.heads import binary_or_multi_class_head, regression_head
from tensorweave.estimator.canned.linear import check_features_dict
from tensorweave.estimator.canned.optimizers import get_optimizer_instance
from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.model_fn import EstimatorSpec
from tensorweave.estimator.run_config import RunConfig
from tensorweave.train.training_util import get_global_step

__all__ = ["BaselineClassifier", "BaselineRegressor"]

_LEARNING_RATE = 0.3


def _weight_column_key(weight_column: Any) -> str | None:
    if weight_column is None or isinstance(weight_column, str):
        return weight_column
    if not isinstance(weight_column, NumericColumn):
        raise TypeError("Weight column must be either a string or _NumericColumn. "
                        f"Given type: {type(weight_column)}.")
    return weight_column.key


def _first_dim(feature: Any) -> Tensor:
    if isinstance(feature, SparseTensor):
        return math_ops.cast(feature.dense_shape[0], dtypes.int32)
    return array_ops.shape(feature)[0]


def baseline_logits(features: dict[str, Any], num_outputs: int, weight_column: Any) -> Tensor:
    """``baseline/bias`` broadcast to ``[batch, num_outputs]``."""
    weight_key = _weight_column_key(weight_column)
    batch_size, size_checks = None, []
    for key, feature in features.items():
        if key == weight_key:  # the weights are not needed to serve
            continue
        first_dim = _first_dim(feature)
        if batch_size is None:
            batch_size = first_dim
        else:
            size_checks.append(check_ops.assert_equal(batch_size, first_dim))
    if batch_size is None:
        raise ValueError("The baseline needs at least one feature to know the batch size.")
    with get_default_graph().control_dependencies(size_checks), variable_scope("baseline"):
        bias = get_variable("bias", shape=[num_outputs],
                            initializer=init_ops.zeros_initializer())
        return math_ops.multiply(bias, array_ops.ones(array_ops.stack([batch_size,
                                                                       num_outputs])))


def _bound_model_fn(head: Head, optimizer: Any, weight_column: Any) -> Any:
    def model_fn(features: Any, labels: Any, mode: str) -> EstimatorSpec:
        check_features_dict(features)
        logits = baseline_logits(features, head.logits_dimension, weight_column)

        def train_op_fn(loss: Tensor) -> Any:
            opt = get_optimizer_instance(optimizer, learning_rate=_LEARNING_RATE)
            return opt.minimize(loss, global_step=get_global_step())

        return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                          train_op_fn=train_op_fn, logits=logits)

    return model_fn


class BaselineClassifier(Estimator):
    """Predicts the class distribution of the training labels; see the module docstring."""

    def __init__(self, model_dir: str | None = None, n_classes: int = 2,
                 weight_column: Any = None, label_vocabulary: Any = None,
                 optimizer: Any = "Ftrl", config: RunConfig | None = None,
                 loss_reduction: str = Reduction.SUM) -> None:
        head = binary_or_multi_class_head(n_classes, weight_column, label_vocabulary,
                                          loss_reduction)
        super().__init__(_bound_model_fn(head, optimizer, weight_column), model_dir=model_dir,
                         config=config)


class BaselineRegressor(Estimator):
    """Predicts the mean of the training labels; see the module docstring."""

    def __init__(self, model_dir: str | None = None, label_dimension: int = 1,
                 weight_column: Any = None, optimizer: Any = "Ftrl",
                 config: RunConfig | None = None, loss_reduction: str = Reduction.SUM) -> None:
        head = regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(_bound_model_fn(head, optimizer, weight_column), model_dir=model_dir,
                         config=config)
