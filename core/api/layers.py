"""``tw.layers``: the functional layers of ``tf.compat.v1.layers``.

Contract: each function scopes its variables and ops as TF1's legacy layers do: without a `name`
it opens ``variable_scope(None, default_name=<layer>)``, so layers are ``dense``, ``dense_1``, ...
inside the enclosing variable scope (whose reuse they inherit); with a `name` (or `reuse`) it
opens ``variable_scope(name or <layer>, reuse=reuse)``. Variables come from `get_variable`
(``dense/kernel``, ``dense/bias``, ``conv2d/kernel``, ``batch_normalization/gamma``, ...) with
TF's default initializers; a weight regularizer's loss lands in ``REGULARIZATION_LOSSES`` when its
variable is created, an activity regularizer's (divided by the batch size) on every call. Inputs
are checked at construction with TF's `ValueError`/`TypeError`. Images are ``channels_last``:
``channels_first`` raises `ValueError` (tensorweave's Conv2D and pooling kernels are NHWC only).
A `training` flag may be a Python bool or a bool tensor; a tensor selects between the training and
inference results with ``SelectV2``, so both are computed.
``batch_normalization`` computes the moments and the normalization as ops (no
``FusedBatchNorm``); when TF would use its fused kernel (4-D input, channel axis 1 or 3, float16/32)
the moving variance is updated with the Bessel-corrected batch variance, as the fused kernel does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from tensorweave import dtypes
from tensorweave.api import array_ops, init_ops, math_ops, nn_ops, state_ops
from tensorweave.api.control_flow_ops import identity
from tensorweave.api.scopes import colocate_with, name_scope
from tensorweave.api.variable_scope import get_variable, variable_scope
from tensorweave.framework.constant_op import convert_to_tensor, is_tensor_like
from tensorweave.framework.graph import GraphKeys, Tensor, constant_value, get_default_graph
from tensorweave.variables import Variable

__all__ = [
    "average_pooling2d", "batch_normalization", "conv2d", "dense", "dropout", "flatten",
    "max_pooling2d",
]

Activation = Callable[[Tensor], Tensor] | None


# -- shared machinery ----------------------------------------------------------------------------


@contextlib.contextmanager
def _layer_scope(name: str | None, base_name: str, reuse: Any, inputs: Tensor) -> Iterator[None]:
    """The variable scope (and its name scope) a TF1 layer builds in."""
    if reuse:
        scope = variable_scope(name or base_name, reuse=reuse, values=[inputs])
    else:
        scope = variable_scope(name, default_name=base_name, values=[inputs])
    with scope:
        yield


def _weight(name: str, shape: Sequence[int], dtype: dtypes.DType, initializer: Any,
            regularizer: Any, constraint: Any, trainable: bool) -> Variable:
    return get_variable(name, shape=list(shape), dtype=dtype, initializer=initializer,
                        regularizer=regularizer, constraint=constraint, trainable=trainable)


def _activity_loss(regularizer: Any, outputs: Tensor) -> None:
    """TF's batch-size-agnostic activity regularization: ``regularizer(outputs) / batch``."""
    if regularizer is None:
        return
    with name_scope("ActivityRegularizer"):
        loss = convert_to_tensor(regularizer(outputs))
        batch = math_ops.cast(array_ops.shape(outputs)[0], loss.dtype)
        get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES,
                                              math_ops.truediv(loss, batch))


def _input(inputs: Any, layer: str, ndim: int | None = None, min_ndim: int | None = None) -> Tensor:
    """`inputs` as a tensor, checked against the layer's input spec."""
    inputs = convert_to_tensor(inputs)
    rank = inputs.shape.ndims
    if rank is None:
        return inputs
    if ndim is not None and rank != ndim:
        raise ValueError(f"Input 0 of layer {layer} is incompatible with the layer: expected "
                         f"ndim={ndim}, found ndim={rank}. Full shape received: "
                         f"{inputs.shape.as_list()}")
    if min_ndim is not None and rank < min_ndim:
        raise ValueError(f"Input 0 of layer {layer} is incompatible with the layer: expected "
                         f"min_ndim={min_ndim}, found ndim={rank}. Full shape received: "
                         f"{inputs.shape.as_list()}")
    return inputs


