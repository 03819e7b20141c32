"""``tw.nn``'s max pooling with argmax, morphology, and TF's Python compositions, with
``tf.compat.v1.nn``'s signatures: ``max_pool_with_argmax``, ``dilation2d``, ``erosion2d``,
``swish``, ``crelu``, ``relu_layer``, ``sufficient_statistics``, ``normalize_moments``,
``weighted_moments``, ``log_poisson_loss``, ``compute_average_loss`` and
``safe_embedding_lookup_sparse``.

Contract: each function builds the graph TF's Python builds (a raw op, or TF's composite of
ops), so values and gradients match TF's, and validates its arguments at construction with TF's
`ValueError`s. ``compute_average_loss`` runs on one replica (tensorweave has no distribution
strategies), so the default global batch size is the first dimension of the losses.
"""

from __future__ import annotations

import collections
import math
from typing import Any

import numpy as np

from tensorweave.api import array_ops as _array
from tensorweave.api import math_ops as _math
from tensorweave.api import sparse_ops as _sparse
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.nn_ops import _get_sequence, bias_add
from tensorweave.api.scopes import name_scope
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply, make_op
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "compute_average_loss", "crelu", "dilation2d", "erosion2d", "log_poisson_loss",
    "max_pool_with_argmax", "normalize_moments", "relu_layer", "safe_embedding_lookup_sparse",
    "sufficient_statistics", "swish", "weighted_moments",
]

MaxPoolWithArgmax = collections.namedtuple("MaxPoolWithArgmax", ["output", "argmax"])


# -- ops ------------------------------------------------------------------------------------------


def max_pool_with_argmax(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
                         data_format: str = "NHWC", Targmax: Any = None,  # noqa: N803
                         name: str | None = None, output_dtype: Any = None,
                         include_batch_in_index: bool = False) -> MaxPoolWithArgmax:
    """Max pooling of an NHWC `input` and, per output, the flat index of the chosen element:
    ``(y * width + x) * channels + c`` (plus ``b * height * width * channels`` with
    `include_batch_in_index`)."""
    if data_format != "NHWC":
        raise ValueError("Data formats other than 'NHWC' are not yet supported")
    targmax = deprecated_argument_lookup("output_dtype", output_dtype, "Targmax", Targmax)
    attrs = {"ksize": _get_sequence(ksize, 2, 3, "ksize"),
             "strides": _get_sequence(strides, 2, 3, "strides"), "padding": padding,
             "include_batch_in_index": bool(include_batch_in_index),
             "Targmax": dtypes.as_dtype(targmax) if targmax is not None else dtypes.int64}
    op = make_op("MaxPoolWithArgmax", [input], attrs, name=name)
    return MaxPoolWithArgmax(*op.outputs)


def dilation2d(input: Any, filter: Any = None, strides: Any = None, rates: Any = None,  # noqa: A002
               padding: str | None = None, name: str | None = None, filters: Any = None,
               dilations: Any = None) -> Tensor:
    """Grayscale morphological dilation of an NHWC `input` by a ``[height, width, depth]``
    structuring function: ``max over (dy, dx) of input[y*sy + ry*dy, x*sx + rx*dx] +
    filter[dy, dx]``, channel by channel."""
    kernel = deprecated_argument_lookup("filters", filters, "filter", filter)
    rates = deprecated_argument_lookup("dilations", dilations, "rates", rates)
    if kernel is None or strides is None or rates is None or padding is None:
        raise ValueError("dilation2d needs filter, strides, rates and padding")
    attrs = {"strides": [int(v) for v in strides], "rates": [int(v) for v in rates],
             "padding": padding}
    return apply("Dilation2D", [input, kernel], attrs, name=name)


def erosion2d(value: Any, kernel: Any, strides: Any, rates: Any, padding: str,
              name: str | None = None) -> Tensor:
    """Grayscale morphological erosion: ``-dilation2d(-value, kernel reversed in space)``."""
    with name_scope(name, "erosion2d", [value, kernel]) as scope:
        value = convert_to_tensor(value, name="value")
        kernel = convert_to_tensor(kernel, name="kernel")
        dilated = dilation2d(apply("Neg", [value]), _array.reverse(kernel, [0, 1]), strides,
                             rates, padding, name="dilation2d")
        return apply("Neg", [dilated], name=scope)


# -- activations ----------------------------------------------------------------------------------


