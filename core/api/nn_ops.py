"""``tw.nn``: activations, softmax and cross-entropies, convolution, pooling, dropout and
friends, with ``tf.compat.v1.nn``'s signatures.

Contract: each function builds the same ops TF's does (a raw op, or TF's composite of them), in
the default graph or its inputs' graph, and validates its Python arguments at construction with
TF's `ValueError`s. Reductions, casts, gathers and squeezes go through the math and array APIs,
looked up when called.
"""

from __future__ import annotations

import collections
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorweave.api import array_ops as _array
from tensorweave.api import dispatch
from tensorweave.api import math_ops as _math
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.random_ops import random_uniform
from tensorweave.api.scopes import colocate_with, name_scope
from tensorweave.engine import dtypes, errors
from tensorweave.engine.graph.constant_op import convert_to_tensor, is_tensor_like
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.graph.op_builder import apply, make_op
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "avg_pool", "batch_normalization", "bias_add", "conv2d", "dropout", "elu",
    "embedding_lookup", "in_top_k", "l2_loss", "l2_normalize", "leaky_relu",
    "local_response_normalization", "log_softmax", "lrn", "max_pool", "moments", "relu", "relu6",
    "selu", "sigmoid", "sigmoid_cross_entropy_with_logits", "softmax",
    "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2", "softplus",
    "softsign", "sparse_softmax_cross_entropy_with_logits", "tanh", "top_k",
    "weighted_cross_entropy_with_logits", "xw_plus_b", "zero_fraction",
]

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


# -- activations -------------------------------------------------------------------------------


def _activation(op: str, doc: str) -> Any:
    def fn(features: Any, name: str | None = None) -> Tensor:
        return apply(op, [features], name=name)

    fn.__name__ = fn.__qualname__ = op.lower()
    fn.__doc__ = doc
    return fn


relu = _activation("Relu", "``max(features, 0)``.")
relu6 = _activation("Relu6", "``min(max(features, 0), 6)``.")
elu = _activation("Elu", "``exp(features) - 1`` if negative, else `features`.")
selu = _activation("Selu", "Scaled exponential linear unit.")
softplus = _activation("Softplus", "``log(exp(features) + 1)``, computed stably.")
softsign = _activation("Softsign", "``features / (abs(features) + 1)``.")


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    """``1 / (1 + exp(-x))``."""
    return apply("Sigmoid", [x], name=name)


def tanh(x: Any, name: str | None = None) -> Tensor:
    """Hyperbolic tangent."""
    return apply("Tanh", [x], name=name)


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """`features` if positive, else ``alpha * features``; integers are computed as float32."""
    with name_scope(name, "LeakyRelu", [features, alpha]) as scope:
        features = convert_to_tensor(features, name="features")
        if features.dtype.is_integer:
            features = _math.cast(features, dtypes.float32)
        return apply("LeakyRelu", [features], {"alpha": float(np.asarray(alpha))}, name=scope)


# -- softmax and cross-entropies ------------------------------------------------------------------


def _axis_arg(axis: Any, dim: Any) -> int:
    chosen = deprecated_argument_lookup("axis", axis, "dim", dim)
    return -1 if chosen is None else int(chosen)


def _check_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise errors.InvalidArgumentError(
            None, None, f"Dimension ({axis}) must be in the range [{-rank}, {rank}) where "
                        f"{rank} is the number of dimensions in the input.")
    return axis % rank


def _known_rank(x: Tensor, what: str) -> int:
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"{what} needs a tensor of known rank along a non-last axis, got "
                         f"{x.name} of unknown rank")
    return rank


def _transpose(x: Tensor, perm: Sequence[int], name: str | None = None) -> Tensor:
    return apply("Transpose", [x, np.asarray(perm, dtype=np.int32)], name=name)


