"""Data-movement ops of the friendly API beyond the core array set, with ``tf.compat.v1``'s
names, signatures and defaults: space/depth/batch rearranging, ``dynamic_partition`` and
``dynamic_stitch``, ``reverse_sequence``, ``roll``, ``sort``/``argsort``, ``searchsorted``,
``unique_with_counts``, ``setdiff1d``, ``unravel_index``, ``shape_n``, ``identity_n``,
``parallel_stack``, broadcast shapes, histograms, ``bitcast``, ``multinomial`` and the
monotonicity checks.

Contract: each function builds ops in the graph of its tensor arguments (else the default graph)
and returns what TF returns (a `Tensor`, a list, a namedtuple, or a `TensorShape` for
``broadcast_static_shape``). As in TF, ``sort``/``argsort`` are ``TopKV2`` over a transform that
reverses the order, so their gradients are TopKV2's and ties keep their input order;
``searchsorted`` folds leading dims into ``LowerBound``/``UpperBound``'s batch.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tensorweave.api import array_ops, math_ops
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.nn_ops import top_k
from tensorweave.api.random_ops import get_seed
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor, is_tensor_like
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.graph.op_builder import apply, make_op
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "argsort", "batch_to_space", "batch_to_space_nd", "bitcast", "broadcast_dynamic_shape",
    "broadcast_static_shape", "depth_to_space", "dynamic_partition", "dynamic_stitch",
    "histogram_fixed_width", "histogram_fixed_width_bins", "identity_n", "is_non_decreasing",
    "is_numeric_tensor", "is_strictly_increasing", "multinomial", "parallel_dynamic_stitch",
    "parallel_stack", "required_space_to_batch_paddings", "reverse_sequence", "roll",
    "searchsorted", "setdiff1d", "shape_n", "sort", "space_to_batch", "space_to_batch_nd",
    "space_to_depth", "unique_with_counts", "unravel_index",
]

UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])
ListDiff = collections.namedtuple("ListDiff", ["out", "idx"])


# -- space <-> depth <-> batch ---------------------------------------------------------------

def space_to_depth(input: Any, block_size: int, name: str | None = None,  # noqa: A002
                   data_format: str = "NHWC") -> Tensor:
    return apply("SpaceToDepth", [input], {"block_size": block_size,
                                           "data_format": data_format}, name=name)


def depth_to_space(input: Any, block_size: int, name: str | None = None,  # noqa: A002
                   data_format: str = "NHWC") -> Tensor:
    return apply("DepthToSpace", [input], {"block_size": block_size,
                                           "data_format": data_format}, name=name)


def space_to_batch_nd(input: Any, block_shape: Any, paddings: Any,  # noqa: A002
                      name: str | None = None) -> Tensor:
    return apply("SpaceToBatchND", [input, block_shape, paddings], name=name)


def batch_to_space_nd(input: Any, block_shape: Any, crops: Any,  # noqa: A002
                      name: str | None = None) -> Tensor:
    return apply("BatchToSpaceND", [input, block_shape, crops], name=name)


def space_to_batch(input: Any, paddings: Any, block_size: int | None = None,  # noqa: A002
                   name: str | None = None, block_shape: int | None = None) -> Tensor:
    """TF1's 4-D ``space_to_batch``: ``space_to_batch_nd`` with a square block."""
    block_size = deprecated_argument_lookup("block_shape", block_shape, "block_size",
                                            block_size)
    out = space_to_batch_nd(input, np.array([block_size, block_size], np.int64), paddings,
                            name=name)
    out.set_shape(out.shape.with_rank(4))
    return out


def batch_to_space(input: Any, crops: Any, block_size: int | None = None,  # noqa: A002
                   name: str | None = None, block_shape: int | None = None) -> Tensor:
    block_size = deprecated_argument_lookup("block_shape", block_shape, "block_size",
                                            block_size)
    return apply("BatchToSpace", [input, crops], {"block_size": block_size}, name=name)


