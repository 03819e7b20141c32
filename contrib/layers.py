"""``tf.contrib.layers``: TF1's contrib initializers, regularizers and functional layers.

Contract: the initializers are `tensorweave.api.init_ops.VarianceScaling` under contrib's
signature (``factor``, upper-case ``mode``, ``uniform``; a normal draw is truncated with
``stddev = sqrt(1.3 * factor / n)``); `xavier_initializer` is ``factor=1, mode="FAN_AVG"``.
A regularizer maps a weight to a scalar loss named after it (``l1_regularizer``, ...) or, with a
zero scale, to None; `apply_regularization` sums one regularizer over weights (``WEIGHTS`` by
default) and adds the sum to ``REGULARIZATION_LOSSES``.

The layers are `tensorweave.layers`' objects opened in contrib's variable scopes
(``fully_connected``, ``Conv``, ``BatchNorm``, ``Dropout``, ``EmbedSequence``; made unique, or
`scope`), with a getter that renames ``kernel``/``bias`` to ``weights``/``biases`` and puts every
variable in ``MODEL_VARIABLES`` too; `variables_collections` (a list, or a dict by variable kind)
and `outputs_collections` receive the variables and the output. `fully_connected` and `conv2d`
apply `normalizer_fn` (then no bias) and `activation_fn` (ReLU by default) after the layer.
`batch_norm` follows contrib's defaults (``decay=0.999``, ``scale=False``, training mode) and its
fused rule: with ``fused`` (the default) a 2-D input is normalized as ``[N, 1, 1, C]``, and a 2-D
or 4-D input takes the moving variance with Bessel's correction. Its moving-average updates go
to `updates_collections`, or, when that is None, run with every evaluation of the output. Each
layer function takes its defaults from `tensorweave.contrib.framework.arg_scope`.
`optimize_loss` is `tensorweave.contrib.optimizers`'.
"""

from __future__ import annotations

import importlib
import numbers
from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, init_ops, math_ops, nn_ops
from tensorweave.api.control_flow_ops import identity
from tensorweave.api.layers import (
    AveragePooling2D,
    BatchNormalization,
    Conv2D,
    Dense,
    Dropout,
    MaxPooling2D,
)
from tensorweave.api.layers import flatten as _core_flatten
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.api.variable_scope import variable_scope
from tensorweave.contrib import layers_summaries as _summaries
from tensorweave.contrib.framework import add_arg_scope, model_variable
from tensorweave.contrib.layers_utils import collect_named_outputs
from tensorweave.contrib.optimizers import OPTIMIZER_CLS_NAMES, OPTIMIZER_SUMMARIES, optimize_loss
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.graph import GraphKeys, Tensor, get_default_graph

# contrib's other layers live in `layers_extra`, which builds on this module's helpers
_EXTRA_LAYERS = (
    "bias_add", "conv2d_in_plane", "conv2d_transpose", "convolution2d_in_plane",
    "convolution2d_transpose", "layer_norm", "one_hot_encoding", "repeat",
    "separable_conv2d", "separable_convolution2d", "softmax", "stack", "unit_norm",
)

__all__ = [
    "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES", "apply_regularization", "avg_pool2d",
    "batch_norm", "conv2d", "convolution2d", "dropout", "embed_sequence", "flatten",
    "fully_connected", "l1_l2_regularizer", "l1_regularizer", "l2_regularizer", "linear",
    "max_pool2d", "optimize_loss", "sum_regularizer", "variance_scaling_initializer",
    "xavier_initializer", "xavier_initializer_conv2d", *_EXTRA_LAYERS, *_summaries.__all__,
]

# stddev of a unit normal truncated to [-2, 2], as `init_ops` corrects for it
_TRUNCATED_STDDEV = 0.87962566103423978
_MODES = {"FAN_IN": "fan_in", "FAN_OUT": "fan_out", "FAN_AVG": "fan_avg"}
_RENAMES = {"kernel": "weights", "bias": "biases"}

Regularizer = Callable[[Any], Tensor | None]


# -- initializers --------------------------------------------------------------------------------


def variance_scaling_initializer(factor: float = 2.0, mode: str = "FAN_IN",
                                 uniform: bool = False, seed: int | None = None,
                                 dtype: Any = dtypes.float32) -> init_ops.VarianceScaling:
    """Samples of variance ``factor / n`` (`n` the fan-in, fan-out or their mean): uniform in
    ``±sqrt(3 * factor / n)``, else truncated normal with ``stddev = sqrt(1.3 * factor / n)``."""
    if not dtypes.as_dtype(dtype).is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in _MODES:
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
    if uniform:
        return init_ops.VarianceScaling(factor, _MODES[mode], "uniform", seed, dtype)
    # VarianceScaling divides its stddev by the truncation's; contrib's 1.3 replaces that
    scale = 1.3 * factor * _TRUNCATED_STDDEV ** 2
    return init_ops.VarianceScaling(scale, _MODES[mode], "truncated_normal", seed, dtype)


