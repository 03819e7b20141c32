"""Models over feature columns, as ``tf.compat.v1.feature_column``: ``input_layer``,
``linear_model`` and ``make_parse_example_spec``.

Contract: columns are taken in order of their names. ``input_layer`` concatenates each dense
column's tensor, reshaped to ``[batch, num_elements]``, into one float32 ``[batch, total]``
tensor; its variables live under ``input_layer/<column name>/`` (an embedding column's
``.../embedding_weights``). ``linear_model`` sums, per column, a ``[width, units]`` weight
``linear_model/<column name>/weights`` applied to a dense column's values or looked up by a
categorical column's ids (combined by `sparse_combiner`), plus
``linear_model/bias_weights``; all start at zero. Variables also go to the GLOBAL_VARIABLES and
MODEL_VARIABLES collections. Bad column lists raise TF's ``ValueError`` texts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tensorweave.api import array_ops, init_ops, math_ops, nn_ops, sparse_ops
from tensorweave.api.feature_column_base import (
    CategoricalColumn,
    DenseColumn,
    FeatureColumn,
    LazyBuilder,
)
from tensorweave.api.feature_column_embedding import safe_embedding_lookup_sparse
from tensorweave.api.scopes import get_collection
from tensorweave.api.variable_scope import get_variable, get_variable_scope, variable_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant
from tensorweave.engine.graph.graph import GraphKeys

__all__ = ["input_layer", "linear_model", "make_parse_example_spec"]


def _normalize_feature_columns(feature_columns: Any) -> list[FeatureColumn]:
    if isinstance(feature_columns, FeatureColumn):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, dict):
        raise ValueError("Expected feature_columns to be iterable, found dict.")
    feature_columns = list(feature_columns)
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise ValueError("Items of feature_columns must be a _FeatureColumn. "
                             f"Given (type {type(column)}): {column}.")
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    by_name: dict[str, FeatureColumn] = {}
    for column in feature_columns:
        if column.name in by_name:
            raise ValueError(
                f"Duplicate feature column name found for columns: {column} and "
                f"{by_name[column.name]}. This usually means that these columns refer to "
                "same base feature. Either one must be discarded or a duplicated but renamed "
                "item must be inserted in features dict.")
        by_name[column.name] = column
    return feature_columns


def _weight_collections(weight_collections: Iterable[str] | None) -> list[str]:
    collections = list(weight_collections or [])
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES):
        if key not in collections:
            collections.append(key)
    return collections


def _flatten_batch(tensor: Any, num_elements: int) -> Any:
    return array_ops.reshape(tensor, [array_ops.shape(tensor)[0], num_elements])


def _verify_static_batch_size_equality(tensors: list[Any],
                                       columns: list[FeatureColumn]) -> None:
    expected = None
    for tensor, column in zip(tensors, columns):
        size = tensor.shape[0]
        if size is None:
            continue
        if expected is None:
            expected = (size, column)
        elif size != expected[0]:
            raise ValueError("Batch size (first dimension) of each feature must be same. "
                             f"Batch size of columns ({expected[1].name}, {column.name}): "
                             f"({expected[0]}, {size})")


def input_layer(features: Mapping[Any, Any], feature_columns: Any,
                weight_collections: Iterable[str] | None = None, trainable: bool = True,
                cols_to_vars: dict[Any, Any] | None = None,
                cols_to_output_tensors: dict[Any, Any] | None = None) -> Any:
    """The ``[batch, total width]`` float32 input of a model: the dense columns'
    tensors, concatenated in order of column name. `cols_to_vars` and
    `cols_to_output_tensors`, when given, receive each column's variables and tensor."""
    feature_columns = _normalize_feature_columns(feature_columns)
    for column in feature_columns:
        if not isinstance(column, DenseColumn):
            raise ValueError("Items of feature_columns must be a _DenseColumn. You can wrap a "
                             "categorical column with an embedding_column or "
                             f"indicator_column. Given: {column}")
    collections = _weight_collections(weight_collections)
    with variable_scope(None, default_name="input_layer", values=list(features.values())):
        builder = LazyBuilder(features)
        outputs: list[Any] = []
        ordered = sorted(feature_columns, key=lambda c: c.name)
        for column in ordered:
            with variable_scope(None, default_name=column._var_scope_name):
                tensor = column._get_dense_tensor(builder, weight_collections=collections,
                                                  trainable=trainable)
                output = _flatten_batch(tensor, column._variable_shape.num_elements())
                outputs.append(output)
                if cols_to_vars is not None:
                    cols_to_vars[column] = get_collection(
                        GraphKeys.GLOBAL_VARIABLES, scope=get_variable_scope().name)
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = output
        _verify_static_batch_size_equality(outputs, ordered)
        return array_ops.concat(outputs, 1)


