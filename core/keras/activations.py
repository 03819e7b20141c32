"""``tw.keras.activations``: Keras's activation functions and `get`, which resolves an
activation given by name (``"relu"``), by callable or as None (the identity, ``"linear"``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, math_ops, nn_ops
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "elu", "get", "hard_sigmoid", "linear", "relu", "selu", "sigmoid", "softmax", "softplus",
    "softsign", "tanh",
]


def linear(x: Any) -> Any:
    return x


def relu(x: Any, alpha: float = 0.0, max_value: float | None = None,
         threshold: float = 0.0) -> Tensor:
    """``max(x, 0)``; with `alpha`, ``alpha * (x - threshold)`` below `threshold`; capped at
    `max_value` (Keras's backend formula)."""
    if alpha and max_value is None and threshold == 0.0:
        return nn_ops.leaky_relu(x, alpha=alpha)
    negative = nn_ops.relu(threshold - x) if alpha else None
    if threshold != 0.0:
        x = math_ops.multiply(x, math_ops.cast(math_ops.greater(x, threshold), x.dtype))
    else:
        x = nn_ops.relu(x)
    if max_value is not None:
        x = math_ops.clip_by_value(x, 0.0, max_value)
    return x if negative is None else x - alpha * negative


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """Softmax over `axis`; rank-1 inputs are refused, as in Keras."""
    if x.shape.ndims == 1:
        raise ValueError("Cannot apply softmax to a tensor that is 1D. Received input: "
                         f"{x}")
    return nn_ops.softmax(x, axis=axis)


def sigmoid(x: Any) -> Tensor:
    return nn_ops.sigmoid(x)


def hard_sigmoid(x: Any) -> Tensor:
    """``clip(0.2 * x + 0.5, 0, 1)``."""
    return math_ops.clip_by_value(x * 0.2 + 0.5, 0.0, 1.0)


def tanh(x: Any) -> Tensor:
    return nn_ops.tanh(x)


def elu(x: Any, alpha: float = 1.0) -> Tensor:
    out = nn_ops.elu(x)
    return out if alpha == 1.0 else array_ops.where_v2(math_ops.greater(x, 0.0), out,
                                                       out * alpha)


def selu(x: Any) -> Tensor:
    return nn_ops.selu(x)


def softplus(x: Any) -> Tensor:
    return nn_ops.softplus(x)


def softsign(x: Any) -> Tensor:
    return nn_ops.softsign(x)


_BY_NAME: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (linear, relu, softmax, sigmoid, hard_sigmoid, tanh, elu, selu,
                            softplus, softsign)
}


def get(identifier: Any) -> Callable[..., Any]:
    """The activation `identifier` names, is, or ``linear`` for None."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        try:
            return _BY_NAME[identifier]
        except KeyError:
            raise ValueError(f"Unknown activation function:{identifier}") from None
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation function identifier: {identifier!r}")