def _softmax_axis(axis: Any, dim: Any) -> int | Tensor:
    """The softmax axis: an int, or a tensor whose value is only known when run (TF takes a
    constant tensor as its value)."""
    chosen = deprecated_argument_lookup("axis", axis, "dim", dim)
    if chosen is None:
        return -1
    if not is_tensor_like(chosen):
        return int(chosen)
    chosen = convert_to_tensor(chosen, dtype=dtypes.int32)
    value = constant_value(chosen)
    return chosen if value is None else int(value)


def _softmax(logits: Any, op: str, axis: int | Tensor, name: str | None) -> Tensor:
    logits = convert_to_tensor(logits)
    rank = logits.shape.ndims
    if isinstance(axis, int) and (axis == -1 or (rank is not None and axis == rank - 1)):
        return apply(op, [logits], name=name)
    rank = _known_rank(logits, op)
    # TF swaps the axis with the last one, applies the op and swaps back.
    if isinstance(axis, int):
        axis = _check_axis(axis, rank)
        order = list(range(rank))
        order[axis], order[-1] = order[-1], order[axis]
        perm: Any = np.asarray(order, dtype=np.int32)
    else:
        # As TF: a run-time axis is taken modulo the rank.
        axis = _math.floormod(axis, rank)
        dims = np.arange(rank, dtype=np.int32)
        perm = _array.where(_math.equal(dims, axis), np.full(rank, rank - 1, np.int32),
                            _array.where(_math.equal(dims, rank - 1),
                                         _array.fill([rank], axis), dims))
    swapped = apply(op, [apply("Transpose", [logits, perm])])
    out = apply("Transpose", [swapped, perm], name=name)
    out.set_shape(logits.shape)
    return out


def softmax(logits: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Tensor:
    """``exp(logits) / reduce_sum(exp(logits), axis)``; `axis` may be a scalar tensor."""
    return _softmax(logits, "Softmax", _softmax_axis(axis, dim), name)


def log_softmax(logits: Any, axis: Any = None, name: str | None = None,
                dim: Any = None) -> Tensor:
    """``logits - log(reduce_sum(exp(logits), axis))``; `axis` may be a scalar tensor."""
    return _softmax(logits, "LogSoftmax", _softmax_axis(axis, dim), name)


def _ensure_xent_args(name: str, sentinel: Any, labels: Any, logits: Any) -> None:
    if sentinel is not None:
        raise ValueError(f"Only call `{name}` with named arguments (labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")


def _as_dtype_of(value: Any, like: Tensor, name: str) -> Tensor:
    """`value` as a tensor of `like`'s dtype (a tensor of another dtype is cast)."""
    if not is_tensor_like(value):
        return convert_to_tensor(value, dtype=like.dtype, name=name)
    value = convert_to_tensor(value)
    return value if value.dtype == like.dtype else _math.cast(value, like.dtype)


def _same_shape(logits: Tensor, labels: Tensor) -> None:
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs "
                         f"{labels.shape})")


def _shape_prefix(x: Tensor, count: int) -> Any:
    """The first `count` dims of `x`'s shape: a list when static, else a tensor."""
    head = x.shape[:count]
    if head.is_fully_defined():
        return head.as_list()
    return apply("Slice", [apply("Shape", [x]), np.array([0], np.int32),
                           np.array([count], np.int32)])


def _flatten_outer_dims(x: Tensor, rank: int) -> Tensor:
    """`x` reshaped to 2-D, all leading dims folded into the first (TF's helper, which
    reshapes a 2-D `x` too)."""
    last = x.shape[-1]
    if last is None:
        last = apply("Slice", [apply("Shape", [x]), np.array([rank - 1], np.int32),
                               np.array([1], np.int32)])
        target = apply("ConcatV2", [[np.array([-1], np.int32), last], np.int32(0)])
    else:
        target = np.array([-1, last], np.int32)
    return apply("Reshape", [x, target])