def required_space_to_batch_paddings(input_shape: Any, block_shape: Any,
                                     base_paddings: Any = None,
                                     name: str | None = None) -> tuple[Tensor, Tensor]:
    """The paddings (and the crops undoing them) that make each spatial size, padded by
    `base_paddings`, a multiple of its block size; TF's helper of the same name."""
    with name_scope(name, "required_space_to_batch_paddings",
                    [input_shape, block_shape]):
        input_shape = convert_to_tensor(input_shape, dtypes.int32, name="input_shape")
        block_shape = convert_to_tensor(block_shape, dtypes.int32, name="block_shape")
        if block_shape.shape.ndims != 1 or not block_shape.shape.is_fully_defined():
            raise ValueError(f"block_shape must be a vector of known length, got shape "
                             f"{block_shape.shape}")
        m = block_shape.shape[0]
        if m == 0:
            empty = np.zeros([0, 2], np.int32)
            return constant(empty, name="paddings"), constant(empty, name="crops")
        input_shape.shape.assert_is_compatible_with([m])
        if base_paddings is None:
            base_paddings = constant(np.zeros([m, 2], np.int32))
        base_paddings = convert_to_tensor(base_paddings, dtypes.int32, name="base_paddings")
        base_paddings.shape.assert_is_compatible_with([m, 2])
        known = [constant_value(t) for t in (input_shape, block_shape, base_paddings)]
        if all(v is not None for v in known):
            shape, block, base = (np.asarray(v, np.int64) for v in known)
            extra = (block - (shape + base[:, 0] + base[:, 1]) % block) % block
            paddings = np.stack([base[:, 0], base[:, 1] + extra], axis=1).astype(np.int32)
            crops = np.stack([np.zeros_like(extra), extra], axis=1).astype(np.int32)
            return constant(paddings, name="paddings"), constant(crops, name="crops")
        start, end = base_paddings[:, 0], base_paddings[:, 1]
        full = input_shape + start + end
        extra = math_ops.floormod(block_shape - math_ops.floormod(full, block_shape),
                                  block_shape)
        paddings = array_ops.stack([start, end + extra], axis=1, name="paddings")
        crops = array_ops.stack([array_ops.zeros_like(extra), extra], axis=1, name="crops")
        return paddings, crops


# -- partitioning and stitching --------------------------------------------------------------

def dynamic_partition(data: Any, partitions: Any, num_partitions: int,
                      name: str | None = None) -> list[Tensor]:
    op = make_op("DynamicPartition", [data, partitions], {"num_partitions": num_partitions},
                 name=name)
    return list(op.outputs)


def _stitch(op_type: str, indices: Any, data: Any, name: str | None) -> Tensor:
    if len(indices) != len(data):
        raise ValueError(f"List argument 'indices' to '{op_type}' Op with length "
                         f"{len(indices)} must match length {len(data)} of argument 'data'.")
    return apply(op_type, [list(indices), list(data)], name=name)


def dynamic_stitch(indices: Any, data: Any, name: str | None = None) -> Tensor:
    return _stitch("DynamicStitch", indices, data, name)


def parallel_dynamic_stitch(indices: Any, data: Any, name: str | None = None) -> Tensor:
    return _stitch("ParallelDynamicStitch", indices, data, name)


# -- reversing, rolling and sorting ----------------------------------------------------------

def reverse_sequence(input: Any, seq_lengths: Any, seq_axis: int | None = None,  # noqa: A002
                     batch_axis: int | None = None, name: str | None = None,
                     seq_dim: int | None = None, batch_dim: int | None = None) -> Tensor:
    seq_axis = deprecated_argument_lookup("seq_axis", seq_axis, "seq_dim", seq_dim)
    batch_axis = deprecated_argument_lookup("batch_axis", batch_axis, "batch_dim", batch_dim)
    if not is_tensor_like(seq_lengths):
        seq_lengths = constant(seq_lengths, dtypes.int64)  # TF's Tlen defaults to int64
    return apply("ReverseSequence", [input, seq_lengths],
                 {"seq_dim": seq_axis, "batch_dim": 0 if batch_axis is None else batch_axis},
                 name=name)


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return apply("Roll", [input, shift, axis], name=name)


_DIRECTIONS = ("ASCENDING", "DESCENDING")


def _order_reversed(values: Tensor) -> Tensor:
    """An order-reversing bijection of `values`: ``-x`` for floats; ``-1 - x`` for signed
    ints and ``MAX - x`` for unsigned ones, which (unlike negation) never overflow. It is its
    own inverse."""
    dtype = values.dtype
    if dtype.is_floating:
        return math_ops.negative(values)
    top = dtype.max if dtype.is_unsigned else -1
    return math_ops.subtract(constant(top, dtype), values)


def _descending(values: Tensor, axis: int, indices: bool) -> Tensor:
    rank = values.shape.ndims
    if axis == -1 or (rank is not None and axis + 1 == rank):
        sorted_ = top_k(values, array_ops.shape(values)[-1])
        return sorted_.indices if indices else sorted_.values
    if rank is None:
        raise ValueError(f"sort along axis {axis} needs a known rank; sort the last axis or "
                         "give the tensor a static rank")
    axis %= rank
    swap = list(range(rank))
    swap[axis], swap[-1] = rank - 1, axis
    moved = array_ops.transpose(values, swap)
    sorted_ = top_k(moved, array_ops.shape(moved)[-1])
    return array_ops.transpose(sorted_.indices if indices else sorted_.values, swap)


