"""``tw.layers``' 3-D convolution and pooling layers of ``tf.compat.v1.layers``: ``Conv3D``,
``Conv3DTranspose``, ``MaxPooling3D``, ``AveragePooling3D`` and their functions.

Contract: the 2-D layers with a third spatial dimension. Volumes are NDHWC (``channels_last``),
as tensorweave's kernels. ``Conv3D``'s kernel is ``kernel_size + [channels, filters]``,
``Conv3DTranspose``'s is ``kernel_size + [filters, channels]`` with TF's
``deconv_output_length`` per spatial dimension, both plus a bias, through `activation`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import nn_ops
from tensorweave.api.base_layer import Layer
from tensorweave.api.conv_transpose_layers import TransposedConvolution
from tensorweave.api.layers import (
    _ZEROS,
    Activation,
    Conv2D,
    _channels_last,
    _floating,
    _input,
    _normalize_tuple,
    _padding,
    _Pooling2D,
)
from tensorweave.api.nn_conv3d_ops import avg_pool3d, max_pool3d
from tensorweave.api.nn_conv3d_ops import conv3d as _conv3d_op
from tensorweave.api.nn_conv3d_ops import conv3d_transpose as _nn_conv3d_transpose
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "AveragePooling3D", "Conv3D", "Conv3DTranspose", "MaxPooling3D", "average_pooling3d",
    "conv3d", "conv3d_transpose", "max_pooling3d",
]


class Conv3D(Conv2D):
    """3-D convolution of NDHWC inputs with a ``kernel_size + [channels, filters]`` kernel,
    plus a bias, through `activation`."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1, 1),
                 padding: str = "valid", data_format: str = "channels_last",
                 dilation_rate: Any = (1, 1, 1), activation: Activation = None,
                 use_bias: bool = True, kernel_initializer: Any = None,
                 bias_initializer: Any = _ZEROS, kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None,
                 trainable: bool = True, name: str | None = None, **kwargs: Any) -> None:
        Layer.__init__(self, trainable=trainable, name=name,
                       activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        self.kernel_size = _normalize_tuple(kernel_size, 3, "kernel_size")
        self.strides = _normalize_tuple(strides, 3, "strides")
        self.dilation_rate = _normalize_tuple(dilation_rate, 3, "dilation_rate")
        self.padding = _padding(padding)
        _channels_last(data_format, self._base_name)
        self.activation = activation
        self.use_bias = use_bias
        self._kernel_args = (kernel_initializer, kernel_regularizer, kernel_constraint)
        self._bias_args = (bias_initializer, bias_regularizer, bias_constraint)

    def _checked(self, inputs: Any) -> Tensor:
        inputs = _input(inputs, self._base_name, ndim=5)
        _floating(inputs, type(self).__name__)
        return inputs

    def _finish(self, outputs: Tensor) -> Tensor:
        if self.bias is not None:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format="NDHWC")
        return outputs if self.activation is None else self.activation(outputs)

    def call(self, inputs: Tensor) -> Tensor:
        return self._finish(_conv3d_op(inputs, self.kernel, [1, *self.strides, 1],
                                       self.padding, dilations=[1, *self.dilation_rate, 1],
                                       name="Conv3D"))


class Conv3DTranspose(TransposedConvolution, Conv3D):
    """Transposed 3-D convolution (the gradient of ``Conv3D`` with respect to its input) of
    NDHWC inputs, plus a bias, through `activation`."""

    _transpose = _nn_conv3d_transpose

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1, 1),
                 padding: str = "valid", data_format: str = "channels_last",
                 activation: Activation = None, use_bias: bool = True,
                 kernel_initializer: Any = None, bias_initializer: Any = _ZEROS,
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, trainable: bool = True, name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(filters, kernel_size, strides, padding, data_format, (1, 1, 1),
                         activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, trainable, name, **kwargs)

    def call(self, inputs: Tensor) -> Tensor:
        return self._finish(self._transposed(inputs))


class _Pooling3D(_Pooling2D):
    def __init__(self, pool_size: Any, strides: Any, padding: str = "valid",
                 data_format: str = "channels_last", name: str | None = None,
                 **kwargs: Any) -> None:
        Layer.__init__(self, name=name, **kwargs)
        self.pool_size = _normalize_tuple(pool_size, 3, "pool_size")
        self.strides = _normalize_tuple(strides, 3, "strides")
        self.padding = _padding(padding)
        _channels_last(data_format, self._base_name)

    def _checked(self, inputs: Any) -> Tensor:
        return _input(inputs, self._base_name, ndim=5)

    def call(self, inputs: Tensor) -> Tensor:
        return type(self)._pool(inputs, [1, *self.pool_size, 1], [1, *self.strides, 1],
                                self.padding, data_format="NDHWC")


class MaxPooling3D(_Pooling3D):
    """The maximum over each `pool_size` window of NDHWC inputs."""

    _pool = max_pool3d


class AveragePooling3D(_Pooling3D):
    """The mean over each `pool_size` window of NDHWC inputs."""

    _pool = avg_pool3d


def conv3d(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1, 1),
           padding: str = "valid", data_format: str = "channels_last",
           dilation_rate: Any = (1, 1, 1), activation: Activation = None,
           use_bias: bool = True, kernel_initializer: Any = None,
           bias_initializer: Any = _ZEROS, kernel_regularizer: Any = None,
           bias_regularizer: Any = None, activity_regularizer: Any = None,
           kernel_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
           name: str | None = None, reuse: Any = None) -> Tensor:
    """A `Conv3D` layer applied to NDHWC `inputs`."""
    return Conv3D(filters, kernel_size, strides, padding, data_format, dilation_rate,
                  activation, use_bias, kernel_initializer, bias_initializer,
                  kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
                  bias_constraint, trainable, name, _scope=name, _reuse=reuse).apply(inputs)


def conv3d_transpose(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1, 1),
                     padding: str = "valid", data_format: str = "channels_last",
                     activation: Activation = None, use_bias: bool = True,
                     kernel_initializer: Any = None, bias_initializer: Any = _ZEROS,
                     kernel_regularizer: Any = None, bias_regularizer: Any = None,
                     activity_regularizer: Any = None, kernel_constraint: Any = None,
                     bias_constraint: Any = None, trainable: bool = True,
                     name: str | None = None, reuse: Any = None) -> Tensor:
    """A `Conv3DTranspose` layer applied to NDHWC `inputs`."""
    return Conv3DTranspose(filters, kernel_size, strides, padding, data_format, activation,
                           use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                           bias_regularizer, activity_regularizer, kernel_constraint,
                           bias_constraint, trainable, name, _scope=name,
                           _reuse=reuse).apply(inputs)


def max_pooling3d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                  data_format: str = "channels_last", name: str | None = None) -> Tensor:
    """A `MaxPooling3D` layer applied to NDHWC `inputs`."""
    return MaxPooling3D(pool_size, strides, padding, data_format, name,
                        _scope=name).apply(inputs)


def average_pooling3d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                      data_format: str = "channels_last", name: str | None = None) -> Tensor:
    """An `AveragePooling3D` layer applied to NDHWC `inputs`."""
    return AveragePooling3D(pool_size, strides, padding, data_format, name,
                            _scope=name).apply(inputs)