def softmax_cross_entropy_with_logits_v2(labels: Any, logits: Any, axis: int | None = None,
                                         name: str | None = None,
                                         dim: int | None = None) -> Tensor:
    """Cross-entropy between `labels` (a distribution per row) and ``softmax(logits)`` along
    `axis`; the result has `logits`' shape without that axis."""
    axis = _axis_arg(axis, dim)
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = _as_dtype_of(labels, logits, "labels")
        rank = logits.shape.ndims
        if rank is None:
            raise ValueError("softmax_cross_entropy_with_logits needs logits of known rank")
        if rank == 0:
            raise ValueError(f"Logits cannot be scalars - received shape {logits.shape}.")
        axis = _check_axis(axis, rank)
        static = logits.shape
        if axis != rank - 1:
            perm = [*range(axis), *range(axis + 1, rank), axis]
            logits, labels = _transpose(logits, perm), _transpose(labels, perm)
        outer = _shape_prefix(logits, rank - 1)
        cost = make_op("SoftmaxCrossEntropyWithLogits",
                       [_flatten_outer_dims(logits, rank), _flatten_outer_dims(labels, rank)],
                       name=scope).outputs[0]
        # as TF, the cost is reshaped back even from 2-D, so its gradient has TF's Reshapes
        cost = apply("Reshape", [cost, outer])
        cost.set_shape(TensorShape([d for i, d in enumerate(static.dims) if i != axis]))
        return cost


def softmax_cross_entropy_with_logits(_sentinel: Any = None, labels: Any = None,
                                      logits: Any = None, dim: int | None = -1,
                                      name: str | None = None,
                                      axis: int | None = None) -> Tensor:
    """TF1's cross-entropy: as `softmax_cross_entropy_with_logits_v2`, with no gradient into
    `labels`. Call it with keywords."""
    _ensure_xent_args("softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    if axis is not None and dim not in (None, -1):
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    axis = axis if axis is not None else dim
    with name_scope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as scope:
        labels = apply("StopGradient", [labels], name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=axis,
                                                name=scope)


def sparse_softmax_cross_entropy_with_logits(_sentinel: Any = None, labels: Any = None,
                                             logits: Any = None,
                                             name: str | None = None) -> Tensor:
    """Cross-entropy between class indices `labels` (int32/int64, one per row) and
    ``softmax(logits)``; the result has `labels`' shape. A label outside ``[0, classes)``
    raises `InvalidArgumentError` when run."""
    _ensure_xent_args("sparse_softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]):
        labels = convert_to_tensor(labels)
        logits = convert_to_tensor(logits)
        lshape, xshape = labels.shape, logits.shape
        if xshape.ndims == 0:
            raise ValueError(f"Logits cannot be scalars - received shape {xshape}.")
        if xshape.ndims is not None and lshape.ndims is not None \
                and lshape.ndims != xshape.ndims - 1:
            raise ValueError(f"Rank mismatch: Rank of labels (received {lshape.ndims}) should "
                             f"equal rank of logits minus 1 (received {xshape.ndims}).")
        if lshape.ndims is not None and xshape.ndims is not None \
                and not lshape.is_compatible_with(xshape[:-1]):
            raise ValueError(f"Shape mismatch: The shape of labels (received {lshape}) should "
                             f"equal the shape of logits except for the last dimension "
                             f"(received {xshape}).")
        if xshape.ndims == 2:
            return make_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels]).outputs[0]
        rank = _known_rank(logits, "sparse_softmax_cross_entropy_with_logits")
        outer = _shape_prefix(labels, rank - 1)
        flat_labels = apply("Reshape", [labels, np.array([-1], np.int32)])
        cost = make_op("SparseSoftmaxCrossEntropyWithLogits",
                       [_flatten_outer_dims(logits, rank), flat_labels]).outputs[0]
        cost = apply("Reshape", [cost, outer])
        cost.set_shape(lshape)
        return cost