def _floating(inputs: Tensor, layer: str) -> dtypes.DType:
    if not inputs.dtype.is_floating:
        raise TypeError(f"Unable to build `{layer}` layer with non-floating point dtype "
                        f"{inputs.dtype.name}")
    return inputs.dtype


def _normalize_tuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    try:
        values = tuple(value)
    except TypeError:
        values = ()
    if len(values) != n or not all(isinstance(v, (int, np.integer)) for v in values):
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                         f"Received: {value}")
    return tuple(int(v) for v in values)


def _padding(padding: Any) -> str:
    value = padding.lower() if isinstance(padding, str) else padding
    if value not in ("valid", "same"):
        raise ValueError(f'The `padding` argument must be one of "valid", "same". '
                         f"Received: {padding}")
    return value.upper()


def _channels_last(data_format: Any, layer: str) -> None:
    value = data_format.lower() if isinstance(data_format, str) else data_format
    if value not in ("channels_first", "channels_last"):
        raise ValueError(f'The `data_format` argument must be one of "channels_first", '
                         f'"channels_last". Received: {data_format}')
    if value == "channels_first":
        raise ValueError(f"{layer} supports data_format 'channels_last' only: tensorweave's "
                         "image kernels are NHWC (as TF's CPU kernels are)")


def _static_training(training: Any) -> bool | None:
    """A Python bool for a flag known at construction, ``None`` for a bool tensor."""
    if not is_tensor_like(training):
        if training not in (True, False, 0, 1):
            raise TypeError(f"`training` must be a Python bool, 1 or 0, or a bool Tensor. "
                            f"Found instead: {training!r}")
        return bool(training)
    tensor = convert_to_tensor(training)
    if tensor.dtype != dtypes.bool_:
        raise TypeError(f"`training` must be a bool Tensor, got a {tensor.dtype.name} tensor")
    value = constant_value(tensor)
    return None if value is None else bool(value)


def _select(training: Any, if_true: Tensor, if_false: Tensor) -> Tensor:
    return array_ops.where_v2(convert_to_tensor(training), if_true, if_false)


# -- dense and convolution -----------------------------------------------------------------------


def dense(inputs: Any, units: int, activation: Activation = None, use_bias: bool = True,
          kernel_initializer: Any = None,
          bias_initializer: Any = init_ops.zeros_initializer(),  # noqa: B008 - TF's default
          kernel_regularizer: Any = None, bias_regularizer: Any = None,
          activity_regularizer: Any = None, kernel_constraint: Any = None,
          bias_constraint: Any = None, trainable: bool = True, name: str | None = None,
          reuse: Any = None) -> Tensor:
    """``activation(inputs @ kernel + bias)`` over the last axis of `inputs`, with a
    ``[input_dim, units]`` kernel."""
    inputs = _input(inputs, "dense", min_ndim=2)
    units = int(units)
    if units < 1:
        raise ValueError(f"Received an invalid value for `units`, expected a positive "
                         f"integer, got {units}.")
    dtype = _floating(inputs, "Dense")
    last = inputs.shape[-1] if inputs.shape.ndims is not None else None
    if last is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                         "Found `None`.")
    with _layer_scope(name, "dense", reuse, inputs):
        kernel = _weight("kernel", [last, units], dtype, kernel_initializer, kernel_regularizer,
                         kernel_constraint, trainable)
        bias = _weight("bias", [units], dtype, bias_initializer, bias_regularizer,
                       bias_constraint, trainable) if use_bias else None
        rank = inputs.shape.ndims
        if rank == 2:
            outputs = math_ops.matmul(inputs, kernel)
        else:
            outputs = math_ops.tensordot(inputs, kernel, [[rank - 1], [0]])
            outputs.set_shape(inputs.shape[:-1].concatenate([units]))
        if bias is not None:
            outputs = nn_ops.bias_add(outputs, bias)
        if activation is not None:
            outputs = activation(outputs)
        _activity_loss(activity_regularizer, outputs)
        return outputs


