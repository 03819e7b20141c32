"""`TensorInfo` from a graph tensor and back (``tf.saved_model.utils``).

Contract: `build_tensor_info` describes a `Tensor` by name, or a `SparseTensor` by the names of
its three tensors (``coo_sparse``), with its dtype and static shape. `get_tensor_from_tensor_info`
finds the described tensor in a graph (names prefixed with ``import_scope``, as the loader
imports them); a name that is not in the graph raises as ``Graph.get_tensor_by_name`` does.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine.graph.graph import Graph, Tensor, get_default_graph
from tensorweave.formats.saved_model_proto import CooSparse, TensorInfo

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]


def build_tensor_info(tensor: Tensor | SparseTensor) -> TensorInfo:
    """The `TensorInfo` of `tensor` (``tf.compat.v1.saved_model.build_tensor_info``)."""
    if isinstance(tensor, SparseTensor):
        return TensorInfo(dtype=tensor.dtype, tensor_shape=tensor.get_shape(),
                          coo_sparse=CooSparse(values_tensor_name=tensor.values.name,
                                               indices_tensor_name=tensor.indices.name,
                                               dense_shape_tensor_name=tensor.dense_shape.name))
    if not isinstance(tensor, Tensor):
        raise TypeError(f"build_tensor_info expects a Tensor or SparseTensor, got "
                        f"{type(tensor).__name__}: {tensor!r}")
    return TensorInfo(name=tensor.name, dtype=tensor.dtype, tensor_shape=tensor.get_shape())


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
