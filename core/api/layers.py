from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api import array_ops, init_ops, math_ops, nn_ops, state_ops
from tensorweave.api.base_layer import Layer
from tensorweave.api.control_flow_ops import identity
from tensorweave.api.scopes import colocate_with, name_scope
from tensorweave.api.variables import Variable
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor, is_tensor_like
from tensorweave.engine.graph.graph import GraphKeys, Tensor, constant_value, get_default_graph

__all__ = [
    "AveragePooling2D", "BatchNormalization", "Conv2D", "Dense", "Dropout", "Flatten", "Layer",
    "MaxPooling2D", "average_pooling2d", "batch_normalization", "conv2d", "dense", "dropout",
    "flatten", "max_pooling2d",
]

Activation = Callable[[Tensor], Tensor] | None
_ZEROS = init_ops.zeros_initializer()
_ONES = init_ops.ones_initializer()


# -- shared machinery ----------------------------------------------------------------------------


def _weight(layer: Layer, name: str, shape: list[Any], args: tuple[Any, Any, Any],
            dtype: dtypes.DType | None = None) -> Variable:
    """A weight of `layer` from its ``(initializer, regularizer, constraint)``."""
    initializer, regularizer, constraint = args
    return layer.add_weight(name, list(shape), dtype, initializer, regularizer,
                            constraint=constraint)


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
    out = array_ops.where_v2(convert_to_tensor(training), if_true, if_false)
    # `training` is a scalar (TF builds a cond), so the branches' shape survives even when the
    # flag is fed through a placeholder of unknown shape.
    out.set_shape(if_true.shape.merge_with(if_false.shape))
    return out


# -- dense and convolution -----------------------------------------------------------------------


class Dense(Layer):
    """``activation(inputs @ kernel + bias)`` over the last axis of the inputs, with a
    ``[input_dim, units]`` kernel."""

    def __init__(self, units: int, activation: Activation = None, use_bias: bool = True,
                 kernel_initializer: Any = None, bias_initializer: Any = _ZEROS,
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, trainable: bool = True, name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        if self.units < 1:
            raise ValueError(f"Received an invalid value for `units`, expected a positive "
                             f"integer, got {units}.")
        self.activation = activation
        self.use_bias = use_bias
        self._kernel_args = (kernel_initializer, kernel_regularizer, kernel_constraint)
        self._bias_args = (bias_initializer, bias_regularizer, bias_constraint)

    def _checked(self, inputs: Any) -> Tensor:
        inputs = _input(inputs, "dense", min_ndim=2)
        _floating(inputs, "Dense")
        return inputs

    def build(self, input_shape: Any) -> None:
        last = input_shape[-1] if input_shape.ndims is not None else None
        if last is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                             "Found `None`.")
        self.kernel = _weight(self, "kernel", [last, self.units], self._kernel_args)
        self.bias = _weight(self, "bias", [self.units], self._bias_args) \
            if self.use_bias else None

    def call(self, inputs: Tensor) -> Tensor:
        rank = inputs.shape.ndims
        if rank == 2:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:
            outputs = math_ops.tensordot(inputs, self.kernel, [[rank - 1], [0]])
            outputs.set_shape(inputs.shape[:-1].concatenate([self.units]))
        if self.bias is not None:
            outputs = nn_ops.bias_add(outputs, self.bias)
        return outputs if self.activation is None else self.activation(outputs)


