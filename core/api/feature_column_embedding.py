"""``embedding_column`` of ``tf.compat.v1.feature_column``; its lookup (and ``linear_model``'s)
is ``tw.nn.safe_embedding_lookup_sparse``, re-exported here.

Contract: an embedding column owns the float32 variable ``embedding_weights`` of shape
``[num_buckets, dimension]`` in the caller's variable scope (``input_layer`` puts it under
``input_layer/<name>/``), initialized by default from a truncated normal of stddev
``1/sqrt(dimension)``, or with the tensor `tensor_name_in_ckpt` of the checkpoint
`ckpt_to_load_from` (read when the variable is created). Per example it gives the
`combiner` ("mean", "sqrtn", "sum") of the embeddings of its ids, weighted by the column's
weights; negative ids (and, except for "sum", non-positive weights) are dropped, and an example
without ids gives zeros.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from tensorweave.api import init_ops
from tensorweave.api.feature_column_base import CategoricalColumn, DenseColumn, LazyBuilder
from tensorweave.api.nn_extra import safe_embedding_lookup_sparse
from tensorweave.api.variable_scope import get_variable
from tensorweave.engine import dtypes
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.train.checkpoint_management import load_variable

__all__ = ["embedding_column"]


@attrs.frozen
class EmbeddingColumn(DenseColumn):
    """See `embedding_column`."""

    categorical_column: CategoricalColumn
    dimension: int
    combiner: str
    initializer: Any
    ckpt_to_load_from: str | None
    tensor_name_in_ckpt: str | None
    max_norm: Any
    trainable: bool

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_embedding"

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        return self.categorical_column._parse_example_spec

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape([self.dimension])

    def _transform_feature(self, inputs: LazyBuilder) -> Any:
        return inputs.get(self.categorical_column)

    def _get_dense_tensor(self, inputs: LazyBuilder, weight_collections: Any = None,
                          trainable: bool | None = None) -> Any:
        ids, weights = self.categorical_column._get_sparse_tensors(
            inputs, weight_collections=weight_collections, trainable=trainable)
        shape = (self.categorical_column._num_buckets, self.dimension)
        embedding_weights = get_variable(
            "embedding_weights", shape=shape, dtype=dtypes.float32,
            initializer=self._initializer(shape),
            trainable=bool(self.trainable and (trainable is None or trainable)),
            collections=weight_collections)
        return safe_embedding_lookup_sparse(embedding_weights, ids, weights,
                                            combiner=self.combiner,
                                            name=f"{self.name}_weights",
                                            max_norm=self.max_norm)

    def _initializer(self, shape: tuple[int, int]) -> Any:
        if self.ckpt_to_load_from is None:
            return self.initializer
        value = load_variable(self.ckpt_to_load_from, self.tensor_name_in_ckpt)
        if tuple(value.shape) != shape:
            raise ValueError(f"Shape of variable embedding_weights ({list(shape)}) doesn't "
                             f"match with shape of tensor {self.tensor_name_in_ckpt} "
                             f"({list(value.shape)}) from checkpoint reader.")
        return init_ops.constant_initializer(value)


def embedding_column(categorical_column: CategoricalColumn, dimension: int,
                     combiner: str = "mean", initializer: Any = None,
                     ckpt_to_load_from: str | None = None, tensor_name_in_ckpt: str | None = None,
                     max_norm: Any = None, trainable: bool = True) -> EmbeddingColumn:
    """`categorical_column`'s ids as the `combiner` of their learned `dimension`-wide
    embeddings."""
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or "
                         "none of them.")
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified. "
                         f"Embedding of column_name: {categorical_column.name}")
    if initializer is None:
        initializer = init_ops.truncated_normal_initializer(mean=0.0,
                                                            stddev=1 / math.sqrt(dimension))
    return EmbeddingColumn(categorical_column, int(dimension), combiner, initializer,
                           ckpt_to_load_from, tensor_name_in_ckpt, max_norm, bool(trainable))
