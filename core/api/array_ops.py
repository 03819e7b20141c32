"""Array ops: shapes, indexing, joining and creation, with ``tf.compat.v1``'s names, signatures
and defaults.

Contract: each function builds ops in the graph of its tensor arguments (else the default
graph) and returns a `Tensor` (a list for ``unstack``/``split``/``meshgrid``). Python values are
converted as TF converts them (ints -> int32, floats -> float32; a list mixing tensors and
Python values is packed with the tensors' dtype). Shapes known at construction come out static;
misuse that TF rejects while building the graph raises ``ValueError``/``TypeError`` here.
`slice_helper` is TF's ``_slice_helper``: the ``Tensor.__getitem__`` protocol over
``StridedSlice``.
"""

from __future__ import annotations

import collections
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api import control_flow_ops, dispatch, math_ops
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import (
    constant,
    convert_to_tensor,
    is_tensor_like,
    register_autopacking,
    to_numpy,
)
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.graph.op_builder import apply, make_op
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "boolean_mask", "broadcast_to", "concat", "expand_dims", "fill", "gather", "gather_nd",
    "invert_permutation", "lin_space", "linspace", "meshgrid", "newaxis", "one_hot", "ones",
    "ones_like", "pad", "range", "rank", "reshape", "reverse", "reverse_v2", "scatter_nd",
    "sequence_mask", "shape", "size", "slice", "split", "squeeze", "stack", "strided_slice",
    "tensor_scatter_add", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update", "tensor_scatter_sub", "tensor_scatter_update", "tile",
    "transpose", "unique", "unsorted_segment_max", "unsorted_segment_sum", "unstack", "where",
    "where_v2", "zeros", "zeros_like",
]

newaxis = None

_builtin_range = range
_builtin_slice = slice

UniqueOutput = collections.namedtuple("Unique", ["y", "idx"])

# TF builds small constant-valued tensors as Const ops and larger ones with Fill.
_MAX_CONSTANT_ELEMENTS = 1000


# -- packing ---------------------------------------------------------------------------------

def _has_tensor(value: Any) -> bool:
    if is_tensor_like(value):
        return True
    return isinstance(value, (list, tuple)) and any(_has_tensor(v) for v in value)


def _first_dtype(value: Any) -> dtypes.DType | None:
    if is_tensor_like(value):
        return convert_to_tensor(value).dtype
    if isinstance(value, (list, tuple)):
        for v in value:
            found = _first_dtype(v)
            if found is not None:
                return found
    return None


def _autopack(value: Any, dtype: dtypes.DType | None) -> Tensor:
    """`value` as one tensor; nested lists holding tensors become ``Pack`` ops (TF's
    autopacking), their Python elements converted to `dtype`."""
    if is_tensor_like(value):
        return convert_to_tensor(value, dtype=dtype)
    if isinstance(value, (list, tuple)) and _has_tensor(value):
        return apply("Pack", [[_autopack(v, dtype) for v in value]], {"axis": 0}, name="packed")
    return constant(value, dtype)


@dispatch.dispatchable
def stack(values: list[Any], axis: int = 0, name: str = "stack") -> Tensor:
    """Stack rank-R values into one rank-(R+1) tensor along `axis` (TF's ``Pack``)."""
    if axis == 0 and not _has_tensor(values):
        try:
            return constant(values, name=name)
        except (TypeError, ValueError):
            pass  # ragged values: Pack reports what does not fit, as in TF
    dtype = _first_dtype(values)
    tensors = [_autopack(v, dtype) for v in values]
    rank = tensors[0].shape.ndims if tensors else None
    if rank is not None and not -(rank + 1) <= axis < rank + 1:
        raise ValueError(f"Argument `axis` = {axis} not in range [{-(rank + 1)}, {rank + 1})")
    return apply("Pack", [tensors], {"axis": axis}, name=name)