def _sort(values: Any, axis: Any, direction: str, indices: bool) -> Tensor:
    if direction not in _DIRECTIONS:
        raise ValueError(f"{direction} should be one of {', '.join(_DIRECTIONS)}")
    axis_t = convert_to_tensor(axis, name="axis")
    static = constant_value(axis_t)
    if axis_t.shape.ndims not in (None, 0) or static is None:
        raise ValueError("axis must be a constant scalar")
    values = convert_to_tensor(values, name="values")
    if not values.dtype.is_numeric:
        raise TypeError(f"sort needs a real numeric tensor, got {values.dtype.name}")
    if direction == "DESCENDING":
        return _descending(values, int(static), indices)
    out = _descending(_order_reversed(values), int(static), indices)
    return out if indices else _order_reversed(out)


def sort(values: Any, axis: Any = -1, direction: str = "ASCENDING",
         name: str | None = None) -> Tensor:
    with name_scope(name, "sort"):
        return _sort(values, axis, direction, indices=False)


def argsort(values: Any, axis: Any = -1, direction: str = "ASCENDING", stable: bool = False,
            name: str | None = None) -> Tensor:
    """Indices that sort `values`; always stable (equal values keep their order), which TF
    documents as the behaviour of ``stable=True``."""
    del stable  # the TopKV2 order is stable either way
    with name_scope(name, "argsort"):
        return _sort(values, axis, direction, indices=True)


def searchsorted(sorted_sequence: Any, values: Any, side: str = "left",
                 out_type: Any = dtypes.int32, name: str | None = None) -> Tensor:
    if side not in ("left", "right"):
        raise ValueError(f"side must be either 'right' or 'left'.  Saw: {side}.")
    with name_scope(name, "searchsorted", [sorted_sequence, values]):
        sorted_sequence = convert_to_tensor(sorted_sequence)
        values = convert_to_tensor(values, sorted_sequence.dtype)
        seq_2d = array_ops.reshape(sorted_sequence,
                                   array_ops.stack([-1, array_ops.shape(sorted_sequence)[-1]]))
        values_2d = array_ops.reshape(values, array_ops.stack([-1, array_ops.shape(values)[-1]]))
        op_type = "UpperBound" if side == "right" else "LowerBound"
        out = apply(op_type, [seq_2d, values_2d], {"out_type": out_type})
        result = array_ops.reshape(out, array_ops.shape(values))
        result.set_shape(values.shape)
        return result


# -- sets, indices and shapes ----------------------------------------------------------------

def unique_with_counts(x: Any, out_idx: Any = dtypes.int32,
                       name: str | None = None) -> UniqueWithCounts:
    op = make_op("UniqueWithCounts", [x], {"out_idx": out_idx}, name=name)
    return UniqueWithCounts(*op.outputs)


def setdiff1d(x: Any, y: Any, index_dtype: Any = dtypes.int32,
              name: str | None = None) -> ListDiff:
    x = convert_to_tensor(x)
    op = make_op("ListDiff", [x, convert_to_tensor(y, x.dtype)], {"out_idx": index_dtype},
                 name=name)
    return ListDiff(*op.outputs)


def unravel_index(indices: Any, dims: Any, name: str | None = None) -> Tensor:
    return apply("UnravelIndex", [indices, dims], name=name)


def shape_n(input: Any, out_type: Any = dtypes.int32,  # noqa: A002
            name: str | None = None) -> list[Tensor]:
    return list(make_op("ShapeN", [list(input)], {"out_type": out_type}, name=name).outputs)


def identity_n(input: Any, name: str | None = None) -> list[Tensor]:  # noqa: A002
    return list(make_op("IdentityN", [list(input)], name=name).outputs)


def parallel_stack(values: Any, name: str = "parallel_stack") -> Tensor:
    """Stack `values` along a new first axis; as TF, every shape must be fully defined."""
    with name_scope(name):
        tensors = [convert_to_tensor(v) for v in values]
        first = tensors[0].shape
        if not first.is_fully_defined():
            raise ValueError("shape attr must be fully defined.")
        for t in tensors:
            if not t.shape.is_fully_defined():
                raise ValueError("All input shapes must be fully defined.")
            if t.shape.as_list() != first.as_list():
                raise ValueError(f"Shapes {first} and {t.shape} are not compatible")
        return array_ops.stack(tensors, axis=0)


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> Tensor:
    return apply("BroadcastArgs", [shape_x, shape_y])