def sigmoid_cross_entropy_with_logits(_sentinel: Any = None, labels: Any = None,
                                      logits: Any = None, name: str | None = None) -> Tensor:
    """Elementwise logistic loss ``-z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x))``,
    computed stably as ``softplus(x) - x z``."""
    _ensure_xent_args("sigmoid_cross_entropy_with_logits", _sentinel, labels, logits)
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
        _same_shape(logits, labels)
        return apply("Sub", [apply("Softplus", [logits]), apply("Mul", [logits, labels])],
                     name=scope)


def weighted_cross_entropy_with_logits(labels: Any = None, logits: Any = None,
                                       pos_weight: Any = None, name: str | None = None,
                                       targets: Any = None) -> Tensor:
    """Logistic loss with positives weighted by `pos_weight`:
    ``(1 - z) x + (1 + (pos_weight - 1) z) softplus(-x)``."""
    labels = deprecated_argument_lookup("labels", labels, "targets", targets)
    if labels is None or logits is None or pos_weight is None:
        raise ValueError("labels, logits and pos_weight must be provided.")
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
        _same_shape(logits, labels)
        weight = _as_dtype_of(pos_weight, logits, "pos_weight")
        log_weight = apply("AddV2", [apply("Mul", [apply("Sub", [weight, 1]), labels]), 1])
        negative = apply("Mul", [apply("Sub", [1, labels]), logits])
        softplus_neg = apply("Softplus", [apply("Neg", [logits])])
        return apply("AddV2", [negative, apply("Mul", [log_weight, softplus_neg])], name=scope)


def l2_loss(t: Any, name: str | None = None) -> Tensor:
    """``sum(t ** 2) / 2``."""
    return apply("L2Loss", [t], name=name)


# -- bias, convolution, pooling --------------------------------------------------------------------


def bias_add(value: Any, bias: Any, data_format: str | None = None,
             name: str | None = None) -> Tensor:
    """`value` plus the 1-D `bias` along its channel dimension (last, or 1 for ``NC...``)."""
    if data_format is not None:
        if data_format.startswith("NC"):
            data_format = "NCHW"
        elif data_format.startswith("N") and data_format.endswith("C"):
            data_format = "NHWC"
        else:
            raise ValueError("data_format must be of the form `N...C` or `NC...`")
    with name_scope(name, "BiasAdd", [value, bias]) as scope:
        value = convert_to_tensor(value, name="input")
        bias = convert_to_tensor(bias, dtype=None if is_tensor_like(bias) else value.dtype,
                                 name="bias")
        return apply("BiasAdd", [value, bias], {"data_format": data_format or "NHWC"},
                     name=scope)


def _get_sequence(value: Any, n: int, channel_index: int, name: str) -> list[int]:
    """TF's expansion of an int or an n-list into the 4-list of an NHWC/NCHW attr."""
    value = [1] if value is None else [int(v) for v in np.ravel(value)]
    if len(value) == n + 2:
        return value
    if len(value) == 1:
        value = value * n
    elif len(value) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2} but was {len(value)}")
    return [1, 1, *value] if channel_index == 1 else [1, *value, 1]


def _channel_index(data_format: str | None) -> int:
    return 1 if (data_format or "NHWC").startswith("NC") else 3


def _convert_padding(padding: Any) -> tuple[str, list[int]]:
    """A padding string, or explicit ``[[before, after]] * 4`` as TF's EXPLICIT padding."""
    if isinstance(padding, str):
        return padding, []
    if isinstance(padding, (list, tuple)) and len(padding) == 4 and all(
            isinstance(p, (list, tuple)) and len(p) == 2 for p in padding):
        flat = [int(v) for p in padding for v in p]
        return "EXPLICIT", flat
    raise ValueError(f"When padding is explicit, padding must be a list of size 4 (one for "
                     f"each dimension) of 2-element lists, got: {padding!r}")