def unstack(value: Any, num: int | None = None, axis: int = 0,
            name: str = "unstack") -> list[Tensor]:
    """Split `value` along `axis` into `num` tensors of one rank less."""
    value = convert_to_tensor(value)
    if num is None:
        shape = value.shape
        if shape.ndims is None:
            raise ValueError(f"Cannot infer argument `num` from shape {shape}")
        if not -shape.ndims <= axis < shape.ndims:
            raise ValueError(f"Argument `axis` = {axis} not in range [{-shape.ndims}, "
                             f"{shape.ndims})")
        num = shape[axis]
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {shape}")
    return make_op("Unpack", [value], {"num": num, "axis": axis}, name=name).outputs


# -- shapes ----------------------------------------------------------------------------------

def _static_dims(shape: Any) -> list[int] | None:
    """`shape` as Python ints when it holds no tensor; ``None`` when it does."""
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a "
                             "Tensor.")
        return shape.as_list()
    if _has_tensor(shape):
        return None
    dims = np.asarray(shape)
    if dims.dtype.kind not in "iu" and dims.size:
        raise TypeError(f"Expected int32 or int64 shape, got {shape!r}")
    return [int(d) for d in dims.ravel()]


def _shape_tensor(shape: Any) -> Tensor:
    """A shape argument as a 1-D tensor (a scalar tensor becomes a 1-vector)."""
    if is_tensor_like(shape):
        tensor = convert_to_tensor(shape)
    else:
        dims = _static_dims(shape)
        if dims is not None:
            return constant(dims, dtypes.int32, name="shape")
        tensor = _autopack(shape, _first_dtype(shape))
    return reshape(tensor, [-1]) if tensor.shape.ndims == 0 else tensor


def _partial_shape(value: Any) -> TensorShape:
    """What a shape argument says statically (TF's ``constant_value_as_shape``): a list mixing
    Python ints and scalar tensors gives the ints and the tensors' construction-time values."""
    if is_tensor_like(value):
        return _tensor_as_shape(convert_to_tensor(value))
    if not isinstance(value, (list, tuple)):
        return TensorShape(None)
    dims: list[int | None] = []
    for d in value:
        known = constant_value(convert_to_tensor(d)) if is_tensor_like(d) else d
        dims.append(None if known is None or np.ndim(known) or int(known) < 0 else int(known))
    return TensorShape(dims)


def _tensor_as_shape(tensor: Tensor) -> TensorShape:
    """A 1-D shape tensor's static dims: known values, the static shape behind a ``Shape`` op,
    and packs / concats of those (so ``reshape(y, tf.shape(x))`` keeps what `x` knows)."""
    known = constant_value(tensor)
    if known is not None:
        return TensorShape(None) if np.ndim(known) != 1 else TensorShape(
            [None if int(d) < 0 else int(d) for d in known])
    op = tensor.op
    if op.type == "Shape":
        return op.inputs[0].shape
    if op.type == "Pack" and tensor.shape.ndims == 1:
        return _partial_shape(list(op.inputs))
    if op.type == "ConcatV2":
        out = TensorShape([])
        for part in op.inputs[:-1]:
            out = out.concatenate(_tensor_as_shape(part))
        return out
    length = tensor.shape.dims[0] if tensor.shape.ndims == 1 else None
    return TensorShape(None) if length is None else TensorShape([None] * length)


def _index_input(value: Any) -> Any:
    """An index-list argument (a shape, axes, multiples) as TF converts it: a `TensorShape` or
    an empty list as int32, a list holding tensors packed; anything else as it is."""
    if is_tensor_like(value):
        return value
    if isinstance(value, TensorShape):
        value = _static_dims(value)
    if _has_tensor(value):
        return _autopack(value, _first_dtype(value))
    if isinstance(value, (list, tuple)) and np.size(value) == 0:
        return constant(value, dtypes.int32)
    return value


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    out = apply("Reshape", [tensor, _index_input(shape)], name=name or "Reshape")
    out.set_shape(_partial_shape(shape))
    return out