def conv2d(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1),
           padding: str = "valid", data_format: str = "channels_last",
           dilation_rate: Any = (1, 1), activation: Activation = None, use_bias: bool = True,
           kernel_initializer: Any = None,
           bias_initializer: Any = init_ops.zeros_initializer(),  # noqa: B008 - TF's default
           kernel_regularizer: Any = None, bias_regularizer: Any = None,
           activity_regularizer: Any = None, kernel_constraint: Any = None,
           bias_constraint: Any = None, trainable: bool = True, name: str | None = None,
           reuse: Any = None) -> Tensor:
    """2-D convolution of NHWC `inputs` with a ``kernel_size + [channels, filters]`` kernel,
    plus a bias, through `activation`."""
    kernel_size = _normalize_tuple(kernel_size, 2, "kernel_size")
    strides = _normalize_tuple(strides, 2, "strides")
    dilation_rate = _normalize_tuple(dilation_rate, 2, "dilation_rate")
    padding = _padding(padding)
    _channels_last(data_format, "conv2d")
    inputs = _input(inputs, "conv2d", ndim=4)
    dtype = _floating(inputs, "Conv2D")
    channels = inputs.shape[-1] if inputs.shape.ndims is not None else None
    if channels is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    with _layer_scope(name, "conv2d", reuse, inputs):
        kernel = _weight("kernel", [*kernel_size, channels, int(filters)], dtype,
                         kernel_initializer, kernel_regularizer, kernel_constraint, trainable)
        bias = _weight("bias", [int(filters)], dtype, bias_initializer, bias_regularizer,
                       bias_constraint, trainable) if use_bias else None
        outputs = nn_ops.conv2d(inputs, kernel, strides=list(strides), padding=padding,
                                dilations=list(dilation_rate), name="Conv2D")
        if bias is not None:
            outputs = nn_ops.bias_add(outputs, bias, data_format="NHWC")
        if activation is not None:
            outputs = activation(outputs)
        _activity_loss(activity_regularizer, outputs)
        return outputs


# -- pooling and reshaping -----------------------------------------------------------------------


def _pooling(pool: Callable[..., Tensor], layer: str, inputs: Any, pool_size: Any,
             strides: Any, padding: str, data_format: str, name: str | None) -> Tensor:
    pool_size = _normalize_tuple(pool_size, 2, "pool_size")
    strides = _normalize_tuple(strides, 2, "strides")
    padding = _padding(padding)
    _channels_last(data_format, layer)
    inputs = _input(inputs, layer, ndim=4)
    with _layer_scope(name, layer, None, inputs):
        return pool(inputs, ksize=[1, *pool_size, 1], strides=[1, *strides, 1],
                    padding=padding, data_format="NHWC")


def max_pooling2d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                  data_format: str = "channels_last", name: str | None = None) -> Tensor:
    """The maximum over each `pool_size` window of NHWC `inputs`."""
    return _pooling(nn_ops.max_pool, "max_pooling2d", inputs, pool_size, strides, padding,
                    data_format, name)


def average_pooling2d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                      data_format: str = "channels_last", name: str | None = None) -> Tensor:
    """The mean over each `pool_size` window of NHWC `inputs`."""
    return _pooling(nn_ops.avg_pool, "average_pooling2d", inputs, pool_size, strides, padding,
                    data_format, name)


