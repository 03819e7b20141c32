"""`IndexedSlices` and `IndexedSlicesValue`: sparse slices of a dense tensor, as in
``tf.compat.v1``.

Contract: an `IndexedSlices` stands for the dense tensor of shape ``dense_shape`` whose row
``indices[i]`` is ``values[i]``, summed over repeated indices, and zeros elsewhere. It is what
``tw.gradients`` returns for a variable read by a gather (``tw.nn.embedding_lookup``), so an
optimizer can update only the touched rows and a ps only receives them. Its parts are ordinary
graph tensors: ``values`` (``[N, ...]``), ``indices`` (int32 or int64 ``[N]``) and an optional
int ``dense_shape``. Converting one to a `Tensor` (``tw.convert_to_tensor``, or passing it to
any op) densifies it with ``UnsortedSegmentSum``, warning as TF does when the dense shape is
unknown or has 100M elements or more; without ``dense_shape`` it raises `ValueError`.
Sessions fetch one as an `IndexedSlicesValue`.
"""

from __future__ import annotations

import collections
import warnings
from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.client.conversions import register_session_run_conversion_functions
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Graph, Operation, Tensor, constant_value
from tensorweave.engine.graph.op_builder import apply

__all__ = ["IndexedSlices", "IndexedSlicesValue", "convert_to_tensor_or_indexed_slices"]

IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])

# TF's _LARGE_SPARSE_NUM_ELEMENTS: densifying at least this many elements warns.
LARGE_SPARSE_NUM_ELEMENTS = 100_000_000


class IndexedSlices:
    """Rows ``values`` of a dense tensor at ``indices``; see the module docstring."""

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None) -> None:
        self._values = convert_to_tensor(values, name="values")
        graph = self._values.graph
        with graph.as_default():
            self._indices = convert_to_tensor(indices, name="indices")
            self._dense_shape = None if dense_shape is None \
                else convert_to_tensor(dense_shape, name="dense_shape")
        if self._indices.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"IndexedSlices indices must be int32 or int64, got "
                            f"{self._indices.dtype.name}")
        self._indices.shape.with_rank(1)
        if self._dense_shape is not None:
            if self._dense_shape.dtype not in (dtypes.int32, dtypes.int64):
                raise TypeError(f"IndexedSlices dense_shape must be int32 or int64, got "
                                f"{self._dense_shape.dtype.name}")
            self._dense_shape.shape.with_rank(1)
        self._dense: Tensor | None = None

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def dense_shape(self) -> Tensor | None:
        return self._dense_shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._values.dtype

    @property
    def op(self) -> Operation:
        return self._values.op

    @property
    def graph(self) -> Graph:
        return self._values.graph

    @property
    def name(self) -> str:
        return self._values.name

    @property
    def device(self) -> str:
        return self._values.device

    def consumers(self) -> list[Operation]:
        parts = [self._values, self._indices] + \
            ([] if self._dense_shape is None else [self._dense_shape])
        return list(dict.fromkeys(op for t in parts for op in t.consumers()))

    def eval(self, feed_dict: dict | None = None, session: Any = None) -> IndexedSlicesValue:
        from tensorweave.engine.client.session import get_default_session_or_raise

        return (session or get_default_session_or_raise()).run(self, feed_dict)

    def __neg__(self) -> IndexedSlices:
        with self.graph.as_default():
            return IndexedSlices(apply("Neg", [self._values]), self._indices, self._dense_shape)

    def _as_tensor(self, dtype: dtypes.DType | None = None) -> Tensor:
        """The dense tensor; one per `IndexedSlices` outside control dependencies (as a
        variable's snapshot), a new one under them so it runs after them."""
        if dtype is not None and dtypes.as_dtype(dtype) != self.dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                             f"for IndexedSlices with dtype {self.dtype.name}")
        if self.graph._current_control_inputs():
            return self._densify(warn=True)
        if self._dense is None:
            self._dense = self._densify(warn=True)
        return self._dense

    def _densify(self, warn: bool) -> Tensor:
        if self._dense_shape is None:
            raise ValueError(f"Tensor conversion requested for IndexedSlices without "
                             f"dense_shape: {self}")
        if warn:
            _warn_if_large(self._dense_shape)
        with self.graph.as_default():
            rows = apply("StridedSlice", [self._dense_shape, [0], [1], [1]],
                         {"shrink_axis_mask": 1})
            return apply("UnsortedSegmentSum", [self._values, self._indices, rows])

    def __repr__(self) -> str:
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"


def _warn_if_large(dense_shape: Tensor) -> None:
    value = constant_value(dense_shape)
    if value is None:
        warnings.warn("Converting sparse IndexedSlices to a dense Tensor of unknown shape. "
                      "This may consume a large amount of memory.", UserWarning, stacklevel=4)
        return
    elements = int(np.prod(value, dtype=np.int64))
    if elements >= LARGE_SPARSE_NUM_ELEMENTS:
        warnings.warn(f"Converting sparse IndexedSlices to a dense Tensor with {elements} "
                      "elements. This may consume a large amount of memory.", UserWarning,
                      stacklevel=4)


def to_dense(value: Any) -> Any:
    """`value` densified if it is an `IndexedSlices` without warning (for gradient code that
    knows the slices are small or dense anyway, as TF's ``_IndexedSlicesToTensorNoWarning``);
    anything else unchanged."""
    if isinstance(value, IndexedSlices):
        return value._densify(warn=False)
    return value


def convert_to_tensor_or_indexed_slices(value: Any, dtype: Any = None,
                                        name: str | None = None) -> Tensor | IndexedSlices:
    """`value` unchanged if it is an `IndexedSlices` (of `dtype`, when given), else
    ``convert_to_tensor(value, dtype, name)``."""
    if isinstance(value, IndexedSlices):
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                             f"for Tensor with dtype {value.dtype.name}: {value!r}")
        return value
    return convert_to_tensor(value, dtype, name=name)


def _fetch(value: IndexedSlices) -> tuple[list[Tensor], Any]:
    if value.dense_shape is None:
        return [value.values, value.indices], lambda parts: IndexedSlicesValue(*parts, None)
    return ([value.values, value.indices, value.dense_shape],
            lambda parts: IndexedSlicesValue(*parts))


register_session_run_conversion_functions(IndexedSlices, _fetch)
