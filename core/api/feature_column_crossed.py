"""``crossed_column`` of ``tf.compat.v1.feature_column`` (TF 1.15).

Contract: a `CrossedColumn` is a categorical column whose ids are the hashed crosses
(``tw.sparse.cross_hashed`` with ``hash_bucket_size`` buckets and ``hash_key``) of its leaf
keys, in the order given, nested crossed columns flattened in place. A string key crosses the
raw feature (sparse, or dense ``[batch, k]``); a categorical key crosses its ids (a bucketized
column's bucket ids, a vocabulary column's indices, ...). The name is the leaf names sorted
and joined by ``"_X_"``. Constructor errors are TF's ``ValueError`` texts; hashed categorical
columns and columns with weights are refused, as in TF.
"""

from __future__ import annotations

from typing import Any

import attrs

from tensorweave.api.feature_column_base import CategoricalColumn, IdWeightPair, LazyBuilder
from tensorweave.api.feature_column_categorical import HashedCategoricalColumn
from tensorweave.api.parsing_ops import VarLenFeature
from tensorweave.api.sparse_cross_ops import sparse_cross_hashed
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine import dtypes

__all__ = ["crossed_column"]


@attrs.frozen
class CrossedColumn(CategoricalColumn):
    """See `crossed_column`."""

    keys: tuple[Any, ...]
    hash_bucket_size: int
    hash_key: int | None

    @property
    def name(self) -> str:
        names = [k if isinstance(k, str) else k.name for k in self._leaf_keys()]
        return "_X_".join(sorted(names))

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        config: dict[str, Any] = {}
        for key in self.keys:
            if isinstance(key, str):
                config[key] = VarLenFeature(dtypes.string)
            else:
                config.update(key._parse_example_spec)
        return config

    @property
    def _num_buckets(self) -> int:
        return self.hash_bucket_size

    def _leaf_keys(self) -> list[Any]:
        leaves: list[Any] = []
        for key in self.keys:
            leaves.extend(key._leaf_keys() if isinstance(key, CrossedColumn) else [key])
        return leaves

    def _transform_feature(self, inputs: LazyBuilder) -> SparseTensor:
        features = []
        for key in self._leaf_keys():
            if isinstance(key, str):
                features.append(inputs.get(key))
                continue
            ids, weights = key._get_sparse_tensors(inputs)
            if weights is not None:
                raise ValueError("crossed_column does not support weight_tensor, but the given "
                                 f"column populates weight_tensor. Given column: {key.name}")
            features.append(ids)
        return sparse_cross_hashed(features, num_buckets=self.hash_bucket_size,
                                   hash_key=self.hash_key)

    def _get_sparse_tensors(self, inputs: LazyBuilder, weight_collections: Any = None,
                            trainable: bool | None = None) -> IdWeightPair:
        return IdWeightPair(inputs.get(self), None)


def crossed_column(keys: Any, hash_bucket_size: int,
                   hash_key: int | None = None) -> CrossedColumn:
    """Ids: the crosses of `keys` (feature names or categorical columns) hashed into
    `hash_bucket_size` buckets, one id per combination of one feature from each key."""
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for key in keys:
        if not isinstance(key, (str, CategoricalColumn)):
            raise ValueError("Unsupported key type. All keys must be either string, or "
                             "categorical column except HashedCategoricalColumn. "
                             f"Given: {key}")
        if isinstance(key, HashedCategoricalColumn):
            raise ValueError("categorical_column_with_hash_bucket is not supported for "
                             "crossing. Hashing before crossing will increase probability of "
                             f"collision. Instead, use the feature name as a string. Given: {key}")
    return CrossedColumn(tuple(keys), int(hash_bucket_size), hash_key)