def conv2d(input: Any, filter: Any = None, strides: Any = None, padding: Any = None,  # noqa: A002
           use_cudnn_on_gpu: bool = True, data_format: str = "NHWC",
           dilations: Any = (1, 1, 1, 1), name: str | None = None,
           filters: Any = None) -> Tensor:
    """2-D convolution of an NHWC `input` with a ``[height, width, in, out]`` filter."""
    kernel = deprecated_argument_lookup("filters", filters, "filter", filter)
    if kernel is None:
        raise ValueError("conv2d needs a filter")
    if padding is None:
        raise ValueError("conv2d needs a padding ('SAME', 'VALID' or explicit pairs)")
    padding, explicit = _convert_padding(padding)
    channel = _channel_index(data_format)
    attrs = {
        "strides": _get_sequence(strides, 2, channel, "strides"),
        "padding": padding, "explicit_paddings": explicit,
        "use_cudnn_on_gpu": use_cudnn_on_gpu, "data_format": data_format or "NHWC",
        "dilations": _get_sequence(dilations, 2, channel, "dilations"),
    }
    return apply("Conv2D", [input, kernel], attrs, name=name)


def _pool(op: str, value: Any, ksize: Any, strides: Any, padding: str | None,
          data_format: str | None, name: str | None) -> Tensor:
    if value is None or ksize is None or strides is None or padding is None:
        raise ValueError(f"{op} needs value, ksize, strides and padding")
    channel = _channel_index(data_format)
    ksize = _get_sequence(ksize, 2, channel, "ksize")
    if any(v == 0 for v in ksize):
        raise ValueError("ksize cannot be zero.")
    attrs = {"ksize": ksize, "strides": _get_sequence(strides, 2, channel, "strides"),
             "padding": padding, "data_format": data_format or "NHWC"}
    with name_scope(name, op, [value]) as scope:
        return apply(op, [convert_to_tensor(value, name="input")], attrs, name=scope)


def max_pool(value: Any = None, ksize: Any = None, strides: Any = None, padding: str | None = None,
             data_format: str = "NHWC", name: str | None = None, input: Any = None) -> Tensor:  # noqa: A002
    """The maximum over each `ksize` window of an NHWC `value`. A `ksize` or `strides` given
    as a tensor makes a ``MaxPoolV2``, which reads them when it runs."""
    value = input if input is not None else value
    if is_tensor_like(ksize) or is_tensor_like(strides):
        if value is None or padding is None:
            raise ValueError("MaxPoolV2 needs value, ksize, strides and padding")
        with name_scope(name, "MaxPool", [value]) as scope:
            return apply("MaxPoolV2", [convert_to_tensor(value, name="input"), ksize, strides],
                         {"padding": padding, "data_format": data_format or "NHWC"},
                         name=scope)
    return _pool("MaxPool", value, ksize, strides, padding, data_format, name)


def avg_pool(value: Any = None, ksize: Any = None, strides: Any = None, padding: str | None = None,
             data_format: str = "NHWC", name: str | None = None, input: Any = None) -> Tensor:  # noqa: A002
    """The mean over each `ksize` window of an NHWC `value` (SAME windows count only the
    elements inside the image)."""
    return _pool("AvgPool", input if input is not None else value, ksize, strides, padding,
                 data_format, name)


def local_response_normalization(input: Any, depth_radius: int = 5, bias: float = 1.0,  # noqa: A002
                                 alpha: float = 1.0, beta: float = 0.5,
                                 name: str | None = None) -> Tensor:
    """Each channel of a 4-D `input` divided by ``(bias + alpha * sqr_sum) ** beta``, where
    `sqr_sum` sums the squares of the channels within `depth_radius` of it."""
    attrs = {"depth_radius": int(depth_radius), "bias": float(bias), "alpha": float(alpha),
             "beta": float(beta)}
    return apply("LRN", [input], attrs, name=name)


lrn = local_response_normalization


# -- top-k ---------------------------------------------------------------------------------------


