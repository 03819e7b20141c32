"""``gather_nd``, ``batch_gather`` and ``one_hot`` of `RaggedTensor`s, as TF 1.15's ragged ops.

Contract: once imported (``import tensorweave`` does), ``tw.gather_nd`` and ``tw.one_hot``
dispatch here when an argument is ragged; ``batch_gather`` is ``tw.ragged.batch_gather``.

- ``gather_nd(params, indices)``: `indices` needs a static rank (>= 1) and a static, uniform
  last dimension ``k``; ragged `indices` keep their row partitions, dense ones of rank > 2 are
  cut into rows and the result is dense again when it is uniform. ``k == 0`` repeats the whole
  `params`, ``k == 1`` gathers rows, and deeper tuples walk `params`' row partitions; as in TF,
  an index past the end of its row is not checked against that row.
- ``batch_gather(params, indices)``: ``result[b, i] = params[b, indices[b, i]]`` with the
  leading batch dimensions of `params` and `indices` matching (ragged ones checked at run time).
- ``one_hot(indices, ...)`` of ragged `indices` is the one-hot of their flat values; `axis`
  (None or -1 for last) may not fall on a ragged dimension (`ValueError`).

Bad ranks raise `ValueError` at construction, non-integer indices `TypeError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, check_ops, control_flow_ops, dispatch, math_ops
from tensorweave.api.ragged_array_ops import expand_dims, tile
from tensorweave.api.ragged_ops import _graph_tensors, gather
from tensorweave.api.ragged_tensor import RaggedTensor
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor

__all__: list[str] = []


def _convert(value: Any, name: str) -> Any:
    return value if isinstance(value, RaggedTensor) else convert_to_tensor(value, name=name)


def gather_nd(params: Any, indices: Any, name: str | None = None, batch_dims: int = 0) -> Any:
    """The slices of `params` at the index tuples in the last dimension of `indices`."""
    if not isinstance(params, RaggedTensor) and not isinstance(indices, RaggedTensor):
        return array_ops.gather_nd(params, indices, name)
    if batch_dims != 0:
        raise ValueError("batch_dims != 0 is not supported for ragged gather_nd.")
    with name_scope(name, "RaggedGatherNd", _graph_tensors([params, indices])):
        params = _convert(params, "params")
        indices = _convert(indices, "indices")
        if not indices.dtype.is_integer:
            raise TypeError(f"indices must be integers, got {indices.dtype!r}")
        return _gather_nd(params, indices)


def _gather_nd(params: Any, indices: Any) -> Any:
    ndims = indices.shape.ndims
    if ndims is None:
        raise ValueError("indices.rank be statically known.")
    if ndims == 0:
        raise ValueError("indices.rank must be at least 1.")
    if isinstance(indices, RaggedTensor) and ndims == indices.ragged_rank + 1:
        raise ValueError("The innermost dimension of indices may not be ragged")
    index_size = indices.shape[-1]
    if index_size is None:
        raise ValueError("indices.shape[-1] must be statically known.")
    if ndims > 2:
        dense = not isinstance(indices, RaggedTensor)
        if dense:
            indices = RaggedTensor.from_tensor(indices, ragged_rank=ndims - 2)
        result = indices.with_flat_values(_gather_nd(params, indices.flat_values))
        if dense and isinstance(result, RaggedTensor) and result.ragged_rank == ndims - 2:
            result = result.to_tensor()
        return result
    if not isinstance(params, RaggedTensor):
        return array_ops.gather_nd(params, indices)
    if index_size == 0:
        rank = params.shape.ndims
        for _ in range(ndims - 1):
            params = expand_dims(params, 0)
        multiples = array_ops.concat([array_ops.shape(indices)[:-1],
                                      array_ops.ones([rank], dtypes.int32)], 0)
        return tile(params, multiples)
    if index_size == 1:
        # a single tuple picks one row, as the dense op does
        return gather(params, indices[0] if ndims == 1 else array_ops.reshape(indices, [-1]))
    # fold the index tuple into one index of ever deeper values, one ragged level at a time
    indices = math_ops.cast(indices, params.row_splits_dtype)
    flat_index = array_ops.gather(params.row_splits, indices[..., 0]) + indices[..., 1]
    flat_params = params.values
    for dim in range(2, index_size):
        if not isinstance(flat_params, RaggedTensor):
            tuples = array_ops.concat([array_ops.expand_dims(flat_index, -1),
                                       indices[..., dim:]], -1)
            return array_ops.gather_nd(flat_params, tuples)
        flat_index = array_ops.gather(flat_params.row_splits[:-1], flat_index) + indices[..., dim]
        flat_params = flat_params.values
    return gather(flat_params, flat_index)


def batch_gather(params: Any, indices: Any, name: str | None = None) -> Any:
    """``result[b..., i] = params[b..., indices[b..., i]]`` over the batch dimensions."""
    with name_scope(name, "RaggedBatchGather", _graph_tensors([params, indices])):
        params = _convert(params, "params")
        indices = _convert(indices, "indices")
        if not indices.dtype.is_integer:
            raise TypeError(f"indices must be integers, got {indices.dtype!r}")
        return _batch_gather(params, indices)


def _batch_gather(params: Any, indices: Any) -> Any:
    ndims = indices.shape.ndims
    if ndims is None:
        raise ValueError("batch_gather does not allow indices with unknown shape.")
    if ndims == 0:
        raise ValueError("indices.rank must be at least 1.")
    if isinstance(indices, RaggedTensor):
        if ndims > 2:
            if not isinstance(params, RaggedTensor):
                raise ValueError("batch shape from indices does not match params shape")
            check = check_ops.assert_equal(params.row_splits, indices.row_splits,
                                           message="batch shape from indices does not match "
                                                   "params shape")
            with control_dependencies([check]):
                splits = control_flow_ops.identity(indices.row_splits)
            return RaggedTensor(_batch_gather(params.values, indices.values), splits,
                                internal=True)
        if not isinstance(params, RaggedTensor):
            if params.shape.ndims is not None and params.shape.ndims < 2:
                raise ValueError("batch shape from indices does not match params shape")
            params = RaggedTensor.from_tensor(params).with_row_splits_dtype(
                indices.row_splits_dtype)
        # each index moves from its row of params to the position in params.values
        starts = array_ops.gather(params.row_splits[:-1],
                                  math_ops.cast(indices.value_rowids(), params.row_splits_dtype))
        flat = math_ops.cast(indices.values, starts.dtype) + starts
        return RaggedTensor(gather(params.values, flat), indices.row_splits, internal=True)
    if not isinstance(params, RaggedTensor):
        return _dense_batch_gather(params, indices)
    if ndims == 1:
        return gather(params, indices)
    if ndims == 2:
        starts = array_ops.expand_dims(params.row_splits[:-1], 1)
        return gather(params.values, math_ops.cast(indices, starts.dtype) + starts)
    raise ValueError("batch shape from indices does not match params shape")


def _dense_batch_gather(params: Any, indices: Any) -> Any:
    """TF's dense ``batch_gather``: ``gather`` with ``batch_dims = rank(indices) - 1``."""
    ndims = indices.shape.ndims
    return array_ops.gather(params, indices, axis=ndims - 1, batch_dims=ndims - 1)


