"""``tw.keras``: the graph-mode ``tf.keras`` of TF 1.15 (its common subset): layers, the
Sequential, functional and subclassing models, compile/fit/evaluate/predict in the backend's
session, callbacks, weights saved as tensorweave checkpoints, and
`estimator.model_to_estimator`."""

from tensorweave.keras import (
    activations,
    backend,
    callbacks,
    constraints,
    estimator,
    initializers,
    layers,
    losses,
    metrics,
    models,
    optimizers,
    regularizers,
    utils,
)
from tensorweave.keras.core_layers import Input
from tensorweave.keras.models import Model, Sequential

__all__ = [
    "Input", "Model", "Sequential", "activations", "backend", "callbacks", "constraints",
    "estimator", "initializers", "layers", "losses", "metrics", "models", "optimizers",
    "regularizers", "utils",
]