def transpose(a: Any, perm: Any = None, name: str = "transpose",
              conjugate: bool = False) -> Tensor:
    """Permute `a`'s dimensions; without `perm`, reverse them. `conjugate` also conjugates a
    complex `a` (`ConjugateTranspose`)."""
    with name_scope(name, "transpose", [a]) as scope:
        a = convert_to_tensor(a, name="a")
        if perm is None:
            rank_ = a.shape.ndims
            if rank_ is not None:
                perm = list(_builtin_range(rank_ - 1, -1, -1))
            else:
                perm = reverse(range(0, apply("Rank", [a]), 1), [0], name="perm")
        op = "ConjugateTranspose" if conjugate and a.dtype.is_complex else "Transpose"
        return apply(op, [a, _index_input(perm)], name=scope)


@dispatch.dispatchable
def expand_dims(input: Any, axis: Any = None, name: str | None = None,  # noqa: A002 - TF's name
                dim: Any = None) -> Tensor:
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply("ExpandDims", [input, axis], name=name or "ExpandDims")


def squeeze(input: Any, axis: Any = None, name: str | None = None,  # noqa: A002
            squeeze_dims: Any = None) -> Tensor:
    axis = deprecated_argument_lookup("axis", axis, "squeeze_dims", squeeze_dims)
    if isinstance(axis, numbers.Integral):
        axis = [axis]
    return apply("Squeeze", [input], {"squeeze_dims": [int(a) for a in axis or ()]},
                 name=name or "Squeeze")


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002
    out = apply("BroadcastTo", [input, _shape_tensor(shape)], name=name or "BroadcastTo")
    out.set_shape(_partial_shape(shape))
    return out


@dispatch.dispatchable
def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """`input` repeated `multiples[i]` times along each axis i. As TF's shape function, a
    partly known `multiples` (a pack of ints and tensors) still gives the dims it can."""
    out = apply("Tile", [input, _index_input(multiples)], name=name or "Tile")
    x, times = out.op.inputs
    if not out.shape.is_fully_defined() and x.shape.ndims is not None:
        counts = _tensor_as_shape(times)
        if counts.ndims == x.shape.ndims:
            out.set_shape([None if d is None or m is None else d * m
                           for d, m in zip(x.shape.dims, counts.dims)])
    return out


def _partial_paddings(paddings: Tensor) -> list[list[int | None]] | None:
    """The rows of a paddings matrix as far as they are known when the graph is built (TF's
    ``constant_value(paddings, partial=True)``): a constant, or a pack of rows that are
    constants or packs of ints and tensors."""
    known = constant_value(paddings)
    if known is not None:
        return None if np.ndim(known) != 2 else [[int(v) for v in row] for row in known]
    op = paddings.op
    if op.type != "Pack" or op.get_attr("axis") != 0:
        return None
    rows = [_tensor_as_shape(row) for row in op.inputs]
    if any(row.ndims != 2 for row in rows):
        return None
    return [list(row.dims) for row in rows]


def _restore_pad_shape(out: Tensor) -> Tensor:
    """`out` with the static dims that partly known paddings give, as TF's ``tf.pad`` sets."""
    x, paddings = out.op.inputs[0], out.op.inputs[1]
    if out.shape.is_fully_defined() or x.shape.ndims is None:
        return out
    rows = _partial_paddings(paddings)
    if rows is not None and len(rows) == x.shape.ndims:
        out.set_shape([None if d is None or None in row else d + sum(row)
                       for d, row in zip(x.shape.dims, rows)])
    return out


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", name: str | None = None,
        constant_values: Any = 0) -> Tensor:
    """Pad `tensor`; `mode` is CONSTANT, REFLECT or SYMMETRIC (any case)."""
    mode = mode.upper()
    if mode == "CONSTANT":
        if not is_tensor_like(constant_values) and np.ndim(constant_values) == 0 \
                and constant_values == 0:
            return _restore_pad_shape(apply("Pad", [tensor, paddings], name=name or "Pad"))
        tensor = convert_to_tensor(tensor)
        return _restore_pad_shape(apply("PadV2", [tensor, paddings, constant_values],
                                        name=name or "PadV2"))
    if mode in ("REFLECT", "SYMMETRIC"):
        return _restore_pad_shape(apply("MirrorPad", [tensor, paddings], {"mode": mode},
                                        name=name or "MirrorPad"))
    raise ValueError(f"Unknown padding mode: {mode}")