def flatten(inputs: Any, name: str | None = None, data_format: str = "channels_last") -> Tensor:
    """`inputs` reshaped to ``[batch, everything else]``."""
    _channels_last(data_format, "flatten")
    inputs = _input(inputs, "flatten", min_ndim=1)
    with _layer_scope(name, "flatten", None, inputs):
        shape = inputs.shape
        if shape.ndims is not None and shape[1:].is_fully_defined():
            flat = int(np.prod(shape[1:].as_list(), dtype=np.int64))
            out_dtype = np.int64 if flat > np.iinfo(np.int32).max else np.int32
            return array_ops.reshape(inputs, np.array([-1, flat], out_dtype))
        batch = array_ops.shape(inputs)[0]
        outputs = array_ops.reshape(inputs, array_ops.stack([batch, -1]))
        if shape.ndims is not None:
            rest = shape[1:].num_elements()
            outputs.set_shape([shape[0], rest])
        return outputs


def dropout(inputs: Any, rate: Any = 0.5, noise_shape: Any = None, seed: int | None = None,
            training: Any = False, name: str | None = None) -> Tensor:
    """``tw.nn.dropout(inputs, rate=rate)`` when `training`, else `inputs` unchanged."""
    inputs = convert_to_tensor(inputs)
    mode = _static_training(training)
    with _layer_scope(name, "dropout", None, inputs):
        if mode is False:
            return identity(inputs)
        dropped = nn_ops.dropout(inputs, noise_shape=noise_shape, seed=seed, rate=rate)
        if mode is True:
            return dropped
        return _select(training, dropped, identity(inputs))


# -- batch normalization -------------------------------------------------------------------------


def _bn_axes(axis: Any, ndims: int) -> list[int]:
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    resolved = []
    for a in axes:
        if not -ndims <= int(a) < ndims:
            raise ValueError(f"Invalid axis: {a}")
        resolved.append(int(a) % ndims)
    if len(set(resolved)) != len(resolved):
        raise ValueError(f"Duplicate axis: {axes}")
    return resolved


def _fused(fused: bool | None, ndims: int, axes: list[int], dtype: dtypes.DType) -> bool:
    """Whether TF would take its fused kernel, which decides the moving-variance update."""
    usable = ndims == 4 and axes in ([1], [3]) and dtype in (dtypes.float16, dtypes.float32)
    if fused and not usable:
        raise ValueError("Passing fused=True is only supported for 4-D float16/float32 inputs "
                         "with axis 1 or 3")
    return usable if fused is None else bool(fused)


def _bessel_factor(inputs: Tensor, variance: Tensor) -> Any:
    """``n / (n - 1)`` for the ``n`` elements behind each variance (TF's fused kernel keeps
    ``n = 1`` finite)."""
    count = inputs.shape.num_elements()
    if count is not None and variance.shape.num_elements():
        n = count // variance.shape.num_elements()
        return np.asarray(n / max(n - 1, 1), variance.dtype.np_type)
    n = math_ops.cast(math_ops.truediv(array_ops.size(inputs), array_ops.size(variance)),
                      variance.dtype)
    return math_ops.truediv(n, math_ops.maximum(n - 1, 1))


def _assign_moving_average(variable: Variable, value: Tensor, momentum: float) -> Tensor:
    """``variable -= (variable - value) * (1 - momentum)``, as TF's op ``AssignMovingAvg``."""
    with name_scope("AssignMovingAvg") as scope, colocate_with(variable.op):
        decay = convert_to_tensor(np.asarray(1.0 - momentum, variable.dtype.np_type),
                                  name="decay")
        delta = math_ops.multiply(math_ops.subtract(variable, value), decay)
        return state_ops.assign_sub(variable, delta, name=scope)


