"""``tw.keras.metrics``: Keras's metric functions, ``fn(y_true, y_pred)`` -> one value per
sample, averaged over the batch by the training loop; `get` resolves a metric name, and
`resolve` turns a `compile` metric into ``(history name, function)``, choosing binary,
categorical or sparse categorical accuracy for ``"accuracy"``/``"acc"`` from the loss and the
output shape as Keras does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.keras import losses
from tensorweave.keras.losses import (
    binary_crossentropy,
    categorical_crossentropy,
    mean_absolute_error,
    mean_squared_error,
    sparse_categorical_crossentropy,
)

__all__ = [
    "binary_accuracy", "binary_crossentropy", "categorical_accuracy",
    "categorical_crossentropy", "get", "mae", "mean_absolute_error", "mean_squared_error", "mse",
    "resolve", "sparse_categorical_accuracy", "sparse_categorical_crossentropy",
]


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> Tensor:
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(y_true, y_pred.dtype)
    predicted = math_ops.cast(math_ops.greater(y_pred, threshold), y_pred.dtype)
    return math_ops.reduce_mean(math_ops.cast(math_ops.equal(y_true, predicted),
                                              dtypes.float32), axis=-1)


def categorical_accuracy(y_true: Any, y_pred: Any) -> Tensor:
    return math_ops.cast(math_ops.equal(math_ops.argmax(y_true, -1),
                                        math_ops.argmax(y_pred, -1)), dtypes.float32)


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> Tensor:
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    if y_true.shape.ndims is not None and y_true.shape.ndims == y_pred.shape.ndims:
        y_true = array_ops.squeeze(y_true, [-1])
    predicted = math_ops.cast(math_ops.argmax(y_pred, -1), y_true.dtype)
    return math_ops.cast(math_ops.equal(y_true, predicted), dtypes.float32)


mse = mean_squared_error
mae = mean_absolute_error

_BY_NAME: dict[str, Callable[..., Tensor]] = {
    "binary_accuracy": binary_accuracy, "categorical_accuracy": categorical_accuracy,
    "sparse_categorical_accuracy": sparse_categorical_accuracy, "mse": mean_squared_error,
    "mean_squared_error": mean_squared_error, "mae": mean_absolute_error,
    "mean_absolute_error": mean_absolute_error, "binary_crossentropy": binary_crossentropy,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
}


def get(identifier: Any) -> Callable[..., Tensor]:
    """The metric function `identifier` names or is."""
    if isinstance(identifier, str):
        try:
            return _BY_NAME[identifier]
        except KeyError:
            raise ValueError(f"Unknown metric function:{identifier}") from None
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret metric function identifier: {identifier!r}")


def resolve(metric: Any, loss_fn: Callable[..., Any],
            output_shape: Any) -> tuple[str, Callable[..., Tensor]]:
    """``(name, fn)`` of a metric given to `compile` for an output of `output_shape` trained
    with `loss_fn`: ``"acc"`` and the accuracy that fits for ``"accuracy"``/``"acc"``, else
    the function's name."""
    if metric in ("accuracy", "acc"):
        if output_shape[-1] == 1 or loss_fn is losses.binary_crossentropy:
            return "acc", binary_accuracy
        if loss_fn is losses.sparse_categorical_crossentropy:
            return "acc", sparse_categorical_accuracy
        return "acc", categorical_accuracy
    fn = get(metric)
    return getattr(fn, "name", None) or fn.__name__, fn