def _shape_query(op_type: str, input: Any, name: str | None,  # noqa: A002
                 dtype: dtypes.DType, static: Callable[[TensorShape], Any],
                 attrs: dict[str, Any] | None = None) -> Tensor:
    """`op_type` of `input`, or, as TF folds it, a constant when `static` can answer from the
    static shape (it returns ``None`` when it cannot)."""
    input = convert_to_tensor(input)  # noqa: A001
    value = static(input.shape)
    if value is not None:
        return constant(value, dtype, name=name or op_type)
    return apply(op_type, [input], attrs, name=name or op_type)


def shape(input: Any, name: str | None = None,  # noqa: A002
          out_type: Any = dtypes.int32) -> Tensor:
    """The shape of `input`; a constant when it is fully known, as in TF."""
    out_type = dtypes.as_dtype(out_type)
    return _shape_query("Shape", input, name, out_type,
                        lambda s: s.as_list() if s.is_fully_defined() else None,
                        {"out_type": out_type})


@dispatch.dispatchable
def size(input: Any, name: str | None = None,  # noqa: A002
         out_type: Any = dtypes.int32) -> Tensor:
    """The number of elements of `input`; a constant when its shape is fully known."""
    out_type = dtypes.as_dtype(out_type)
    return _shape_query("Size", input, name, out_type, TensorShape.num_elements,
                        {"out_type": out_type})


