"""``tw.keras``: the graph-mode ``tf.keras`` of TF 1.15 (its common subset): layers, the
Sequential, functional and subclassing models, compile/fit/evaluate/predict in the backend's
session, callbacks, and weights saved as tensorweave checkpoints."""

from tensorweave.keras import (
    activations,
    backend,
    callbacks,
    initializers,
    layers,
    losses,
    metrics,
    models,
    optimizers,
    utils,
)
from tensorweave.keras.core_layers import Input
from tensorweave.keras.models import Model, Sequential

__all__ = [
    "Input", "Model", "Sequential", "activations", "backend", "callbacks", "initializers",
    "layers", "losses", "metrics", "models", "optimizers", "utils",
]
