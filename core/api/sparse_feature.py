"""``tf.io.SparseFeature`` for ``parse_example``/``parse_single_example``.

Contract, as TF 1.15: a ``SparseFeature(index_key, value_key, dtype, size, already_sorted)``
is parsed as int64 variable-length features under its index key(s) and a variable-length
feature of `dtype` under `value_key`, then merged (``tf.sparse_merge``) into one
`SparseTensor` whose last dimension, of `size`, is indexed by the index values (several index
keys give several dimensions, `size` a list). Keys a feature spec shares must agree on their
dtype and may not be dense, else `ValueError`; the helper keys are dropped from the result
unless asked for themselves.
"""

from __future__ import annotations

import collections
from typing import Any

from tensorweave.engine import dtypes

__all__ = ["SparseFeature"]


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A sparse feature built from index and value features (TF's namedtuple)."""

    def __new__(cls, index_key: Any, value_key: str, dtype: Any, size: Any,
                already_sorted: bool = False) -> SparseFeature:
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def _index_keys(feature: SparseFeature) -> list[str]:
    keys = feature.index_key
    return [keys] if isinstance(keys, str) else list(keys)


def expand_sparse_features(features: dict[str, Any]) -> dict[str, Any]:
    """`features` with each SparseFeature replaced by the VarLenFeatures it is parsed from."""
    from tensorweave.api.parsing_ops import VarLenFeature

    if not any(isinstance(f, SparseFeature) for f in (features or {}).values()):
        return features
    plain = {k: f for k, f in features.items() if not isinstance(f, SparseFeature)}

    def add(key: str, dtype: dtypes.DType) -> None:
        existing = plain.get(key)
        if existing is None:
            plain[key] = VarLenFeature(dtype)
        elif not isinstance(existing, VarLenFeature):
            raise ValueError(f"Dense and sparse keys must not intersect; intersection: {{{key}}}")
        elif dtypes.as_dtype(existing.dtype) != dtype:
            raise ValueError(f"Conflicting type {dtypes.as_dtype(existing.dtype)} vs {dtype} "
                             f"for feature {key}.")

    for key in sorted(features):
        feature = features[key]
        if not isinstance(feature, SparseFeature):
            continue
        if not feature.index_key:
            raise ValueError(f"Missing index_key for SparseFeature {feature}.")
        if not feature.value_key:
            raise ValueError(f"Missing value_key for SparseFeature {feature}.")
        if not feature.dtype:
            raise ValueError(f"Missing type for feature {key}.")
        for index_key in sorted(_index_keys(feature)):
            add(index_key, dtypes.int64)
        add(feature.value_key, dtypes.as_dtype(feature.dtype))
    return plain


def merge_sparse_features(features: dict[str, Any], parsed: dict[str, Any]) -> dict[str, Any]:
    """`parsed` with each SparseFeature of `features` merged from its parts, helper keys
    dropped."""
    from tensorweave.api.sparse_ops_extra import sparse_merge

    sparse = {k: f for k, f in features.items() if isinstance(f, SparseFeature)}
    if not sparse:
        return parsed
    result = dict(parsed)
    for key, feature in sparse.items():
        ids = [parsed[k] for k in _index_keys(feature)]
        result[key] = sparse_merge(ids[0] if isinstance(feature.index_key, str) else ids,
                                   parsed[feature.value_key], vocab_size=feature.size,
                                   already_sorted=feature.already_sorted)
    return {k: v for k, v in result.items() if k in features}