class Conv2D(Layer):
    """2-D convolution of NHWC inputs with a ``kernel_size + [channels, filters]`` kernel,
    plus a bias, through `activation`."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1),
                 padding: str = "valid", data_format: str = "channels_last",
                 dilation_rate: Any = (1, 1), activation: Activation = None,
                 use_bias: bool = True, kernel_initializer: Any = None,
                 bias_initializer: Any = _ZEROS, kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None,
                 trainable: bool = True, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        self.kernel_size = _normalize_tuple(kernel_size, 2, "kernel_size")
        self.strides = _normalize_tuple(strides, 2, "strides")
        self.dilation_rate = _normalize_tuple(dilation_rate, 2, "dilation_rate")
        self.padding = _padding(padding)
        _channels_last(data_format, "conv2d")
        self.activation = activation
        self.use_bias = use_bias
        self._kernel_args = (kernel_initializer, kernel_regularizer, kernel_constraint)
        self._bias_args = (bias_initializer, bias_regularizer, bias_constraint)

    def _checked(self, inputs: Any) -> Tensor:
        inputs = _input(inputs, "conv2d", ndim=4)
        _floating(inputs, "Conv2D")
        return inputs

    def build(self, input_shape: Any) -> None:
        channels = input_shape[-1] if input_shape.ndims is not None else None
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found "
                             "`None`.")
        self.kernel = _weight(self, "kernel", [*self.kernel_size, channels, self.filters],
                              self._kernel_args)
        self.bias = _weight(self, "bias", [self.filters], self._bias_args) \
            if self.use_bias else None

    def call(self, inputs: Tensor) -> Tensor:
        outputs = nn_ops.conv2d(inputs, self.kernel, strides=list(self.strides),
                                padding=self.padding, dilations=list(self.dilation_rate),
                                name="Conv2D")
        if self.bias is not None:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format="NHWC")
        return outputs if self.activation is None else self.activation(outputs)


def dense(inputs: Any, units: int, activation: Activation = None, use_bias: bool = True,
          kernel_initializer: Any = None, bias_initializer: Any = _ZEROS,
          kernel_regularizer: Any = None, bias_regularizer: Any = None,
          activity_regularizer: Any = None, kernel_constraint: Any = None,
          bias_constraint: Any = None, trainable: bool = True, name: str | None = None,
          reuse: Any = None) -> Tensor:
    """A `Dense` layer applied to `inputs` (see the module docstring for its scope)."""
    return Dense(units, activation, use_bias, kernel_initializer, bias_initializer,
                 kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
                 bias_constraint, trainable, name, _scope=name, _reuse=reuse).apply(inputs)


def conv2d(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1),
           padding: str = "valid", data_format: str = "channels_last",
           dilation_rate: Any = (1, 1), activation: Activation = None, use_bias: bool = True,
           kernel_initializer: Any = None, bias_initializer: Any = _ZEROS,
           kernel_regularizer: Any = None, bias_regularizer: Any = None,
           activity_regularizer: Any = None, kernel_constraint: Any = None,
           bias_constraint: Any = None, trainable: bool = True, name: str | None = None,
           reuse: Any = None) -> Tensor:
    """A `Conv2D` layer applied to NHWC `inputs`."""
    return Conv2D(filters, kernel_size, strides, padding, data_format, dilation_rate,
                  activation, use_bias, kernel_initializer, bias_initializer,
                  kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
                  bias_constraint, trainable, name, _scope=name, _reuse=reuse).apply(inputs)


# -- pooling and reshaping -----------------------------------------------------------------------


class _Pooling2D(Layer):
    _pool: Callable[..., Tensor]

    def __init__(self, pool_size: Any, strides: Any, padding: str = "valid",
                 data_format: str = "channels_last", name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.pool_size = _normalize_tuple(pool_size, 2, "pool_size")
        self.strides = _normalize_tuple(strides, 2, "strides")
        self.padding = _padding(padding)
        _channels_last(data_format, self._base_name)

    def _checked(self, inputs: Any) -> Tensor:
        return _input(inputs, self._base_name, ndim=4)

    def call(self, inputs: Tensor) -> Tensor:
        return type(self)._pool(inputs, ksize=[1, *self.pool_size, 1],
                                strides=[1, *self.strides, 1], padding=self.padding,
                                data_format="NHWC")


class MaxPooling2D(_Pooling2D):
    """The maximum over each `pool_size` window of NHWC inputs."""

    _pool = nn_ops.max_pool


class AveragePooling2D(_Pooling2D):
    """The mean over each `pool_size` window of NHWC inputs."""

    _pool = nn_ops.avg_pool


def max_pooling2d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                  data_format: str = "channels_last", name: str | None = None) -> Tensor:
    """A `MaxPooling2D` layer applied to NHWC `inputs`."""
    return MaxPooling2D(pool_size, strides, padding, data_format, name,
                        _scope=name).apply(inputs)


def average_pooling2d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                      data_format: str = "channels_last", name: str | None = None) -> Tensor:
    """An `AveragePooling2D` layer applied to NHWC `inputs`."""
    return AveragePooling2D(pool_size, strides, padding, data_format, name,
                            _scope=name).apply(inputs)


class Flatten(Layer):
    """The inputs reshaped to ``[batch, everything else]``."""

    def __init__(self, data_format: str = "channels_last", name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        _channels_last(data_format, "flatten")

    def _checked(self, inputs: Any) -> Tensor:
        return _input(inputs, "flatten", min_ndim=1)

    def call(self, inputs: Tensor) -> Tensor:
        shape = inputs.shape
        if shape.ndims is not None and shape[1:].is_fully_defined():
            flat = int(np.prod(shape[1:].as_list(), dtype=np.int64))
            out_dtype = np.int64 if flat > np.iinfo(np.int32).max else np.int32
            return array_ops.reshape(inputs, np.array([-1, flat], out_dtype))
        batch = array_ops.shape(inputs)[0]
        outputs = array_ops.reshape(inputs, array_ops.stack([batch, -1]))
        if shape.ndims is not None:
            outputs.set_shape([shape[0], shape[1:].num_elements()])
        return outputs


def flatten(inputs: Any, name: str | None = None, data_format: str = "channels_last") -> Tensor:
    """A `Flatten` layer applied to `inputs`."""
    return Flatten(data_format, name, _scope=name).apply(inputs)


class Dropout(Layer):
    """``tw.nn.dropout(inputs, rate=rate)`` when called with `training`, else the inputs
    unchanged."""

    def __init__(self, rate: Any = 0.5, noise_shape: Any = None, seed: int | None = None,
                 name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def _checked(self, inputs: Any) -> Tensor:
        return convert_to_tensor(inputs)

    def call(self, inputs: Tensor, training: Any = False) -> Tensor:
        mode = _static_training(training)
        if mode is False:
            return identity(inputs)
        dropped = nn_ops.dropout(inputs, noise_shape=self.noise_shape, seed=self.seed,
                                 rate=self.rate)
        if mode is True:
            return dropped
        return _select(training, dropped, identity(inputs))


def dropout(inputs: Any, rate: Any = 0.5, noise_shape: Any = None, seed: int | None = None,
            training: Any = False, name: str | None = None) -> Tensor:
    """A `Dropout` layer applied to `inputs`."""
    return Dropout(rate, noise_shape, seed, name, _scope=name).apply(inputs, training=training)


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


class BatchNormalization(Layer):
    """Normalize over all axes but `axis`: with the batch's moments when called with
    `training` (adding the moving-average updates to ``UPDATE_OPS``), else with the moving
    ones."""

    def __init__(self, axis: Any = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, beta_initializer: Any = _ZEROS,
                 gamma_initializer: Any = _ONES, moving_mean_initializer: Any = _ZEROS,
                 moving_variance_initializer: Any = _ONES, beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, renorm: bool = False,
                 renorm_clipping: Any = None, renorm_momentum: float = 0.99,
                 fused: bool | None = None, trainable: bool = True,
                 virtual_batch_size: int | None = None, adjustment: Any = None,
                 name: str | None = None, **kwargs: Any) -> None:
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise ValueError("tensorweave's batch_normalization does not support renorm, "
                             "virtual_batch_size or adjustment")
        self.axis, self.momentum, self.epsilon = axis, momentum, epsilon
        self.center, self.scale, self.fused = center, scale, fused
        self._beta_args = (beta_initializer, beta_regularizer, beta_constraint)
        self._gamma_args = (gamma_initializer, gamma_regularizer, gamma_constraint)
        self._moving_mean_init = moving_mean_initializer
        self._moving_variance_init = moving_variance_initializer

    def _checked(self, inputs: Any) -> Tensor:
        inputs = convert_to_tensor(inputs)
        ndims = inputs.shape.ndims
        if ndims is None:
            raise ValueError(f"Input has undefined rank: {inputs.shape}")
        axes = _bn_axes(self.axis, ndims)
        if any(inputs.shape[a] is None for a in axes):
            raise ValueError(f"Input has undefined `axis` dimension. Input shape: "
                             f"{inputs.shape}")
        _floating(inputs, "BatchNormalization")
        return inputs

    def build(self, input_shape: Any) -> None:
        ndims = input_shape.ndims
        self._axes = _bn_axes(self.axis, ndims)
        self._bessel = _fused(self.fused, ndims, self._axes, self._dtype)
        param_dtype = dtypes.float32 if self._dtype == dtypes.float16 else self._dtype
        if len(self._axes) == 1:
            shape = [input_shape[self._axes[0]]]
        else:
            shape = [input_shape[i] if i in self._axes else 1 for i in range(ndims)]
        self.gamma = _weight(self, "gamma", shape, self._gamma_args, param_dtype) \
            if self.scale else None
        self.beta = _weight(self, "beta", shape, self._beta_args, param_dtype) \
            if self.center else None
        self.moving_mean = self.add_weight("moving_mean", shape, param_dtype,
                                           self._moving_mean_init, trainable=False)
        self.moving_variance = self.add_weight("moving_variance", shape, param_dtype,
                                               self._moving_variance_init, trainable=False)

    def call(self, inputs: Tensor, training: Any = False) -> Tensor:
        ndims, axes = inputs.shape.ndims, self._axes
        moving_mean, moving_variance = self.moving_mean, self.moving_variance
        param_dtype = moving_mean.dtype
        mode = _static_training(training)
        if mode is False:
            mean, variance = moving_mean.value(), moving_variance.value()
        else:
            reduction_axes = [i for i in range(ndims) if i not in axes]
            mean, variance = nn_ops.moments(math_ops.cast(inputs, param_dtype), reduction_axes,
                                            keepdims=len(axes) > 1)
            moving_target = variance
            if self._bessel:
                moving_target = math_ops.multiply(variance, _bessel_factor(inputs, variance))
            if mode is None:
                mean = _select(training, mean, moving_mean.value())
                variance = _select(training, variance, moving_variance.value())
                moving_target = _select(training, moving_target, moving_variance.value())
            graph = get_default_graph()
            # TF's layers collect the updates' operations (Layer.add_update takes `.op`)
            graph.add_to_collection(GraphKeys.UPDATE_OPS,
                                    _assign_moving_average(moving_mean, mean, self.momentum).op)
            graph.add_to_collection(GraphKeys.UPDATE_OPS,
                                    _assign_moving_average(moving_variance, moving_target,
                                                           self.momentum).op)
        params = [mean, variance, self.beta, self.gamma]
        if len(axes) == 1 and axes[0] != ndims - 1:
            shape = [1] * ndims
            shape[axes[0]] = moving_mean.shape[0]
            params = [None if p is None else array_ops.reshape(p, shape) for p in params]
        params = [None if p is None else math_ops.cast(p, inputs.dtype) for p in params]
        outputs = nn_ops.batch_normalization(inputs, params[0], params[1], params[2], params[3],
                                             self.epsilon)
        outputs.set_shape(inputs.shape)
        return outputs


def batch_normalization(
        inputs: Any, axis: Any = -1, momentum: float = 0.99, epsilon: float = 1e-3,
        center: bool = True, scale: bool = True, beta_initializer: Any = _ZEROS,
        gamma_initializer: Any = _ONES, moving_mean_initializer: Any = _ZEROS,
        moving_variance_initializer: Any = _ONES, beta_regularizer: Any = None,
        gamma_regularizer: Any = None, beta_constraint: Any = None,
        gamma_constraint: Any = None, training: Any = False, trainable: bool = True,
        name: str | None = None, reuse: Any = None, renorm: bool = False,
        renorm_clipping: Any = None, renorm_momentum: float = 0.99, fused: bool | None = None,
        virtual_batch_size: int | None = None, adjustment: Any = None) -> Tensor:
    """A `BatchNormalization` layer applied to `inputs`."""
    layer = BatchNormalization(
        axis, momentum, epsilon, center, scale, beta_initializer, gamma_initializer,
        moving_mean_initializer, moving_variance_initializer, beta_regularizer,
        gamma_regularizer, beta_constraint, gamma_constraint, renorm, renorm_clipping,
        renorm_momentum, fused, trainable, virtual_batch_size, adjustment, name, _scope=name,
        _reuse=reuse)
    return layer.apply(inputs, training=training)