@dispatch.dispatchable
def rank(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The number of dimensions of `input`; a constant when it is known."""
    return _shape_query("Rank", input, name, dtypes.int32, lambda s: s.ndims)


# -- joining and splitting -------------------------------------------------------------------

@dispatch.dispatchable
def concat(values: Any, axis: Any, name: str = "concat") -> Tensor:
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:  # TF: no op to concatenate; check the axis and pass the value through
        tensor = convert_to_tensor(values[0])
        rank_ = tensor.shape.ndims
        if not isinstance(axis, numbers.Integral):
            # As TF: the axis must be an int32 scalar, which rejects TF 0.x's argument order
            # `concat(axis, values)`.
            axis_shape = convert_to_tensor(axis, dtypes.int32, name="concat_dim").shape
            if axis_shape.ndims not in (0, None):
                raise ValueError(f"Shape {axis_shape} must have rank 0")
        elif rank_ is not None and not -rank_ <= axis < rank_:
            raise ValueError(f"Expected axis in the range [{-rank_}, {rank_}), but got {axis}")
        return control_flow_ops.identity(tensor, name=name)
    dtype = _first_dtype(values)
    return apply("ConcatV2", [[_autopack(v, dtype) for v in values], axis], name=name)


def split(value: Any, num_or_size_splits: Any, axis: Any = 0, num: int | None = None,
          name: str = "split") -> list[Tensor]:
    """Split into `num_or_size_splits` equal parts (an int) or parts of the given sizes."""
    if isinstance(num_or_size_splits, numbers.Integral) \
            and not isinstance(num_or_size_splits, bool):
        return make_op("Split", [axis, value], {"num_split": int(num_or_size_splits)},
                       name=name).outputs
    sizes = convert_to_tensor(num_or_size_splits)
    if num is None:
        if sizes.shape.ndims != 1 or sizes.shape[0] is None:
            raise ValueError(f"Cannot infer argument `num` from shape {sizes.shape}")
        num = sizes.shape[0]
    return make_op("SplitV", [value, sizes, axis], {"num_split": num}, name=name).outputs


# -- slicing ---------------------------------------------------------------------------------

def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:  # noqa: A001
    return apply("Slice", [input_, _index_input(begin), _index_input(size)],
                 name=name or "Slice")


def strided_slice(input_: Any, begin: Any, end: Any, strides: Any = None, begin_mask: int = 0,
                  end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                  shrink_axis_mask: int = 0, var: Any = None,
                  name: str | None = None) -> Tensor:
    """TF's ``StridedSlice``; `var` is accepted for TF's signature and ignored (no sliced
    assignment here)."""
    if strides is None:
        strides = ones_like(begin) if is_tensor_like(begin) else [1] * len(begin)
    attrs = {"begin_mask": begin_mask, "end_mask": end_mask, "ellipsis_mask": ellipsis_mask,
             "new_axis_mask": new_axis_mask, "shrink_axis_mask": shrink_axis_mask}
    inputs = [input_] + [_index_input(v) for v in (begin, end, strides)]
    return apply("StridedSlice", inputs, attrs,
                 name=name or "StridedSlice")


_SLICE_TYPE_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                     "scalar tf.int32/tf.int64 tensors are valid indices")


def _check_index(idx: Any) -> None:
    if isinstance(idx, numbers.Integral):
        return
    dtype = getattr(idx, "dtype", None)
    if not is_tensor_like(idx) or dtype not in dtypes.INDEX or idx.shape.ndims not in (0, None):
        raise TypeError(f"{_SLICE_TYPE_ERROR}, got {idx!r}")


def slice_helper(tensor: Any, slice_spec: Any, var: Any = None) -> Tensor:
    """``tensor[slice_spec]`` with numpy's basic indexing rules (TF's ``_slice_helper``)."""
    if isinstance(slice_spec, bool) or (is_tensor_like(slice_spec)
                                        and slice_spec.dtype == dtypes.bool_) \
            or (isinstance(slice_spec, np.ndarray) and slice_spec.dtype == bool):
        return boolean_mask(tensor, slice_spec)
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin: list[Any] = []
    end: list[Any] = []
    strides: list[Any] = []
    masks = dict.fromkeys(("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                           "shrink_axis_mask"), 0)
    for index, s in enumerate(slice_spec):
        bit = 1 << index
        if isinstance(s, _builtin_slice):
            for value, out, mask in ((s.start, begin, "begin_mask"), (s.stop, end, "end_mask")):
                if value is None:
                    out.append(0)
                    masks[mask] |= bit
                else:
                    _check_index(value)
                    out.append(value)
            if s.step is not None:
                _check_index(s.step)
            strides.append(1 if s.step is None else s.step)
        elif s is Ellipsis or s is newaxis:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["ellipsis_mask" if s is Ellipsis else "new_axis_mask"] |= bit
        else:
            _check_index(s)
            begin.append(s)
            end.append(s + 1)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    tensor = convert_to_tensor(tensor)
    with name_scope(None, "strided_slice", [tensor]) as scope:
        index_dtype = _index_dtype(begin + end + strides) if begin else dtypes.int32
        packed = [_pack_indices(v, index_dtype) for v in (begin, end, strides)]
        return strided_slice(tensor, *packed, var=var, name=scope, **masks)


def _index_dtype(values: list[Any]) -> dtypes.DType:
    for v in values:
        if is_tensor_like(v) and v.dtype == dtypes.int64:
            return dtypes.int64
        if isinstance(v, numbers.Integral) and not -2**31 <= int(v) < 2**31:
            return dtypes.int64
    return dtypes.int32


def _pack_indices(values: list[Any], dtype: dtypes.DType) -> Tensor:
    # named as TF's stack() names them: strided_slice/stack, stack_1, stack_2
    if not _has_tensor(values):
        return constant([int(v) for v in values], dtype, name="stack")
    return stack([math_ops.cast(v, dtype) if is_tensor_like(v) and v.dtype != dtype else v
                  for v in values], name="stack")


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    return apply("ReverseV2", [tensor, _index_input(axis)], name=name or "ReverseV2")


reverse_v2 = reverse


# -- gathering and scattering ----------------------------------------------------------------

@dispatch.dispatchable
def gather(params: Any, indices: Any, validate_indices: Any = None, name: str | None = None,
           axis: Any = None, batch_dims: int = 0) -> Tensor:
    """Gather slices of `params` along `axis` (default `batch_dims`); `validate_indices` is
    ignored, as in TF: indices are always checked. Rows of a resource variable are its
    ``sparse_read`` (``ResourceGather``), as in TF."""
    if axis is None:
        axis = batch_dims
    if hasattr(params, "sparse_read") and batch_dims == 0 and isinstance(axis, int) \
            and axis == 0:
        return params.sparse_read(indices, name=name)
    return apply("GatherV2", [params, indices, axis], {"batch_dims": batch_dims},
                 name=name or "GatherV2")


@dispatch.dispatchable
def gather_nd(params: Any, indices: Any, name: str | None = None) -> Tensor:
    return apply("GatherNd", [params, indices], name=name or "GatherNd")


def tensor_scatter_update(tensor: Any, indices: Any, updates: Any,
                          name: str | None = None) -> Tensor:
    """A copy of `tensor` with the slices at `indices` (``[..., k]``) replaced by `updates`."""
    return apply("TensorScatterUpdate", [tensor, indices, updates], name=name)


def tensor_scatter_add(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of `tensor` with `updates` added at `indices` (repeated indices accumulate)."""
    return apply("TensorScatterAdd", [tensor, indices, updates], name=name)


