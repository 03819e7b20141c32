"""Keras's `BatchNormalization`: ``tw.layers.BatchNormalization`` with Keras's arguments
(initializer names) whose `training` follows `backend.learning_phase()` when not given. Its
moving-average updates are recorded on the layer (`updates`); a model's training step runs
them."""

from __future__ import annotations

from typing import Any

from tensorweave.api import layers as tf_layers
from tensorweave.engine.graph.graph import Tensor
from tensorweave.keras import backend, initializers
from tensorweave.keras.base_layer import Layer

__all__ = ["BatchNormalization"]


class BatchNormalization(tf_layers.BatchNormalization, Layer):
    """Normalize with the batch's moments in training, with the moving ones otherwise."""

    def __init__(self, axis: Any = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", moving_mean_initializer: Any = "zeros",
                 moving_variance_initializer: Any = "ones", beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, fused: bool | None = None, **kwargs: Any) -> None:
        tf_layers.BatchNormalization.__init__(
            self, axis, momentum, epsilon, center, scale, initializers.get(beta_initializer),
            initializers.get(gamma_initializer), initializers.get(moving_mean_initializer),
            initializers.get(moving_variance_initializer), beta_regularizer, gamma_regularizer,
            beta_constraint, gamma_constraint, fused=fused, **kwargs)

    def call(self, inputs: Tensor, training: Any = None) -> Tensor:
        if training is None:
            training = backend.learning_phase()
        return tf_layers.BatchNormalization.call(self, inputs, training)
