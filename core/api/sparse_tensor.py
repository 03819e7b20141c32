"""`SparseTensor` and `SparseTensorValue`, as in ``tf.compat.v1``.

Contract: a `SparseTensor` is three ordinary graph tensors: ``indices`` (int64 ``[N, rank]``),
``values`` (``[N]``, any dtype) and ``dense_shape`` (int64 ``[rank]``). Construction converts the
three and checks their static shapes against each other (`ValueError`, as TF); the values'
consistency is checked at run time by the kernels that consume them. ``shape`` is the static
dense shape read from ``dense_shape`` when it is known at graph-construction time. A
`SparseTensor` is not a `Tensor`: converting one to a tensor raises `TypeError`, as in TF, so a
dense op given one fails at construction. Sessions fetch one as a `SparseTensorValue` and feed
one from a `SparseTensorValue` or an ``(indices, values, dense_shape)`` triple
(`sparse_feed_items`).
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.client.conversions import register_session_run_conversion_functions
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import (
    Graph,
    Operation,
    Tensor,
    constant_value,
    get_default_graph,
)
from tensorweave.engine.tensor_shape import TensorShape

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])


class SparseTensor:
    """A sparse tensor: the dense tensor with ``values[i]`` at ``indices[i]`` and zeros
    elsewhere."""

    def __init__(self, indices: Any, values: Any, dense_shape: Any) -> None:
        graph = _graph_of(indices, values, dense_shape)
        with graph.as_default(), graph.name_scope("SparseTensor"):
            self._indices = convert_to_tensor(indices, dtypes.int64, name="indices")
            self._values = convert_to_tensor(values, name="values")
            self._dense_shape = convert_to_tensor(dense_shape, dtypes.int64, name="dense_shape")
        index_shape = self._indices.shape.with_rank(2)
        _merge_dims(index_shape[0], self._values.shape.with_rank(1)[0])
        _merge_dims(index_shape[1], self._dense_shape.shape.with_rank(1)[0])
        self._dense_shape_default: TensorShape | None = None

    @classmethod
    def from_value(cls, sparse_tensor_value: Any) -> SparseTensor:
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        if not isinstance(sparse_tensor_value, SparseTensorValue):
            raise TypeError(f"Neither a SparseTensor nor SparseTensorValue: "
                            f"{sparse_tensor_value}.")
        return cls(*sparse_tensor_value)

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def dense_shape(self) -> Tensor:
        return self._dense_shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._values.dtype

    @property
    def op(self) -> Operation:
        return self._values.op

    @property
    def graph(self) -> Graph:
        return self._indices.graph

    @property
    def shape(self) -> TensorShape:
        return self.get_shape()

    def get_shape(self) -> TensorShape:
        """The static dense shape: ``dense_shape``'s value where it is known (-1 as unknown)."""
        if self._dense_shape_default is not None:
            return self._dense_shape_default
        value = constant_value(self._dense_shape)
        if value is not None:
            return TensorShape([None if d < 0 else int(d) for d in np.ravel(value)])
        rank = self._dense_shape.shape[0]
        return TensorShape(None if rank is None else [None] * rank)

    def consumers(self) -> list[Operation]:
        ops = [*self._indices.consumers(), *self._values.consumers(),
               *self._dense_shape.consumers()]
        return list(dict.fromkeys(ops))

    def eval(self, feed_dict: dict | None = None, session: Any = None) -> SparseTensorValue:
        from tensorweave.engine.client.session import get_default_session_or_raise

        return (session or get_default_session_or_raise()).run(self, feed_dict)

    def _as_tensor(self, dtype: Any = None) -> Tensor:
        raise TypeError(f"Failed to convert object of type {type(self)} to Tensor. Contents: "
                        f"{self}. Consider casting elements to a supported type.")

    def __repr__(self) -> str:
        return (f"SparseTensor(indices={self._indices}, values={self._values}, "
                f"dense_shape={self._dense_shape})")


def _merge_dims(a: int | None, b: int | None) -> None:
    """TF's ``Dimension.merge_with``: two known sizes must agree."""
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions {a} and {b} are not compatible")


def _graph_of(*parts: Any) -> Graph:
    for part in parts:
        if isinstance(part, Tensor):
            return part.graph
    return get_default_graph()


def sparse_feed_items(key: SparseTensor, value: Any) -> list[tuple[Tensor, Any]]:
    """The three component feeds of feeding `value` to `key`, as TF's session expands them."""
    if isinstance(value, SparseTensor):
        raise TypeError("The value of a feed cannot be a tf.SparseTensor object. Acceptable "
                        "feed values include tf.compat.v1.SparseTensorValue or a tuple of "
                        "(indices, values, dense_shape).")
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise TypeError(f"Cannot feed value {value!r} to a SparseTensor: a SparseTensorValue or "
                        f"an (indices, values, dense_shape) tuple is expected.")
    return list(zip((key.indices, key.values, key.dense_shape), value))


def _fetch(value: SparseTensor) -> tuple[list[Tensor], Any]:
    return ([value.indices, value.values, value.dense_shape],
            lambda parts: SparseTensorValue(*parts))


register_session_run_conversion_functions(SparseTensor, _fetch, sparse_feed_items)