def xavier_initializer(uniform: bool = True, seed: int | None = None,
                       dtype: Any = dtypes.float32) -> init_ops.VarianceScaling:
    """Glorot's initializer: `variance_scaling_initializer` with ``factor=1, mode="FAN_AVG"``."""
    return variance_scaling_initializer(1.0, "FAN_AVG", uniform, seed, dtype)


xavier_initializer_conv2d = xavier_initializer


# -- regularizers --------------------------------------------------------------------------------


def _checked_scale(scale: Any) -> bool:
    """Whether `scale` (a float or tensor) regularizes at all; bad Python scales raise."""
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"scale cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale:g}")
        return scale != 0.0
    return True


def _scaled_regularizer(scale: Any, scope: str | None, default_name: str,
                        penalty: Callable[[Tensor], Tensor]) -> Regularizer:
    if not _checked_scale(scale):
        return lambda _: None

    def regularize(weights: Any) -> Tensor:
        with name_scope(scope, default_name, [weights]) as name:
            weights = convert_to_tensor(weights)
            factor = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(factor, penalty(weights), name=name)

    return regularize


def l1_regularizer(scale: Any, scope: str | None = None) -> Regularizer:
    """``scale * sum(|w|)``."""
    return _scaled_regularizer(scale, scope, "l1_regularizer",
                               lambda w: math_ops.reduce_sum(math_ops.abs(w)))


def l2_regularizer(scale: Any, scope: str | None = None) -> Regularizer:
    """``scale * sum(w ** 2) / 2`` (``tw.nn.l2_loss``)."""
    return _scaled_regularizer(scale, scope, "l2_regularizer", nn_ops.l2_loss)


def sum_regularizer(regularizer_list: list[Regularizer | None],
                    scope: str | None = None) -> Regularizer | None:
    """The sum of the regularizers' losses (those that give one); None for no regularizers."""
    regularizers = [r for r in regularizer_list if r is not None]
    if not regularizers:
        return None

    def regularize(weights: Any) -> Tensor | None:
        with name_scope(scope, "sum_regularizer", [weights]) as name:
            losses = [loss for loss in (r(weights) for r in regularizers) if loss is not None]
            return math_ops.add_n(losses, name=name) if losses else None

    return regularize


def l1_l2_regularizer(scale_l1: float = 1.0, scale_l2: float = 1.0,
                      scope: str | None = None) -> Regularizer | None:
    """`l1_regularizer` plus `l2_regularizer`."""
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope=scope)


def apply_regularization(regularizer: Regularizer, weights_list: list[Any] | None = None
                         ) -> Tensor:
    """The summed penalty of `regularizer` over `weights_list` (``WEIGHTS`` by default), also
    added to ``REGULARIZATION_LOSSES``."""
    graph = get_default_graph()
    weights_list = weights_list or graph.get_collection("weights")
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [constant(0.0) if p is None else p for p in penalties]
        for penalty in penalties:
            if penalty.shape.ndims != 0:
                raise ValueError("regularizer must return a scalar Tensor instead of a Tensor "
                                 f"with rank {penalty.shape.ndims}.")
        total = math_ops.add_n(penalties, name=scope)
    graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, total)
    return total


# -- shared machinery ----------------------------------------------------------------------------


def _contrib_getter(getter: Callable[..., Any], name: str, *args: Any, **kwargs: Any) -> Any:
    """Contrib's variable getter: ``kernel``/``bias`` named ``weights``/``biases``, and every
    variable a model variable."""
    head, _, short = name.rpartition("/")
    if short in _RENAMES:
        name = f"{head}/{_RENAMES[short]}" if head else _RENAMES[short]
    collections = kwargs.get("collections") or [GraphKeys.GLOBAL_VARIABLES]
    kwargs["collections"] = list(dict.fromkeys(
        [*collections, GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]))
    return getter(name, *args, **kwargs)


def _collect_variable(variable: Any, collections: Any, kind: str) -> None:
    if variable is None:
        return
    names = collections.get(kind) if isinstance(collections, dict) else collections
    if isinstance(names, str):
        names = [names]
    graph = get_default_graph()
    for collection in names or []:
        if variable not in graph.get_collection(collection):
            graph.add_to_collection(collection, variable)


