"""``tw.keras.losses``: Keras's loss functions, ``fn(y_true, y_pred)`` -> one loss per sample
(the mean over the last axis), and `get`, which resolves a loss given by name (``"mse"``,
``"categorical_crossentropy"``, ...) or callable.

As TF 1.15's backend, the cross-entropies of probabilities clip them to ``[1e-7, 1 - 1e-7]``,
except when the predictions are the direct output of a ``Softmax`` (``Sigmoid``) op: then they
use the logits behind it, which is exact and keeps gradients alive for saturated outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, math_ops, nn_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "MAE", "MSE", "binary_crossentropy", "categorical_crossentropy", "get", "hinge", "mae",
    "mean_absolute_error", "mean_squared_error", "mse", "sparse_categorical_crossentropy",
    "squared_hinge",
]

EPSILON = 1e-7


def _pair(y_true: Any, y_pred: Any) -> tuple[Tensor, Tensor]:
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(y_true, y_pred.dtype)
    return y_true, y_pred


def mean_squared_error(y_true: Any, y_pred: Any) -> Tensor:
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.square(y_pred - y_true), axis=-1)


def mean_absolute_error(y_true: Any, y_pred: Any) -> Tensor:
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.abs(y_pred - y_true), axis=-1)


def hinge(y_true: Any, y_pred: Any) -> Tensor:
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def squared_hinge(y_true: Any, y_pred: Any) -> Tensor:
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.square(math_ops.maximum(1.0 - y_true * y_pred, 0.0)),
                                axis=-1)


def _logits_of(output: Tensor, op_type: str) -> Tensor | None:
    """The input of `output`'s op if that op is `op_type` (a Softmax or Sigmoid)."""
    return output.op.inputs[0] if output.op.type == op_type else None


def _clipped(output: Tensor) -> Tensor:
    return math_ops.clip_by_value(output, EPSILON, 1.0 - EPSILON)


def binary_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False) -> Tensor:
    y_true, y_pred = _pair(y_true, y_pred)
    logits = y_pred if from_logits else _logits_of(y_pred, "Sigmoid")
    if logits is None:
        p = _clipped(y_pred)
        logits = math_ops.log(p / (1.0 - p))
    return math_ops.reduce_mean(
        nn_ops.sigmoid_cross_entropy_with_logits(labels=y_true, logits=logits), axis=-1)


def categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False) -> Tensor:
    y_true, y_pred = _pair(y_true, y_pred)
    logits = y_pred if from_logits else _logits_of(y_pred, "Softmax")
    if logits is None:
        p = _clipped(y_pred / math_ops.reduce_sum(y_pred, axis=-1, keepdims=True))
        return -math_ops.reduce_sum(y_true * math_ops.log(p), axis=-1)
    return nn_ops.softmax_cross_entropy_with_logits_v2(labels=y_true, logits=logits)


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any,
                                    from_logits: bool = False) -> Tensor:
    """Cross-entropy against integer class labels (any float or int dtype, with or without a
    trailing axis of 1)."""
    y_pred = convert_to_tensor(y_pred)
    logits = y_pred if from_logits else _logits_of(y_pred, "Softmax")
    if logits is None:
        logits = math_ops.log(_clipped(y_pred))
    classes = logits.shape[-1]
    labels = math_ops.cast(array_ops.reshape(y_true, [-1]), dtypes.int64)
    flat = array_ops.reshape(logits, [-1, classes if classes is not None else
                                      array_ops.shape(logits)[-1]])
    losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=flat)
    if logits.shape.ndims == 2:
        return losses
    return array_ops.reshape(losses, array_ops.shape(logits)[:-1])


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error

_BY_NAME: dict[str, Callable[..., Tensor]] = {
    "mse": mean_squared_error, "MSE": mean_squared_error,
    "mean_squared_error": mean_squared_error, "mae": mean_absolute_error,
    "MAE": mean_absolute_error, "mean_absolute_error": mean_absolute_error,
    "binary_crossentropy": binary_crossentropy,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy, "hinge": hinge,
    "squared_hinge": squared_hinge,
}


def get(identifier: Any) -> Callable[..., Tensor]:
    """The loss function `identifier` names or is."""
    if isinstance(identifier, str):
        try:
            return _BY_NAME[identifier]
        except KeyError:
            raise ValueError(f"Unknown loss function:{identifier}") from None
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss function identifier: {identifier!r}")