def linear_model(features: Mapping[Any, Any], feature_columns: Any, units: int = 1,
                 sparse_combiner: str = "sum", weight_collections: Iterable[str] | None = None,
                 trainable: bool = True, cols_to_vars: dict[Any, Any] | None = None) -> Any:
    """The ``[batch, units]`` weighted sum of the columns plus a bias. `cols_to_vars`, when
    given, receives each column's weights and ``"bias"``."""
    feature_columns = _normalize_feature_columns(feature_columns)
    for column in feature_columns:
        if not isinstance(column, (DenseColumn, CategoricalColumn)):
            raise ValueError("Items of feature_columns must be either a _DenseColumn or "
                             f"_CategoricalColumn. Given: {column}")
    collections = _weight_collections(weight_collections)
    with variable_scope(None, default_name="linear_model", values=list(features.values())):
        builder = LazyBuilder(features)
        sums: list[Any] = []
        ordered = sorted(feature_columns, key=lambda c: c.name)
        for column in ordered:
            with variable_scope(None, default_name=column._var_scope_name):
                if isinstance(column, CategoricalColumn):
                    weighted_sum, weights = _categorical_weighted_sum(
                        column, builder, units, sparse_combiner, collections, trainable)
                else:
                    weighted_sum, weights = _dense_weighted_sum(column, builder, units,
                                                                collections, trainable)
                sums.append(weighted_sum)
                if cols_to_vars is not None:
                    cols_to_vars[column] = [weights]
        _verify_static_batch_size_equality(sums, ordered)
        no_bias = math_ops.add_n(sums, name="weighted_sum_no_bias")
        bias = get_variable("bias_weights", shape=[units],
                            initializer=init_ops.zeros_initializer(), trainable=trainable,
                            collections=collections)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
        return nn_ops.bias_add(no_bias, bias, name="weighted_sum")


def _dense_weighted_sum(column: DenseColumn, builder: LazyBuilder, units: int,
                        collections: list[str], trainable: bool) -> tuple[Any, Any]:
    tensor = column._get_dense_tensor(builder, weight_collections=collections,
                                      trainable=trainable)
    num_elements = column._variable_shape.num_elements()
    weights = get_variable("weights", shape=[num_elements, units],
                           initializer=init_ops.zeros_initializer(), trainable=trainable,
                           collections=collections)
    return math_ops.matmul(_flatten_batch(tensor, num_elements), weights,
                           name="weighted_sum"), weights


def _categorical_weighted_sum(column: CategoricalColumn, builder: LazyBuilder, units: int,
                              sparse_combiner: str, collections: list[str],
                              trainable: bool) -> tuple[Any, Any]:
    ids, id_weights = column._get_sparse_tensors(builder, weight_collections=collections,
                                                 trainable=trainable)
    ids = sparse_ops.sparse_reshape(ids, _rows_by_rest(ids))
    if id_weights is not None:
        id_weights = sparse_ops.sparse_reshape(id_weights, _rows_by_rest(id_weights))
    weights = get_variable("weights", shape=(column._num_buckets, units),
                           initializer=init_ops.zeros_initializer(), trainable=trainable,
                           collections=collections)
    return safe_embedding_lookup_sparse(weights, ids, id_weights, combiner=sparse_combiner,
                                        name="weighted_sum"), weights


def _rows_by_rest(sp: Any) -> Any:
    """The shape ``[batch, -1]`` that folds a sparse tensor's inner dimensions into one."""
    return array_ops.stack([sp.dense_shape[0], constant(-1, dtypes.int64)])


def make_parse_example_spec(feature_columns: Iterable[FeatureColumn]) -> dict[str, Any]:
    """Feature key -> ``FixedLenFeature`` / ``VarLenFeature`` for ``tw.parse_example``, merged
    over `feature_columns`."""
    result: dict[str, Any] = {}
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise ValueError(f"All feature_columns must be _FeatureColumn instances. "
                             f"Given: {column}")
        config = column._parse_example_spec
        for key, value in config.items():
            if key in result and value != result[key]:
                raise ValueError(f"feature_columns contain different parse_spec for key {key}. "
                                 f"Given {value} and {result[key]}")
        result.update(config)
    return result
