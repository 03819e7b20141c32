"""`TensorInfo` from a graph tensor and back (``tf.saved_model.utils``).

Contract: `build_tensor_info` describes a `Tensor` by name, or a `SparseTensor` by the names of
its three tensors (``coo_sparse``), with its dtype (TF's ``DataType`` number, `dtype_enum`) and
static shape (a ``TensorShapeProto``, `shape_proto`; `tensor_shape` reads one back).
`get_tensor_from_tensor_info` finds the described tensor in a graph (names prefixed with
``import_scope``, as the loader imports them); a name that is not in the graph raises as
``Graph.get_tensor_by_name`` does.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Graph, Tensor, get_default_graph
from tensorweave.engine.graph.tensor_proto import shape_from_proto, shape_to_proto
from tensorweave.engine.proto.framework import TensorShapeProto
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.formats.saved_model_proto import CooSparse, TensorInfo

__all__ = ["build_tensor_info", "dtype_enum", "get_tensor_from_tensor_info", "shape_proto",
           "tensor_shape"]


def dtype_enum(dtype: dtypes.DType) -> int:
    """TF's ``DataType`` number of `dtype` (its ``as_datatype_enum``)."""
    return dtypes.as_dtype(dtype).as_datatype_enum


def shape_proto(shape: TensorShape) -> TensorShapeProto:
    """`shape` as TF's ``TensorShapeProto`` (its ``as_proto``): an unknown dimension is -1."""
    return shape_to_proto(shape)


def tensor_shape(proto: TensorShapeProto) -> TensorShape:
    """The `TensorShape` a ``TensorShapeProto`` describes."""
    return shape_from_proto(proto)


def build_tensor_info(tensor: Tensor | SparseTensor) -> TensorInfo:
    """The `TensorInfo` of `tensor` (``tf.compat.v1.saved_model.build_tensor_info``)."""
    if isinstance(tensor, SparseTensor):
        return TensorInfo(dtype=dtype_enum(tensor.dtype),
                          tensor_shape=shape_proto(tensor.get_shape()),
                          coo_sparse=CooSparse(values_tensor_name=tensor.values.name,
                                               indices_tensor_name=tensor.indices.name,
                                               dense_shape_tensor_name=tensor.dense_shape.name))
    if not isinstance(tensor, Tensor):
        raise TypeError(f"build_tensor_info expects a Tensor or SparseTensor, got "
                        f"{type(tensor).__name__}: {tensor!r}")
    return TensorInfo(name=tensor.name, dtype=dtype_enum(tensor.dtype),
                      tensor_shape=shape_proto(tensor.get_shape()))


def get_tensor_from_tensor_info(tensor_info: TensorInfo, graph: Graph | None = None,
                                import_scope: str | None = None) -> Any:
    """The `Tensor` or `SparseTensor` that `tensor_info` describes, in `graph` (default: the
    default graph)."""
    graph = graph or get_default_graph()
    prefix = f"{import_scope}/" if import_scope else ""

    def tensor(name: str) -> Tensor:
        return graph.get_tensor_by_name(prefix + name)

    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return tensor(tensor_info.name)
    if encoding == "coo_sparse":
        coo = tensor_info.coo_sparse
        return SparseTensor(tensor(coo.indices_tensor_name), tensor(coo.values_tensor_name),
                            tensor(coo.dense_shape_tensor_name))
    raise ValueError(f"Invalid TensorInfo.encoding: {encoding}")