def one_hot(indices: Any, depth: Any, on_value: Any = None, off_value: Any = None,
            axis: int | None = None, dtype: Any = None, name: str | None = None) -> Any:
    """The one-hot encoding of ragged `indices`' values, a new uniform innermost dimension."""
    if not isinstance(indices, RaggedTensor):
        return array_ops.one_hot(indices, depth, on_value, off_value, axis, dtype, name)
    with name_scope(name, "RaggedOneHot", _graph_tensors([indices])):
        rank = indices.shape.ndims
        flat_axis = None
        if axis is not None and axis != -1:
            if rank is not None and not 0 <= axis <= rank:
                raise ValueError(f"axis={axis} out of bounds: expected -1 <= axis <= {rank}")
            if axis <= indices.ragged_rank:
                raise ValueError("axis may not be less than or equal to indices.ragged_rank.")
            flat_axis = axis - indices.ragged_rank
        return indices.with_flat_values(array_ops.one_hot(
            indices.flat_values, depth, on_value, off_value, flat_axis, dtype))


def _when_ragged(fn: Any) -> Any:
    def handler(*args: Any, **kwargs: Any) -> Any:
        values = (*args, *kwargs.values())
        if not any(isinstance(v, RaggedTensor) for v in values):
            return NotImplemented
        return fn(*args, **kwargs)

    return handler


dispatch.register(array_ops.gather_nd, _when_ragged(gather_nd))
dispatch.register(array_ops.one_hot, _when_ragged(one_hot))