def tensor_scatter_sub(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of `tensor` with `updates` subtracted at `indices`."""
    return apply("TensorScatterSub", [tensor, indices, updates], name=name)


tensor_scatter_nd_update = tensor_scatter_update
tensor_scatter_nd_add = tensor_scatter_add
tensor_scatter_nd_sub = tensor_scatter_sub


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    indices = convert_to_tensor(indices)
    return apply("ScatterNd", [indices, updates, shape], name=name or "ScatterNd")


@dispatch.dispatchable
def one_hot(indices: Any, depth: Any, on_value: Any = None, off_value: Any = None,
            axis: int | None = None, dtype: Any = None, name: str | None = None) -> Tensor:
    """One-hot vectors; the dtype comes from `on_value`/`off_value`, else `dtype`, else
    float32, and they must agree (TypeError otherwise)."""
    with name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        dtype = None if dtype is None else dtypes.as_dtype(dtype)
        on = None if on_value is None else convert_to_tensor(on_value, name="on_value")
        off = None if off_value is None else convert_to_tensor(off_value, name="off_value")
        given = [t for t in (on, off) if t is not None]
        if given:
            if dtype is not None:
                for what, t in (("on_value", on), ("off_value", off)):
                    if t is not None and t.dtype != dtype:
                        raise TypeError(f"dtype {t.dtype!r} of {what} does not match dtype "
                                        f"parameter {dtype!r}")
            else:
                dtype = given[0].dtype
        elif dtype is None:
            dtype = dtypes.float32
        if on is None:
            on = constant(True if dtype.is_bool else 1, dtype, name="on_value")
        if off is None:
            off = constant(False if dtype.is_bool else 0, dtype, name="off_value")
        if on.dtype != off.dtype:
            raise TypeError(f"dtype {on.dtype!r} of on_value does not match dtype "
                            f"{off.dtype!r} of off_value")
        attrs = {"axis": -1 if axis is None else axis}
        return apply("OneHot", [indices, depth, on, off], attrs, name=scope)


@dispatch.dispatchable
def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Tensor:
    return apply("UnsortedSegmentSum", [data, segment_ids, num_segments],
                 name=name or "UnsortedSegmentSum")


@dispatch.dispatchable
def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Tensor:
    return apply("UnsortedSegmentMax", [data, segment_ids, num_segments],
                 name=name or "UnsortedSegmentMax")


def invert_permutation(x: Any, name: str | None = None) -> Tensor:
    return apply("InvertPermutation", [x], name=name or "InvertPermutation")


def unique(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> UniqueOutput:
    op = make_op("Unique", [x], {"out_idx": dtypes.as_dtype(out_idx)}, name=name or "Unique")
    return UniqueOutput(*op.outputs)


@dispatch.dispatchable
def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask",
                 axis: int | None = None) -> Tensor:
    """The elements (or slices from `axis` on) of `tensor` where `mask` is True."""
    with name_scope(name, values=[tensor, mask]):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        mask_shape = mask.shape
        if mask_shape.ndims == 0:
            raise ValueError("mask cannot be scalar.")
        if mask_shape.ndims is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None.  E.g. shape=[None] is ok, but shape=None is "
                             "not.")
        axis = 0 if axis is None else axis
        n = mask_shape.ndims
        tensor_shape = tensor.shape
        tensor_shape[axis:axis + n].assert_is_compatible_with(mask_shape)
        # The masked dims fold into one of size(mask) elements, which they match.
        if tensor_shape.is_fully_defined():
            dims = tensor_shape.as_list()
            new_shape: Any = dims[:axis] + [int(np.prod(dims[axis:axis + n]))] + dims[axis + n:]
        else:
            dynamic = shape(tensor)
            new_shape = concat([slice_helper(dynamic, _builtin_slice(None, axis)),
                                reshape(size(mask), [1]),
                                slice_helper(dynamic, _builtin_slice(axis + n, None))], 0)
        tensor = reshape(tensor, new_shape)
        first = tensor_shape[axis:axis + n].num_elements()
        tensor.set_shape(tensor_shape[:axis].concatenate([first])
                         .concatenate(tensor_shape[axis + n:]))
        indices = squeeze(where(reshape(mask, [-1])), axis=[1])
        return gather(tensor, indices, axis=axis)


# -- selection -------------------------------------------------------------------------------

@dispatch.dispatchable
def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """TF1 ``where``: coordinates of true elements (one argument), or elements of `x`/`y`
    chosen by `condition`, which may be a vector over `x`'s first dimension."""
    if x is None and y is None:
        condition = convert_to_tensor(condition, preferred_dtype=dtypes.bool_)
        return apply("Where", [condition], name=name or "Where")
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    x, y = math_ops.binary_inputs(x, y)
    return apply("Select", [condition, x, y], name=name or "Select")


def where_v2(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """TF2 ``where``: like `where`, with `condition`, `x` and `y` broadcast together."""
    if x is None and y is None:
        return where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    x, y = math_ops.binary_inputs(x, y)
    return apply("SelectV2", [condition, x, y], name=name or "SelectV2")


# -- creation --------------------------------------------------------------------------------

def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    out = apply("Fill", [_index_input(dims), value], name=name or "Fill")
    out.set_shape(_partial_shape(dims))
    return out


def _filled(shape: Any, value: Any, dtype: Any, name: str | None, default: str) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    value = bool(value) if dtype.is_bool else value
    with name_scope(name, default, [shape]) as scope:
        dims = _static_dims(shape)
        if dims is not None and int(np.prod(dims)) < _MAX_CONSTANT_ELEMENTS:
            return constant(value, dtype, shape=dims, name=scope)
        out = fill(_shape_tensor(shape), constant(value, dtype), name=scope)
        out.set_shape(_partial_shape(shape))
        return out


def zeros(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    # TF's zero of a string tensor is the empty string.
    zero = "" if dtypes.as_dtype(dtype) == dtypes.string else 0
    return _filled(shape, zero, dtype, name, "zeros")


def ones(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    return _filled(shape, 1, dtype, name, "ones")


def _filled_like(tensor: Any, dtype: Any, name: str | None, optimize: bool, default: str,
                 filled: Callable[..., Tensor], like_op: str) -> Tensor:
    """`tensor`'s shape filled by `filled` (`zeros` or `ones`): a constant when the shape is
    known (and `optimize`), a `like_op` when the dtype is kept, else a fill of its dynamic
    shape."""
    with name_scope(name, default, [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = tensor.dtype if dtype is None else dtypes.as_dtype(dtype)
        if optimize and tensor.shape.is_fully_defined():
            return filled(tensor.shape.as_list(), dtype, name=scope)
        if dtype != tensor.dtype:
            out = filled(apply("Shape", [tensor]), dtype, name=scope)
            out.set_shape(tensor.shape)
            return out
        return apply(like_op, [tensor], name=scope)


@dispatch.dispatchable
def zeros_like(tensor: Any, dtype: Any = None, name: str | None = None,
               optimize: bool = True) -> Tensor:
    return _filled_like(tensor, dtype, name, optimize, "zeros_like", zeros, "ZerosLike")


@dispatch.dispatchable
def ones_like(tensor: Any, dtype: Any = None, name: str | None = None,
              optimize: bool = True) -> Tensor:
    """TF's ``ones_like_impl``: a ``Fill`` of `tensor`'s shape (a ``Shape/shape_as_tensor``
    constant when it is fully known and `optimize`, else a ``Shape`` op) with a one, never a
    ``OnesLike`` op."""
    with name_scope(name, "ones_like", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = tensor.dtype if dtype is None else dtypes.as_dtype(dtype)
        with name_scope(None, "Shape", [tensor]) as shape_scope:
            if optimize and tensor.shape.is_fully_defined():
                shape = constant(tensor.shape.as_list(), dtypes.int32, name="shape_as_tensor")
            else:
                shape = apply("Shape", [tensor], name=shape_scope)
        out = apply("Fill", [shape, constant(True if dtype.is_bool else 1, dtype)], name=scope)
        out.set_shape(tensor.shape)
        return out


_RANGE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,  # noqa: A001
          name: str = "range") -> Tensor:
    """TF's ``range``: ``range(n)`` counts from 0; the dtype is `dtype`, else the widest of
    the arguments' (ints -> int32, any float -> float32)."""
    if limit is None:
        start, limit = 0, start
    with name_scope(name, "Range", [start, limit, delta]) as scope:
        values = {"start": start, "limit": limit, "delta": delta}
        if dtype is None:
            found = [_range_dtype(v) for v in values.values()]
            dtype = max(found, key=_RANGE_DTYPES.index)
        dtype = dtypes.as_dtype(dtype)
        args = [_range_arg(v, dtype, n) for n, v in values.items()]
        return apply("Range", args, name=scope)


def _range_dtype(value: Any) -> dtypes.DType:
    dtype = convert_to_tensor(value).dtype if is_tensor_like(value) \
        else dtypes.as_dtype(to_numpy(value).dtype)
    if dtype not in _RANGE_DTYPES:
        raise TypeError(f"range does not support dtype {dtype.name}")
    return dtype


def _range_arg(value: Any, dtype: dtypes.DType, name: str) -> Tensor:
    if not is_tensor_like(value):
        return constant(value, dtype, name=name)
    tensor = convert_to_tensor(value)
    return tensor if tensor.dtype == dtype else math_ops.cast(tensor, dtype)


def linspace(start: Any, stop: Any, num: Any, name: str | None = None) -> Tensor:
    start, stop = math_ops.binary_inputs(start, stop)
    return apply("LinSpace", [start, stop, num], name=name or "LinSpace")


lin_space = linspace


def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = dtypes.bool_,
                  name: str | None = None) -> Tensor:
    """``mask[i..., j] = j < lengths[i...]``; `maxlen` defaults to ``max(lengths)``."""
    with name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            maxlen = math_ops.maximum(constant(0, lengths.dtype), math_ops.reduce_max(lengths))
        else:
            maxlen = convert_to_tensor(maxlen)
        if maxlen.shape.ndims not in (None, 0):
            raise ValueError("maxlen must be scalar for sequence_mask")
        row = apply("Range", [constant(0, maxlen.dtype), maxlen, constant(1, maxlen.dtype)])
        matrix = math_ops.cast(expand_dims(lengths, -1), maxlen.dtype)
        result = math_ops.less(row, matrix)
        dtype = dtypes.as_dtype(dtype)
        return result if dtype == dtypes.bool_ else math_ops.cast(result, dtype)


def meshgrid(*args: Any, **kwargs: Any) -> list[Tensor]:
    """N-D coordinate grids from 1-D `args`; ``indexing='xy'`` (default) or ``'ij'``."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"Invalid keyword arguments: {', '.join(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    with name_scope(name, "meshgrid", list(args)):
        n = len(args)
        flat = [reshape(a, [-1]) for a in args]
        sizes = [size(t) for t in flat]
        order = list(_builtin_range(n))
        if indexing == "xy" and n > 1:
            order[0], order[1] = 1, 0
        outputs = []
        for i, t in enumerate(flat):
            dims = [1] * n
            dims[order.index(i)] = -1
            outputs.append(reshape(t, dims))
        target = stack([sizes[i] for i in order])
        return [broadcast_to(t, target) for t in outputs]


register_autopacking(stack)  # TF's autopacking of lists holding tensors