def top_k(input: Any, k: Any = 1, sorted: bool = True, name: str | None = None) -> TopKV2:  # noqa: A002
    """The `k` largest entries of each last-axis row and their int32 indices (ties: lower index
    first)."""
    op = make_op("TopKV2", [input, k], {"sorted": sorted}, name=name)
    return TopKV2(*op.outputs)


def in_top_k(predictions: Any, targets: Any, k: Any, name: str | None = None) -> Tensor:
    """Whether each row's `targets` entry is among its `k` largest `predictions`."""
    with name_scope(name, "in_top_k"):
        return apply("InTopKV2", [predictions, targets, k], name=name)


# -- composites ----------------------------------------------------------------------------------


def _noise_shape(x: Tensor, noise_shape: Any) -> Any:
    if noise_shape is None:
        return x.shape.as_list() if x.shape.is_fully_defined() else apply("Shape", [x])
    if is_tensor_like(noise_shape) or x.shape.ndims is None:
        return noise_shape
    dims = list(noise_shape)
    if len(dims) == x.shape.ndims:  # TF fills unknown noise dims from x's static shape
        dims = [d if d is not None else x.shape[i] for i, d in enumerate(dims)]
    return dims


def dropout(x: Any, keep_prob: Any = None, noise_shape: Any = None, seed: int | None = None,
            name: str | None = None, rate: Any = None) -> Tensor:
    """Zero each element with probability ``rate = 1 - keep_prob``, scale the rest by
    ``1 / keep_prob``: ``x / keep_prob * floor(keep_prob + uniform[0, 1))``."""
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'rate' and 'keep_prob'.")
    if keep_prob is None and rate is None:
        raise ValueError("You must provide a rate to dropout.")
    if isinstance(rate, numbers.Real) and not 0 <= rate < 1:
        raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), "
                         f"got {rate:g}")
    if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
        raise ValueError(f"keep_prob must be a scalar tensor or a float in the range (0, 1], "
                         f"got {keep_prob:g}")
    with name_scope(name, "dropout", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"x has to be a floating point tensor since it's going to be "
                             f"scaled. Got a {x.dtype.name} tensor instead.")
        if keep_prob is None:
            keep_prob = 1 - rate if isinstance(rate, numbers.Real) else apply(
                "Sub", [np.asarray(1, x.dtype.np_type), _as_dtype_of(rate, x, "rate")])
        keep = _as_dtype_of(keep_prob, x, "keep_prob")
        if not keep.shape.is_compatible_with(TensorShape([])):
            raise ValueError(f"keep_prob must be a scalar, got shape {keep.shape}")
        known = constant_value(keep)
        if known is not None and known == 1:
            return x
        noise = random_uniform(_noise_shape(x, noise_shape), seed=seed, dtype=x.dtype)
        mask = apply("Floor", [apply("AddV2", [keep, noise])])
        out = apply("Mul", [apply("RealDiv", [x, keep]), mask], name=scope)
        out.set_shape(x.shape)
        return out


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None,
                 dim: Any = None) -> Tensor:
    """``x / sqrt(max(sum(x ** 2, axis), epsilon))``."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = _math.reduce_sum(apply("Square", [x]), axis, keepdims=True)
        inv_norm = apply("Rsqrt", [apply("Maximum", [square_sum, epsilon])])
        return apply("Mul", [x, inv_norm], name=scope)


def moments(x: Any, axes: Any, shift: Any = None, name: str | None = None,
            keep_dims: bool | None = None, keepdims: bool | None = None) -> tuple[Tensor, Tensor]:
    """Mean and variance of `x` over `axes` (float16 is computed in float32)."""
    keep = bool(deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims))
    with name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x)
        y = _math.cast(x, dtypes.float32) if x.dtype == dtypes.float16 else x
        mean = _math.reduce_mean(y, axes, keepdims=True, name="mean")
        deviation = apply("SquaredDifference", [y, apply("StopGradient", [mean])])
        variance = _math.reduce_mean(deviation, axes, keepdims=True, name="variance")
        if not keep:
            mean, variance = _array.squeeze(mean, axes), _array.squeeze(variance, axes)
        if x.dtype == dtypes.float16:
            return _math.cast(mean, dtypes.float16), _math.cast(variance, dtypes.float16)
        return mean, variance


def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any,
                        variance_epsilon: float, name: str | None = None) -> Tensor:
    """``(x - mean) * scale / sqrt(variance + variance_epsilon) + offset``; `offset` and
    `scale` may be None."""
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]) as scope:
        x = convert_to_tensor(x)
        mean, variance = _as_dtype_of(mean, x, "mean"), _as_dtype_of(variance, x, "variance")
        inv = apply("Rsqrt", [apply("AddV2", [variance, variance_epsilon])])
        if scale is not None:
            inv = apply("Mul", [inv, _as_dtype_of(scale, x, "scale")])
        shift = apply("Mul", [mean, inv])
        shift = apply("Sub", [_as_dtype_of(offset, x, "offset"), shift]) if offset is not None \
            else apply("Neg", [shift])
        return apply("AddV2", [apply("Mul", [x, inv]), shift], name=scope)


def _clip_rows(rows: Tensor, ids: Tensor, max_norm: Any) -> Tensor:
    """Rescale each embedding (the dims beyond `ids`' rank) to an L2 norm <= `max_norm`."""
    if max_norm is None:
        return rows
    if rows.shape.ndims is None or ids.shape.ndims is None:
        raise ValueError("embedding_lookup with max_norm needs params and ids of known rank")
    axes = list(range(ids.shape.ndims, rows.shape.ndims))
    norm = apply("Sqrt", [_math.reduce_sum(apply("Square", [rows]), axes, keepdims=True)])
    limit = convert_to_tensor(max_norm, dtype=rows.dtype)
    return apply("RealDiv", [apply("Mul", [rows, limit]), apply("Maximum", [norm, limit])])


@dispatch.dispatchable
def embedding_lookup(params: Any, ids: Any, partition_strategy: str = "mod",
                     name: str | None = None, validate_indices: bool = True,
                     max_norm: Any = None) -> Tensor:
    """The rows of `params` at `ids`; a list of shards is one table split by TF's "mod" or
    "div" `partition_strategy`."""
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")
    # a PartitionedVariable is its list of shards, as in TF
    shards = list(params) if isinstance(params, (list, tuple)) or hasattr(
        params, "_get_variable_list") else [params]
    if not shards:
        raise ValueError("Need at least one param")
    with name_scope(name, "embedding_lookup", [*shards, ids]) as scope:
        # a resource variable stays one, so its rows are read by `sparse_read`
        shards = [p if hasattr(p, "sparse_read") else convert_to_tensor(p, name="params")
                  for p in shards]
        ids = convert_to_tensor(ids, name="ids")
        if len(shards) == 1:
            with colocate_with(shards[0]):
                rows = _array.gather(shards[0], ids, name=scope)
                return apply("Identity", [_clip_rows(rows, ids, max_norm)])
        # each shard gathered where it lives: no shard is copied whole, and each one's
        # gradient stays an IndexedSlices of the rows it served
        from tensorweave.api.partitioned_variables import embedding_lookup_shards

        rows = embedding_lookup_shards(shards, ids, partition_strategy)
        return _clip_rows(apply("Identity", [rows], name=scope), ids, max_norm)


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of zeros in `value`, as a float32 scalar."""
    with name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        zero = convert_to_tensor(0, dtype=value.dtype, name="zero")
        return _math.reduce_mean(_math.cast(apply("Equal", [value, zero]), dtypes.float32))


def xw_plus_b(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """``matmul(x, weights) + biases``."""
    with name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        product = apply("MatMul", [x, weights])
        return bias_add(product, biases, name=scope)