def _collect_output(collections: Any, outputs: Tensor, alias: str) -> Tensor:
    return collect_named_outputs(collections, alias, outputs)


def _finish(outputs: Tensor, normalizer_fn: Any, normalizer_params: Any,
            activation_fn: Any, outputs_collections: Any, alias: str) -> Tensor:
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return _collect_output(outputs_collections, outputs, alias)


def _weights_args(normalizer_fn: Any, weights_initializer: Any, weights_regularizer: Any,
                  biases_initializer: Any, biases_regularizer: Any) -> dict[str, Any]:
    """The core layer's arguments for contrib's ``weights``/``biases`` ones: Xavier weights by
    default, and no biases under a normalizer or without a biases initializer."""
    return {"use_bias": not normalizer_fn and bool(biases_initializer),
            "kernel_initializer": weights_initializer or xavier_initializer(),
            "bias_initializer": biases_initializer,
            "kernel_regularizer": weights_regularizer,
            "bias_regularizer": biases_regularizer}


def _apply_weighted(layer: Any, inputs: Tensor, variables_collections: Any,
                    normalizer_fn: Any, normalizer_params: Any, activation_fn: Any,
                    outputs_collections: Any, alias: str) -> Tensor:
    """`layer` applied to `inputs`, its variables collected as ``weights`` and ``biases``,
    then normalized and activated."""
    outputs = layer.apply(inputs)
    _collect_variable(layer.kernel, variables_collections, "weights")
    _collect_variable(layer.bias, variables_collections, "biases")
    return _finish(outputs, normalizer_fn, normalizer_params, activation_fn,
                   outputs_collections, alias)


def _channels(data_format: str | None, allowed: tuple[str | None, ...]) -> str:
    if data_format not in allowed:
        raise ValueError(f"Invalid data_format: {data_format!r}")
    return "channels_first" if data_format and data_format.startswith("NC") else \
        "channels_last"


# -- layers --------------------------------------------------------------------------------------


@add_arg_scope
def fully_connected(inputs: Any, num_outputs: int, activation_fn: Any = nn_ops.relu,
                    normalizer_fn: Any = None, normalizer_params: Any = None,
                    weights_initializer: Any = None, weights_regularizer: Any = None,
                    biases_initializer: Any = init_ops.zeros_initializer(),
                    biases_regularizer: Any = None, reuse: Any = None,
                    variables_collections: Any = None, outputs_collections: Any = None,
                    trainable: bool = True, scope: Any = None) -> Tensor:
    """``activation_fn(inputs @ weights + biases)`` over the last axis of `inputs`, with
    Xavier-initialized ``weights`` by default."""
    if isinstance(num_outputs, bool) or not isinstance(num_outputs, numbers.Integral):
        raise ValueError(f"num_outputs type should be one of [<class 'int'>], got "
                         f"{type(num_outputs)}.")
    with variable_scope(scope, "fully_connected", [inputs], reuse=reuse,
                        custom_getter=_contrib_getter) as sc:
        inputs = convert_to_tensor(inputs)
        layer = Dense(int(num_outputs),
                      **_weights_args(normalizer_fn, weights_initializer, weights_regularizer,
                                      biases_initializer, biases_regularizer),
                      trainable=trainable, dtype=inputs.dtype.base_dtype, _scope=sc,
                      _reuse=reuse)
        return _apply_weighted(layer, inputs, variables_collections, normalizer_fn,
                               normalizer_params, activation_fn, outputs_collections, sc.name)


@add_arg_scope
def linear(inputs: Any, num_outputs: int, **kwargs: Any) -> Tensor:
    """`fully_connected` without an activation."""
    return fully_connected(inputs, num_outputs, activation_fn=None, **kwargs)