def batch_normalization(
        inputs: Any, axis: Any = -1, momentum: float = 0.99, epsilon: float = 1e-3,
        center: bool = True, scale: bool = True,
        beta_initializer: Any = init_ops.zeros_initializer(),  # noqa: B008 - TF's defaults
        gamma_initializer: Any = init_ops.ones_initializer(),  # noqa: B008
        moving_mean_initializer: Any = init_ops.zeros_initializer(),  # noqa: B008
        moving_variance_initializer: Any = init_ops.ones_initializer(),  # noqa: B008
        beta_regularizer: Any = None, gamma_regularizer: Any = None,
        beta_constraint: Any = None, gamma_constraint: Any = None, training: Any = False,
        trainable: bool = True, name: str | None = None, reuse: Any = None,
        renorm: bool = False, renorm_clipping: Any = None, renorm_momentum: float = 0.99,
        fused: bool | None = None, virtual_batch_size: int | None = None,
        adjustment: Any = None) -> Tensor:
    """Normalize `inputs` over all axes but `axis`: with the batch's moments when `training`
    (adding the moving-average updates to ``UPDATE_OPS``), else with the moving ones."""
    if renorm or virtual_batch_size is not None or adjustment is not None:
        raise ValueError("tensorweave's batch_normalization does not support renorm, "
                         "virtual_batch_size or adjustment")
    inputs = convert_to_tensor(inputs)
    ndims = inputs.shape.ndims
    if ndims is None:
        raise ValueError(f"Input has undefined rank: {inputs.shape}")
    axes = _bn_axes(axis, ndims)
    if any(inputs.shape[a] is None for a in axes):
        raise ValueError(f"Input has undefined `axis` dimension. Input shape: {inputs.shape}")
    _floating(inputs, "BatchNormalization")
    param_dtype = dtypes.float32 if inputs.dtype == dtypes.float16 else inputs.dtype
    bessel = _fused(fused, ndims, axes, inputs.dtype)
    if len(axes) == 1:
        param_shape = [inputs.shape[axes[0]]]
    else:
        param_shape = [inputs.shape[i] if i in axes else 1 for i in range(ndims)]
    mode = _static_training(training)
    reduction_axes = [i for i in range(ndims) if i not in axes]
    with _layer_scope(name, "batch_normalization", reuse, inputs):
        gamma = _weight("gamma", param_shape, param_dtype, gamma_initializer, gamma_regularizer,
                        gamma_constraint, trainable) if scale else None
        beta = _weight("beta", param_shape, param_dtype, beta_initializer, beta_regularizer,
                       beta_constraint, trainable) if center else None
        moving_mean = _weight("moving_mean", param_shape, param_dtype, moving_mean_initializer,
                              None, None, False)
        moving_variance = _weight("moving_variance", param_shape, param_dtype,
                                  moving_variance_initializer, None, None, False)
        if mode is False:
            mean, variance = moving_mean.value(), moving_variance.value()
        else:
            mean, variance = nn_ops.moments(math_ops.cast(inputs, param_dtype), reduction_axes,
                                            keepdims=len(axes) > 1)
            moving_target = variance
            if bessel:
                moving_target = math_ops.multiply(variance, _bessel_factor(inputs, variance))
            if mode is None:
                mean = _select(training, mean, moving_mean.value())
                variance = _select(training, variance, moving_variance.value())
                moving_target = _select(training, moving_target, moving_variance.value())
            graph = get_default_graph()
            graph.add_to_collection(GraphKeys.UPDATE_OPS,
                                    _assign_moving_average(moving_mean, mean, momentum))
            graph.add_to_collection(GraphKeys.UPDATE_OPS,
                                    _assign_moving_average(moving_variance, moving_target,
                                                           momentum))
        params = [mean, variance, beta, gamma]
        if len(axes) == 1 and axes[0] != ndims - 1:
            shape = [1] * ndims
            shape[axes[0]] = param_shape[0]
            params = [None if p is None else array_ops.reshape(p, shape) for p in params]
        params = [None if p is None else math_ops.cast(p, inputs.dtype) for p in params]
        outputs = nn_ops.batch_normalization(inputs, params[0], params[1], params[2], params[3],
                                             epsilon)
        outputs.set_shape(inputs.shape)
        return outputs