def broadcast_static_shape(shape_x: Any, shape_y: Any) -> TensorShape:
    """The broadcast of two static shapes; unknown dims stay unknown unless the other is > 1."""
    shape_x, shape_y = TensorShape(shape_x), TensorShape(shape_y)
    if shape_x.ndims is None or shape_y.ndims is None:
        return TensorShape(None)
    n = max(shape_x.ndims, shape_y.ndims)
    xs = [1] * (n - shape_x.ndims) + list(shape_x.dims)
    ys = [1] * (n - shape_y.ndims) + list(shape_y.dims)
    out: list[int | None] = []
    for x, y in zip(xs, ys):
        if x is None or y is None:
            known = x if y is None else y
            out.append(known if known is not None and known > 1 else None)
        elif x == 1 or y == 1 or x == y:
            out.append(y if x == 1 else x)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {shape_x} and {shape_y}")
    return TensorShape(out)


# -- histograms, bit casts, sampling and checks ----------------------------------------------

def histogram_fixed_width(values: Any, value_range: Any, nbins: Any = 100,
                          dtype: Any = dtypes.int32, name: str | None = None) -> Tensor:
    with name_scope(name, "histogram_fixed_width", [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        value_range = convert_to_tensor(value_range, values.dtype, name="value_range")
        return apply("HistogramFixedWidth", [values, value_range, nbins], {"dtype": dtype})


def histogram_fixed_width_bins(values: Any, value_range: Any, nbins: Any = 100,
                               dtype: Any = dtypes.int32, name: str | None = None) -> Tensor:
    """The bin of each value: values below the range go to bin 0, above it to the last."""
    with name_scope(name, "histogram_fixed_width_bins", [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        shape = array_ops.shape(values)
        flat = array_ops.reshape(values, [-1])
        value_range = convert_to_tensor(value_range, values.dtype, name="value_range")
        bins = math_ops.cast(convert_to_tensor(nbins, dtypes.int32, name="nbins"),
                             values.dtype)
        scaled = math_ops.truediv(flat - value_range[0], value_range[1] - value_range[0])
        indices = math_ops.floor(bins * scaled)
        indices = math_ops.minimum(math_ops.maximum(indices, 0.0), bins - 1)
        result = array_ops.reshape(math_ops.cast(indices, dtype), shape)
        result.set_shape(values.shape)
        return result


def bitcast(input: Any, type: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return apply("Bitcast", [input], {"type": type}, name=name)


def multinomial(logits: Any, num_samples: Any, seed: int | None = None,
                name: str | None = None, output_dtype: Any = None) -> Tensor:
    """Draw `num_samples` class indices per row of unnormalised log-probabilities."""
    with name_scope(name, "multinomial", [logits]):
        seed1, seed2 = get_seed(seed)
        return apply("Multinomial", [logits, num_samples],
                     {"seed": seed1 or 0, "seed2": seed2 or 0,
                      "output_dtype": output_dtype or dtypes.int64})


def categorical(logits: Any, num_samples: Any, dtype: Any = None, seed: int | None = None,
                name: str | None = None) -> Tensor:
    """``tf.random.categorical``: `multinomial` with the output dtype named `dtype`."""
    with name_scope(name, "categorical", [logits]):
        return multinomial(logits, num_samples, seed=seed, output_dtype=dtype)


def is_numeric_tensor(tensor: Any) -> bool:
    return isinstance(tensor, Tensor) and tensor.dtype.is_numeric


def _diffs(x: Any) -> Tensor:
    x = convert_to_tensor(x, name="x")
    if not is_numeric_tensor(x):
        raise TypeError(f"Expected x to be numeric, instead found: {x.dtype.name}")
    flat = array_ops.reshape(x, [-1])
    return flat[1:] - flat[:-1]  # empty for fewer than two elements


def is_non_decreasing(x: Any, name: str | None = None) -> Tensor:
    with name_scope(name, "is_non_decreasing", [x]):
        diff = _diffs(x)
        return math_ops.reduce_all(math_ops.less_equal(constant(0, diff.dtype), diff))


def is_strictly_increasing(x: Any, name: str | None = None) -> Tensor:
    with name_scope(name, "is_strictly_increasing", [x]):
        diff = _diffs(x)
        return math_ops.reduce_all(math_ops.less(constant(0, diff.dtype), diff))