def swish(features: Any, name: str | None = None) -> Tensor:
    """``features * sigmoid(features)``."""
    with name_scope(name, "swish", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        return apply("Mul", [features, apply("Sigmoid", [features])], name=scope)


def crelu(features: Any, name: str | None = None, axis: int = -1) -> Tensor:
    """``relu(concat([features, -features], axis))``: the positive and negative parts side by
    side, doubling `axis`."""
    with name_scope(name, "CRelu", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        joined = _array.concat([features, apply("Neg", [features])], axis)
        return apply("Relu", [joined], name=scope)


def relu_layer(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """``relu(matmul(x, weights) + biases)``."""
    with name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return apply("Relu", [bias_add(_math.matmul(x, weights), biases)], name=scope)


# -- moments --------------------------------------------------------------------------------------


def sufficient_statistics(x: Any, axes: Any, shift: Any = None, keep_dims: bool | None = None,
                          name: str | None = None,
                          keepdims: bool | None = None) -> tuple[Any, Tensor, Tensor, Any]:
    """``(count, sum(x - shift), sum((x - shift) ** 2), shift)`` over `axes`; `count` is a
    constant when the reduced dimensions are known."""
    axes = sorted({int(a) for a in np.ravel(axes)})
    keep = bool(deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims))
    with name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x, name="x")
        shape = x.shape
        if shape.ndims is not None and all(shape[d] is not None for d in axes):
            counts: Any = convert_to_tensor(
                np.asarray(np.prod([shape[d] for d in axes]), x.dtype.np_type), name="count")
        else:
            dims = _array.gather(_math.cast(_array.shape(x), x.dtype), axes)
            counts = _math.reduce_prod(dims, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, name="shift")
            m_ss = apply("Sub", [x, shift])
            v_ss = apply("SquaredDifference", [x, shift])
        else:
            m_ss, v_ss = x, apply("Square", [x])
        m_ss = _math.reduce_sum(m_ss, axes, keepdims=keep, name="mean_ss")
        v_ss = _math.reduce_sum(v_ss, axes, keepdims=keep, name="var_ss")
    return counts, m_ss, v_ss, shift


def normalize_moments(counts: Any, mean_ss: Any, variance_ss: Any, shift: Any,
                      name: str | None = None) -> tuple[Tensor, Tensor]:
    """Mean and variance from `sufficient_statistics`' outputs."""
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = apply("Reciprocal", [counts], name="divisor")
        if shift is not None:
            shifted_mean = apply("Mul", [mean_ss, divisor], name="shifted_mean")
            mean = apply("AddV2", [shifted_mean, shift], name="mean")
        else:
            shifted_mean = apply("Mul", [mean_ss, divisor], name="mean")
            mean = shifted_mean
        variance = apply("Sub", [apply("Mul", [variance_ss, divisor]),
                                 apply("Square", [shifted_mean])], name="variance")
    return mean, variance


def weighted_moments(x: Any, axes: Any, frequency_weights: Any, name: str | None = None,
                     keep_dims: bool | None = None,
                     keepdims: bool | None = None) -> tuple[Tensor, Tensor]:
    """Mean and variance of `x` over `axes`, each element counted `frequency_weights` times
    (broadcast against `x`); float16 is computed in float32."""
    keep = bool(deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims))
    with name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(frequency_weights, name="frequency_weights")
        needs_cast = x.dtype == dtypes.float16
        if needs_cast:
            x = _math.cast(x, dtypes.float32)
        if weights.dtype != x.dtype:
            weights = _math.cast(weights, x.dtype)
        weighted_sum = _math.reduce_sum(weights * x, axes, keepdims=True,
                                        name="weighted_input_sum")
        broadcast_weights = weights + _array.zeros_like(x)
        weight_sum = _math.reduce_sum(broadcast_weights, axes, keepdims=True,
                                      name="sum_of_weights")
        divisor = apply("Reciprocal", [weight_sum], name="inv_weight_sum")
        mean = apply("Mul", [weighted_sum, divisor])
        deviation = apply("SquaredDifference", [x, apply("StopGradient", [mean])])
        distsq = _math.reduce_sum(weights * deviation, axes, keepdims=True,
                                  name="weighted_distsq")
        variance = apply("Mul", [distsq, divisor])
        if not keep:
            mean, variance = _array.squeeze(mean, axes), _array.squeeze(variance, axes)
        if needs_cast:
            mean, variance = _math.cast(mean, dtypes.float16), _math.cast(variance,
                                                                          dtypes.float16)
        return mean, variance


# -- losses ---------------------------------------------------------------------------------------


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False,
                     name: str | None = None) -> Tensor:
    """Poisson negative log likelihood from the log of the rate: ``exp(log_input) - log_input
    * targets``, plus Stirling's ``targets * log(targets) - targets + 0.5 * log(2 pi
    targets)`` for targets above 1 when `compute_full_loss`."""
    with name_scope(name, "log_poisson_loss", [log_input, targets]) as scope:
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets")
        if not targets.shape.is_compatible_with(log_input.shape):
            raise ValueError(f"log_input and targets must have the same shape "
                             f"({log_input.shape} vs {targets.shape})")
        result = apply("Exp", [log_input]) - log_input * targets
        if not compute_full_loss:
            return apply("Identity", [result], name=scope)
        half = np.asarray(0.5, targets.dtype.np_type)
        two_pi = np.asarray(2 * math.pi, targets.dtype.np_type)
        stirling = targets * apply("Log", [targets]) - targets \
            + half * apply("Log", [two_pi * targets])
        zeros = _array.zeros_like(targets)
        small = _math.logical_and(targets >= zeros, targets <= _array.ones_like(targets))
        return apply("AddV2", [result, _array.where(small, zeros, stirling)], name=scope)


