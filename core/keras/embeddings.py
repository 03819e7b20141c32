"""Keras's `Embedding`: integer indices looked up in an ``(input_dim, output_dim)`` matrix
``embeddings`` (Keras's default initializer: uniform in ±0.05)."""

from __future__ import annotations

from typing import Any

from tensorweave.api import math_ops, nn_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.keras import initializers
from tensorweave.keras.base_layer import Layer

__all__ = ["Embedding"]


class Embedding(Layer):
    """Rows of `embeddings` for integer (or integral float) indices of any shape; the output
    has one more axis of size `output_dim`."""

    def __init__(self, input_dim: int, output_dim: int, embeddings_initializer: Any = "uniform",
                 embeddings_regularizer: Any = None, embeddings_constraint: Any = None,
                 input_length: int | None = None, **kwargs: Any) -> None:
        if "input_shape" not in kwargs and "batch_input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,)
        super().__init__(dtype=kwargs.pop("dtype", dtypes.float32), **kwargs)
        if input_dim <= 0 or output_dim <= 0:
            raise ValueError("Both `input_dim` and `output_dim` should be positive, found "
                             f"input_dim {input_dim} and output_dim {output_dim}")
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.input_length = input_length
        self._initializer = initializers.get(embeddings_initializer)
        self._regularizer = embeddings_regularizer
        self._constraint = embeddings_constraint

    def _checked(self, inputs: Any) -> Tensor:
        return convert_to_tensor(inputs)

    def build(self, input_shape: Any) -> None:
        self.embeddings = self.add_weight("embeddings", [self.input_dim, self.output_dim],
                                          initializer=self._initializer,
                                          regularizer=self._regularizer,
                                          constraint=self._constraint)

    def call(self, inputs: Tensor) -> Tensor:
        if inputs.dtype not in (dtypes.int32, dtypes.int64):
            inputs = math_ops.cast(inputs, dtypes.int32)
        return nn_ops.embedding_lookup(self.embeddings, inputs)