@add_arg_scope
def conv2d(inputs: Any, num_outputs: int, kernel_size: Any, stride: Any = 1,
           padding: str = "SAME", data_format: str | None = None, rate: Any = 1,
           activation_fn: Any = nn_ops.relu, normalizer_fn: Any = None,
           normalizer_params: Any = None, weights_initializer: Any = None,
           weights_regularizer: Any = None,
           biases_initializer: Any = init_ops.zeros_initializer(),
           biases_regularizer: Any = None, reuse: Any = None, variables_collections: Any = None,
           outputs_collections: Any = None, trainable: bool = True, scope: Any = None) -> Tensor:
    """A 2-D convolution of NHWC `inputs` with ``weights`` of shape
    ``kernel_size + [channels, num_outputs]``, plus ``biases``, under the scope ``Conv``."""
    data_format = _channels(data_format, (None, "NHWC", "NCHW"))
    with variable_scope(scope, "Conv", [inputs], reuse=reuse,
                        custom_getter=_contrib_getter) as sc:
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims is not None and inputs.shape.ndims != 4:
            raise ValueError(f"Convolution expects input with rank 4, got "
                             f"{inputs.shape.ndims}")
        layer = Conv2D(num_outputs, kernel_size, strides=stride, padding=padding,
                       data_format=data_format, dilation_rate=rate,
                       **_weights_args(normalizer_fn, weights_initializer, weights_regularizer,
                                       biases_initializer, biases_regularizer),
                       trainable=trainable, dtype=inputs.dtype.base_dtype, _scope=sc,
                       _reuse=reuse)
        return _apply_weighted(layer, inputs, variables_collections, normalizer_fn,
                               normalizer_params, activation_fn, outputs_collections, sc.name)


convolution2d = conv2d


def _pool(layer_class: type, default_name: str, inputs: Any, kernel_size: Any, stride: Any,
          padding: str, data_format: str, outputs_collections: Any, scope: Any) -> Tensor:
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with name_scope(scope, default_name, [inputs]) as sc:
        layer = layer_class(kernel_size, stride, padding, _channels(data_format, ("NHWC", "NCHW")))
        return _collect_output(outputs_collections, layer.apply(inputs), sc)


@add_arg_scope
def max_pool2d(inputs: Any, kernel_size: Any, stride: Any = 2, padding: str = "VALID",
               data_format: str = "NHWC", outputs_collections: Any = None,
               scope: Any = None) -> Tensor:
    """The maximum over each ``kernel_size`` window, moved by `stride`."""
    return _pool(MaxPooling2D, "MaxPool2D", inputs, kernel_size, stride, padding, data_format,
                 outputs_collections, scope)


@add_arg_scope
def avg_pool2d(inputs: Any, kernel_size: Any, stride: Any = 2, padding: str = "VALID",
               data_format: str = "NHWC", outputs_collections: Any = None,
               scope: Any = None) -> Tensor:
    """The mean over each ``kernel_size`` window, moved by `stride`."""
    return _pool(AveragePooling2D, "AvgPool2D", inputs, kernel_size, stride, padding,
                 data_format, outputs_collections, scope)


@add_arg_scope
def flatten(inputs: Any, outputs_collections: Any = None, scope: Any = None) -> Tensor:
    """`inputs` reshaped to ``[batch, everything else]``."""
    with name_scope(scope, "Flatten", [inputs]) as sc:
        return _collect_output(outputs_collections, _core_flatten(inputs), sc)


@add_arg_scope
def dropout(inputs: Any, keep_prob: Any = 0.5, noise_shape: Any = None,
            is_training: Any = True, outputs_collections: Any = None, scope: Any = None,
            seed: int | None = None) -> Tensor:
    """``tw.nn.dropout`` keeping each element with probability `keep_prob` when `is_training`
    (a bool or a bool tensor), else the inputs."""
    with variable_scope(scope, "Dropout", [inputs], custom_getter=_contrib_getter) as sc:
        layer = Dropout(rate=1 - keep_prob, noise_shape=noise_shape, seed=seed, _scope=sc)
        return _collect_output(outputs_collections, layer.apply(inputs, training=is_training),
                               sc.name)