def compute_average_loss(per_example_loss: Any, sample_weight: Any = None,
                         global_batch_size: Any = None) -> Tensor:
    """``sum(per_example_loss * sample_weight) / global_batch_size`` (default: the losses'
    first dimension)."""
    losses = convert_to_tensor(per_example_loss)
    dtype = losses.dtype
    if losses.shape.ndims == 0:
        raise ValueError(f"Invalid value passed for `per_example_loss`. Expected a tensor with "
                         f"at least rank 1, received: {losses}")
    if sample_weight is not None:
        weight = _math.cast(convert_to_tensor(sample_weight), dtype)
        losses = _math.cast(apply("Mul", [losses, weight]), dtype)
    if global_batch_size is None:
        global_batch_size = _math.cast(_array.shape(losses)[0], dtype)
    elif not isinstance(global_batch_size, Tensor):
        global_batch_size = np.asarray(global_batch_size, dtype.np_type)
    else:
        global_batch_size = _math.cast(global_batch_size, dtype)
    return apply("RealDiv", [_math.reduce_sum(losses), global_batch_size])


# -- embeddings -----------------------------------------------------------------------------------


def _retain(ids: SparseTensor, weights: SparseTensor | None,
            keep: Tensor) -> tuple[SparseTensor, SparseTensor | None]:
    ids = _sparse.sparse_retain(ids, keep)
    return ids, None if weights is None else _sparse.sparse_retain(weights, keep)


def safe_embedding_lookup_sparse(embedding_weights: Any, sparse_ids: SparseTensor,
                                 sparse_weights: SparseTensor | None = None,
                                 combiner: str = "mean", default_id: int | None = None,
                                 name: str | None = None, partition_strategy: str = "div",
                                 max_norm: Any = None) -> Tensor:
    """``embedding_lookup_sparse`` that tolerates bad input: ids < 0 are dropped, and (unless
    `combiner` is "sum") so are ids of weight <= 0; a row left empty gets the embedding of
    `default_id`, or zeros. Ids of rank > 2 are looked up per leading row: the result has shape
    ``sparse_ids.dense_shape[:-1] + embedding_dims``."""
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    shards = list(embedding_weights) if isinstance(embedding_weights, (list, tuple)) \
        else [embedding_weights]
    if not shards:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    dtype = sparse_weights.dtype if sparse_weights is not None else None
    shards = [convert_to_tensor(w, dtype=dtype) for w in shards]
    with name_scope(name, "embedding_lookup",
                    [*shards, sparse_ids.values]) as scope:
        original_shape = sparse_ids.dense_shape
        rank_dim = TensorShape(original_shape.shape).with_rank(1)[0]
        rank: Any = _array.size(original_shape) if rank_dim is None else rank_dim
        outer = _array.slice(original_shape, [0], [rank - 1])
        ids = _sparse.sparse_reshape(sparse_ids, _array.stack(
            [_math.reduce_prod(outer), _array.gather(original_shape, rank - 1)]))
        weights = None if sparse_weights is None else SparseTensor(
            ids.indices, sparse_weights.values, ids.dense_shape)
        ids, weights = _retain(ids, weights, _math.greater_equal(
            ids.values, np.asarray(0, ids.values.dtype.np_type)))
        if combiner != "sum" and weights is not None:
            ids, weights = _retain(ids, weights, _math.greater(
                weights.values, np.asarray(0, weights.values.dtype.np_type)))
        ids, is_row_empty = _sparse.sparse_fill_empty_rows(ids, default_id or 0)
        if weights is not None:
            weights, _ = _sparse.sparse_fill_empty_rows(weights, 1.0)
        result = _sparse.embedding_lookup_sparse(
            shards, ids, weights, combiner=combiner, partition_strategy=partition_strategy,
            name=None if default_id is None else scope, max_norm=max_norm)
        if default_id is None:
            empty = _array.tile(_array.reshape(is_row_empty, [-1, 1]),
                                _array.stack([1, _array.shape(result)[1]]))
            result = _array.where(empty, _array.zeros_like(result), result, name=scope)
        final = _array.reshape(result, _array.concat(
            [_array.slice(_math.cast(original_shape, dtypes.int32), [0], [rank - 1]),
             _array.slice(_array.shape(result), [1], [-1])], 0))
        outer_rank = None if rank_dim is None else rank_dim - 1
        final.set_shape(TensorShape(None if outer_rank is None else [None] * outer_rank)
                        .concatenate(result.shape[1:]))
        return final
