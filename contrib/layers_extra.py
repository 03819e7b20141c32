"""The rest of ``tf.contrib.layers``' functional layers that slim models use: transposed,
separable and in-plane convolutions, ``layer_norm``, ``bias_add``, ``softmax``, ``unit_norm``,
``one_hot_encoding``, and the ``repeat``/``stack`` combinators.

Contract: each layer opens contrib's variable scope for it (``Conv2d_transpose``,
``SeparableConv2d``, ``ConvInPlane``, ``LayerNorm``, ``BiasAdd``; or `scope`), creates model
variables with contrib's names (``weights``, ``depthwise_weights``, ``pointwise_weights``,
``biases``, ``beta``, ``gamma``), applies `normalizer_fn` (then no bias) and `activation_fn`, and
adds its output to `outputs_collections` aliased by its scope name, as `tensorweave.contrib.
layers`' layers do. ``separable_conv2d`` with ``num_outputs=None`` is the depthwise step only.
``repeat(x, n, layer, ...)`` and ``stack(x, layer, [args...])`` chain `layer` in a variable
scope `scope` (``Repeat``/``Stack`` by default), naming call ``i`` ``<scope>_<i>`` where
`scope` defaults to the layer's function name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tensorweave.api import array_ops, init_ops, math_ops, nn_conv_ops, nn_ops
from tensorweave.api.conv_transpose_layers import Conv2DTranspose
from tensorweave.api.scopes import name_scope
from tensorweave.api.variable_scope import variable_scope
from tensorweave.contrib.framework import add_arg_scope, model_variable
from tensorweave.contrib.layers import (
    _apply_weighted,
    _channels,
    _contrib_getter,
    _finish,
    _weights_args,
    xavier_initializer,
)
from tensorweave.contrib.layers_utils import (
    collect_named_outputs,
    get_variable_collections,
    two_element_tuple,
)
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "bias_add", "conv2d_in_plane", "conv2d_transpose", "convolution2d_in_plane",
    "convolution2d_transpose", "layer_norm", "one_hot_encoding", "repeat",
    "separable_conv2d", "separable_convolution2d", "softmax", "stack", "unit_norm",
]


def _rank4(inputs: Any, layer: str) -> Tensor:
    inputs = convert_to_tensor(inputs)
    if inputs.shape.ndims != 4:
        raise ValueError(f"{layer} expects input with rank 4, got {inputs.shape.ndims}")
    return inputs


def _channel_count(inputs: Tensor, data_format: str) -> int:
    value = inputs.shape.dims[1 if data_format.startswith("NC") else -1].value
    if value is None:
        raise ValueError(f"The channel dimension of the inputs {inputs.name} must be known.")
    return value


def _biases(num_outputs: int, dtype: Any, biases_initializer: Any, biases_regularizer: Any,
            variables_collections: Any, trainable: bool) -> Any:
    return model_variable("biases", shape=[num_outputs], dtype=dtype,
                          initializer=biases_initializer, regularizer=biases_regularizer,
                          collections=get_variable_collections(variables_collections, "biases"),
                          trainable=trainable)


@add_arg_scope
def conv2d_transpose(inputs: Any, num_outputs: int, kernel_size: Any, stride: Any = 1,
                     padding: str = "SAME", data_format: str = "NHWC",
                     activation_fn: Any = nn_ops.relu, normalizer_fn: Any = None,
                     normalizer_params: Any = None, weights_initializer: Any = None,
                     weights_regularizer: Any = None,
                     biases_initializer: Any = init_ops.zeros_initializer(),
                     biases_regularizer: Any = None, reuse: Any = None,
                     variables_collections: Any = None, outputs_collections: Any = None,
                     trainable: bool = True, scope: Any = None) -> Tensor:
    """The transpose of `conv2d` (its gradient with respect to the input): ``weights`` of
    shape ``kernel_size + [num_outputs, channels]``, plus ``biases``."""
    with variable_scope(scope, "Conv2d_transpose", [inputs], reuse=reuse,
                        custom_getter=_contrib_getter) as sc:
        inputs = _rank4(inputs, "Convolution")
        layer = Conv2DTranspose(num_outputs, kernel_size, strides=stride, padding=padding,
                                data_format=_channels(data_format, ("NHWC", "NCHW")),
                                **_weights_args(normalizer_fn, weights_initializer,
                                                weights_regularizer, biases_initializer,
                                                biases_regularizer),
                                trainable=trainable, dtype=inputs.dtype.base_dtype, _scope=sc,
                                _reuse=reuse)
        return _apply_weighted(layer, inputs, variables_collections, normalizer_fn,
                               normalizer_params, activation_fn, outputs_collections, sc.name)


convolution2d_transpose = conv2d_transpose


@add_arg_scope
def separable_conv2d(inputs: Any, num_outputs: int | None, kernel_size: Any,
                     depth_multiplier: int = 1, stride: Any = 1, padding: str = "SAME",
                     data_format: str = "NHWC", rate: Any = 1,
                     activation_fn: Any = nn_ops.relu, normalizer_fn: Any = None,
                     normalizer_params: Any = None, weights_initializer: Any = None,
                     pointwise_initializer: Any = None, weights_regularizer: Any = None,
                     biases_initializer: Any = init_ops.zeros_initializer(),
                     biases_regularizer: Any = None, reuse: Any = None,
                     variables_collections: Any = None, outputs_collections: Any = None,
                     trainable: bool = True, scope: Any = None) -> Tensor:
    """A depthwise convolution (``depthwise_weights``, `depth_multiplier` filters per channel)
    then, unless `num_outputs` is None, a 1x1 convolution (``pointwise_weights``), plus
    ``biases``."""
    _channels(data_format, ("NHWC", "NCHW"))
    weights_initializer = weights_initializer or xavier_initializer()
    with variable_scope(scope, "SeparableConv2d", [inputs], reuse=reuse) as sc:
        inputs = _rank4(inputs, "SeparableConv2d")
        dtype = inputs.dtype.base_dtype
        channels = _channel_count(inputs, data_format)
        kernel_h, kernel_w = two_element_tuple(kernel_size)
        stride_h, stride_w = two_element_tuple(stride)
        strides = [1, 1, stride_h, stride_w] if data_format == "NCHW" else \
            [1, stride_h, stride_w, 1]
        weights_collections = get_variable_collections(variables_collections, "weights")
        depthwise = model_variable("depthwise_weights",
                                   shape=[kernel_h, kernel_w, channels, depth_multiplier],
                                   dtype=dtype, initializer=weights_initializer,
                                   regularizer=weights_regularizer, trainable=trainable,
                                   collections=weights_collections)
        rates = list(two_element_tuple(rate))
        if num_outputs is None:
            outputs = nn_conv_ops.depthwise_conv2d(inputs, depthwise, strides, padding, rate=rates,
                                              data_format=data_format)
            num_outputs = channels * depth_multiplier
        else:
            pointwise = model_variable(
                "pointwise_weights", shape=[1, 1, channels * depth_multiplier, num_outputs],
                dtype=dtype, initializer=pointwise_initializer or weights_initializer,
                regularizer=weights_regularizer, trainable=trainable,
                collections=weights_collections)
            outputs = nn_conv_ops.separable_conv2d(inputs, depthwise, pointwise, strides, padding,
                                              rate=rates, data_format=data_format)
        if not normalizer_fn and biases_initializer:
            biases = _biases(num_outputs, dtype, biases_initializer, biases_regularizer,
                             variables_collections, trainable)
            outputs = nn_ops.bias_add(outputs, biases, data_format=data_format)
        return _finish(outputs, normalizer_fn, normalizer_params, activation_fn,
                       outputs_collections, sc.name)


separable_convolution2d = separable_conv2d


@add_arg_scope
def conv2d_in_plane(inputs: Any, kernel_size: Any, stride: Any = 1, padding: str = "SAME",
                    activation_fn: Any = nn_ops.relu, normalizer_fn: Any = None,
                    normalizer_params: Any = None, weights_initializer: Any = None,
                    weights_regularizer: Any = None,
                    biases_initializer: Any = init_ops.zeros_initializer(),
                    biases_regularizer: Any = None, reuse: Any = None,
                    variables_collections: Any = None, outputs_collections: Any = None,
                    trainable: bool = True, scope: Any = None) -> Tensor:
    """One ``kernel_size + [1, 1]`` filter (``weights``) convolved with every NHWC channel
    separately, plus per-channel ``biases``."""
    with variable_scope(scope, "ConvInPlane", [inputs], reuse=reuse) as sc:
        inputs = _rank4(inputs, "ConvInPlane")
        dtype = inputs.dtype.base_dtype
        channels = _channel_count(inputs, "NHWC")
        kernel_h, kernel_w = two_element_tuple(kernel_size)
        stride_h, stride_w = two_element_tuple(stride)
        weights = model_variable(
            "weights", shape=[kernel_h, kernel_w, 1, 1], dtype=dtype,
            initializer=weights_initializer or xavier_initializer(),
            regularizer=weights_regularizer, trainable=trainable,
            collections=get_variable_collections(variables_collections, "weights"))
        shared = array_ops.tile(weights, [1, 1, channels, 1])
        outputs = nn_conv_ops.depthwise_conv2d(inputs, shared, [1, stride_h, stride_w, 1], padding)
        if not normalizer_fn and biases_initializer:
            biases = _biases(channels, dtype, biases_initializer, biases_regularizer,
                             variables_collections, trainable)
            outputs = nn_ops.bias_add(outputs, biases)
        return _finish(outputs, normalizer_fn, normalizer_params, activation_fn,
                       outputs_collections, sc.name)


convolution2d_in_plane = conv2d_in_plane


@add_arg_scope
def layer_norm(inputs: Any, center: bool = True, scale: bool = True,
               activation_fn: Any = None, reuse: Any = None, variables_collections: Any = None,
               outputs_collections: Any = None, trainable: bool = True,
               begin_norm_axis: int = 1, begin_params_axis: int = -1,
               scope: Any = None) -> Tensor:
    """`inputs` normalized to zero mean and unit variance over the axes from
    `begin_norm_axis` on (epsilon 1e-12), times ``gamma`` plus ``beta`` of the shape of the
    axes from `begin_params_axis` on."""
    with variable_scope(scope, "LayerNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        shape = inputs.shape
        rank = shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        if begin_norm_axis < 0:
            begin_norm_axis += rank
        if begin_params_axis >= rank or begin_norm_axis >= rank:
            raise ValueError(f"begin_params_axis ({begin_params_axis}) and begin_norm_axis "
                             f"({begin_norm_axis}) must be < rank(inputs) ({rank})")
        params_shape = shape[begin_params_axis:]
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {inputs.name}: shape(inputs)[{begin_params_axis}:] is "
                             f"not fully defined: {params_shape}")
        dtype = inputs.dtype.base_dtype
        params: dict[str, Any] = {}
        for name, wanted, initializer in (("beta", center, init_ops.zeros_initializer()),
                                          ("gamma", scale, init_ops.ones_initializer())):
            if wanted:
                params[name] = model_variable(
                    name, shape=params_shape.as_list(), dtype=dtype, initializer=initializer,
                    trainable=trainable,
                    collections=get_variable_collections(variables_collections, name))
        mean, variance = nn_ops.moments(inputs, list(range(begin_norm_axis, rank)),
                                        keep_dims=True)
        outputs = nn_ops.batch_normalization(inputs, mean, variance, params.get("beta"),
                                             params.get("gamma"), variance_epsilon=1e-12)
        outputs.set_shape(shape)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def bias_add(inputs: Any, activation_fn: Any = None,
             initializer: Any = init_ops.zeros_initializer(), regularizer: Any = None,
             reuse: Any = None, variables_collections: Any = None,
             outputs_collections: Any = None, trainable: bool = True,
             data_format: str = "NHWC", scope: Any = None) -> Tensor:
    """`inputs` plus a ``biases`` model variable over the channel axis (last, or 1 for
    ``NCHW``), then `activation_fn`."""
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with variable_scope(scope, "BiasAdd", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError(f"Dims of shape must be known but is None: {inputs.name}")
        if rank == 1:
            raise ValueError(f"Data must be of rank at least 2: {inputs.name}")
        axis = 1 if data_format == "NCHW" else -1
        channels = inputs.shape.dims[axis].value
        if channels is None:
            raise ValueError(f"`C` dimension must be known but is None: {inputs.name}")
        biases = model_variable("biases", shape=[channels], dtype=inputs.dtype.base_dtype,
                                initializer=initializer, regularizer=regularizer,
                                collections=get_variable_collections(variables_collections,
                                                                     "biases"),
                                trainable=trainable)
        outputs = nn_ops.bias_add(inputs, biases, data_format=data_format)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def softmax(logits: Any, scope: Any = None) -> Tensor:
    """``tw.nn.softmax`` over the last axis of `logits` of any rank."""
    with variable_scope(scope, "softmax", [logits]):
        logits = convert_to_tensor(logits)
        outputs = nn_ops.softmax(logits)
        outputs.set_shape(logits.shape)
        return outputs


@add_arg_scope
def unit_norm(inputs: Any, dim: int, epsilon: float = 1e-7, scope: Any = None) -> Tensor:
    """`inputs` divided by ``sqrt(epsilon + sum(inputs ** 2))`` along `dim`."""
    with variable_scope(scope, "UnitNorm", [inputs]):
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError("The input rank must be known.")
        if not 0 <= dim < rank:
            raise ValueError(f"dim must be positive but smaller than the input rank: {dim}")
        lengths = math_ops.sqrt(epsilon + math_ops.reduce_sum(math_ops.square(inputs), dim,
                                                              keepdims=True))
        return math_ops.truediv(inputs, lengths)


@add_arg_scope
def one_hot_encoding(labels: Any, num_classes: int, on_value: float = 1.0,
                     off_value: float = 0.0, outputs_collections: Any = None,
                     scope: Any = None) -> Tensor:
    """Integer `labels` as float one-hot vectors of length `num_classes`."""
    with name_scope(scope, "OneHotEncoding", [labels, num_classes]) as sc:
        labels = convert_to_tensor(labels)
        if labels.dtype == dtypes.int32:
            labels = math_ops.cast(labels, dtypes.int64)
        outputs = array_ops.one_hot(labels, num_classes, on_value=on_value,
                                    off_value=off_value)
        return collect_named_outputs(outputs_collections, sc, outputs)


def _layer_name(layer: Callable[..., Any], default: str) -> str:
    name = getattr(layer, "__name__", None) or getattr(getattr(layer, "func", None),
                                                       "__name__", None)
    return name or default


def repeat(inputs: Any, repetitions: int, layer: Callable[..., Any], *args: Any,
           **kwargs: Any) -> Tensor:
    """``layer`` applied `repetitions` times, each call named ``<scope>_<i>``."""
    scope = kwargs.pop("scope", None)
    with variable_scope(scope, "Repeat", [inputs]):
        outputs = convert_to_tensor(inputs)
        prefix = scope or _layer_name(layer, "repeat")
        for i in range(repetitions):
            outputs = layer(outputs, *args, **{**kwargs, "scope": f"{prefix}_{i + 1}"})
        return outputs


def stack(inputs: Any, layer: Callable[..., Any], stack_args: Sequence[Any],
          **kwargs: Any) -> Tensor:
    """``layer`` applied once per entry of `stack_args` (an argument or a tuple of them),
    each call named ``<scope>_<i>``."""
    scope = kwargs.pop("scope", None)
    if not isinstance(stack_args, (list, tuple)):
        raise ValueError("stack_args need to be a list or tuple")
    with variable_scope(scope, "Stack", [inputs]):
        outputs = convert_to_tensor(inputs)
        prefix = scope or _layer_name(layer, "stack")
        for i, layer_args in enumerate(stack_args):
            if not isinstance(layer_args, (list, tuple)):
                layer_args = [layer_args]
            outputs = layer(outputs, *layer_args, **{**kwargs, "scope": f"{prefix}_{i + 1}"})
        return outputs