@add_arg_scope
def batch_norm(inputs: Any, decay: float = 0.999, center: bool = True, scale: bool = False,
               epsilon: float = 0.001, activation_fn: Any = None,
               param_initializers: dict[str, Any] | None = None,
               param_regularizers: dict[str, Any] | None = None,
               updates_collections: Any = GraphKeys.UPDATE_OPS, is_training: Any = True,
               reuse: Any = None, variables_collections: Any = None,
               outputs_collections: Any = None, trainable: bool = True,
               batch_weights: Any = None, fused: bool | None = None,
               data_format: str = "NHWC", zero_debias_moving_mean: bool = False,
               scope: Any = None, renorm: bool = False, renorm_clipping: Any = None,
               renorm_decay: float = 0.99, adjustment: Any = None) -> Tensor:
    """Batch normalization over all axes but the channel one, as contrib's; see the module
    docstring for the fused rule and `updates_collections`."""
    if batch_weights is not None or zero_debias_moving_mean:
        raise ValueError("tensorweave's batch_norm does not support batch_weights or "
                         "zero_debias_moving_mean")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    inputs = convert_to_tensor(inputs)
    rank = inputs.shape.ndims
    if rank is None:
        raise ValueError(f"Inputs {inputs.name} has undefined rank.")
    fused = True if fused is None else fused
    initializers = param_initializers or {}
    regularizers = param_regularizers or {}
    flat_2d = fused and rank == 2
    with variable_scope(scope, "BatchNorm", [inputs], reuse=reuse,
                        custom_getter=_contrib_getter) as sc:
        layer = BatchNormalization(
            axis=1 if data_format == "NCHW" and not flat_2d else -1, momentum=decay,
            epsilon=epsilon, center=center, scale=scale,
            beta_initializer=initializers.get("beta", init_ops.zeros_initializer()),
            gamma_initializer=initializers.get("gamma", init_ops.ones_initializer()),
            moving_mean_initializer=initializers.get("moving_mean",
                                                     init_ops.zeros_initializer()),
            moving_variance_initializer=initializers.get("moving_variance",
                                                         init_ops.ones_initializer()),
            beta_regularizer=regularizers.get("beta"), gamma_regularizer=regularizers.get("gamma"),
            renorm=renorm, renorm_clipping=renorm_clipping, renorm_momentum=renorm_decay,
            # contrib's fused flag falls back silently where TF's fused kernel cannot run
            fused=None if fused else False, trainable=trainable, adjustment=adjustment,
            _scope=sc, _reuse=reuse)
        # contrib normalizes a 2-D batch as [N, 1, 1, C] through the fused kernel
        x = array_ops.reshape(inputs, [-1, 1, 1, inputs.shape[-1]]) if flat_2d else inputs
        outputs = layer.apply(x, training=is_training)
        if flat_2d:
            outputs = array_ops.reshape(outputs, array_ops.shape(inputs))
            outputs.set_shape(inputs.shape)
        outputs = _route_updates(outputs, layer.updates, updates_collections)
        for kind in ("beta", "gamma", "moving_mean", "moving_variance"):
            _collect_variable(getattr(layer, kind), variables_collections, kind)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return _collect_output(outputs_collections, outputs, sc.name)


def _route_updates(outputs: Tensor, updates: list[Any], updates_collections: Any) -> Tensor:
    """The layer put its updates in ``UPDATE_OPS``; move them to `updates_collections`, or
    (None) make the output run them."""
    if updates_collections == GraphKeys.UPDATE_OPS or not updates:
        return outputs
    graph = get_default_graph()
    registered = graph.get_collection_ref(GraphKeys.UPDATE_OPS)
    registered[:] = [op for op in registered if all(op is not u for u in updates)]
    if updates_collections is None:
        with control_dependencies(updates):
            return identity(outputs)
    for update in updates:
        graph.add_to_collections(updates_collections, update)
    return outputs


@add_arg_scope
def embed_sequence(ids: Any, vocab_size: int | None = None, embed_dim: int | None = None,
                   unique: bool = False, initializer: Any = None, regularizer: Any = None,
                   trainable: bool = True, scope: Any = None, reuse: Any = None) -> Tensor:
    """The rows of a ``[vocab_size, embed_dim]`` ``embeddings`` model variable at `ids`."""
    if not (reuse or (vocab_size and embed_dim)):
        raise ValueError("Must specify vocab size and embedding dimension when not reusing. "
                         f"Got vocab_size={vocab_size} and embed_dim={embed_dim}")
    with variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        shape = None if vocab_size is None or embed_dim is None else [vocab_size, embed_dim]
        embeddings = model_variable("embeddings", shape=shape, initializer=initializer,
                                    regularizer=regularizer, trainable=trainable)
        if not unique:
            return nn_ops.embedding_lookup(embeddings, ids)
        # look each distinct id up once, then spread the rows back
        ids = convert_to_tensor(ids)
        distinct, index = array_ops.unique(array_ops.reshape(ids, [-1]))
        rows = array_ops.gather(nn_ops.embedding_lookup(embeddings, distinct), index)
        out = array_ops.reshape(rows, array_ops.concat(
            [array_ops.shape(ids), array_ops.shape(embeddings)[1:]], 0))
        out.set_shape(ids.shape.concatenate(embeddings.shape[1:]))
        return out


def __getattr__(name: str) -> Any:
    if name in _EXTRA_LAYERS:
        return getattr(importlib.import_module("tensorweave.contrib.layers_extra"), name)
    if name in _summaries.__all__:
        return getattr(_summaries, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
