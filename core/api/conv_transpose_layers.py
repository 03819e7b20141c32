"""``tw.layers.Conv2DTranspose`` and ``tw.layers.conv2d_transpose``: the transposed 2-D
convolution layer of ``tf.compat.v1.layers``.

Contract: the kernel is ``kernel_size + [filters, input_channels]`` (``conv2d_transpose``'s
filter layout), initialized through the variable scope like ``Conv2D``'s; the output of NHWC
`inputs` ``[batch, height, width, channels]`` is ``[batch, height * stride_h + max(kernel_h -
stride_h, 0), ..., filters]`` with ``padding="valid"`` and ``[batch, height * stride_h, ...,
filters]`` with ``"same"`` (TF's ``deconv_output_length``), computed from the runtime shape so
that the batch and spatial sizes may be unknown at construction, and set statically where they
are known. Then the bias and the activation are applied, as in ``Conv2D``.
`TransposedConvolution` holds this for any rank; ``layers3d.Conv3DTranspose`` uses it too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, nn_ops
from tensorweave.api.base_layer import Layer
from tensorweave.api.layers import (
    _ZEROS,
    Activation,
    Conv2D,
    _floating,
    _input,
    _weight,
)
from tensorweave.api.nn_conv_ops import conv2d_transpose as _nn_conv2d_transpose
from tensorweave.engine.graph.graph import Tensor

__all__ = ["Conv2DTranspose", "conv2d_transpose"]


def _output_length(length: Any, kernel: int, stride: int, padding: str) -> Any:
    """TF's ``deconv_output_length`` without output padding; `length` is an int or a tensor."""
    if padding == "VALID":
        return length * stride + max(kernel - stride, 0)
    return length * stride


class TransposedConvolution(Layer):
    """`build` and the transposed convolution of ``Conv{2,3}DTranspose``, for any number of
    spatial dimensions (``len(kernel_size)``); mixed in before the forward convolution layer,
    whose constructor sets the attributes it reads. `_transpose` is the ``tw.nn`` op function
    of the rank."""

    _transpose: Callable[..., Tensor]
    filters: int
    kernel_size: tuple[int, ...]
    strides: tuple[int, ...]
    padding: str
    use_bias: bool
    _kernel_args: tuple[Any, Any, Any]
    _bias_args: tuple[Any, Any, Any]

    def build(self, input_shape: Any) -> None:
        channels = input_shape[-1] if input_shape.ndims is not None else None
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found "
                             "`None`.")
        self.kernel = _weight(self, "kernel", [*self.kernel_size, self.filters, channels],
                              self._kernel_args)
        self.bias = _weight(self, "bias", [self.filters], self._bias_args) \
            if self.use_bias else None

    def _transposed(self, inputs: Tensor) -> Tensor:
        """`inputs` through the transposed convolution, before the bias and the activation."""
        n = len(self.kernel_size)
        shape = array_ops.shape(inputs)
        spatial = [_output_length(shape[axis], k, s, self.padding)
                   for axis, k, s in zip(range(1, n + 1), self.kernel_size, self.strides,
                                         strict=True)]
        output_shape = array_ops.stack([shape[0], *spatial, self.filters])
        outputs = type(self)._transpose(inputs, self.kernel, output_shape,
                                        strides=[1, *self.strides, 1], padding=self.padding)
        dims = inputs.shape.as_list() if inputs.shape.ndims is not None else [None] * (n + 2)
        static = [None if d is None else _output_length(d, k, s, self.padding)
                  for d, k, s in zip(dims[1:n + 1], self.kernel_size, self.strides, strict=True)]
        outputs.set_shape([dims[0], *static, self.filters])
        return outputs


class Conv2DTranspose(TransposedConvolution, Conv2D):
    """Transposed 2-D convolution (the gradient of ``Conv2D`` with respect to its input) of NHWC
    inputs, plus a bias, through `activation`."""

    _transpose = _nn_conv2d_transpose

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1),
                 padding: str = "valid", data_format: str = "channels_last",
                 activation: Activation = None, use_bias: bool = True,
                 kernel_initializer: Any = None, bias_initializer: Any = _ZEROS,
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, trainable: bool = True, name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(filters, kernel_size, strides, padding, data_format, (1, 1),
                         activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, trainable, name, **kwargs)

    def _checked(self, inputs: Any) -> Tensor:
        inputs = _input(inputs, "conv2d_transpose", ndim=4)
        _floating(inputs, "Conv2DTranspose")
        return inputs

    def call(self, inputs: Tensor) -> Tensor:
        outputs = self._transposed(inputs)
        if self.bias is not None:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format="NHWC")
        return outputs if self.activation is None else self.activation(outputs)


def conv2d_transpose(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1),
                     padding: str = "valid", data_format: str = "channels_last",
                     activation: Activation = None, use_bias: bool = True,
                     kernel_initializer: Any = None, bias_initializer: Any = _ZEROS,
                     kernel_regularizer: Any = None, bias_regularizer: Any = None,
                     activity_regularizer: Any = None, kernel_constraint: Any = None,
                     bias_constraint: Any = None, trainable: bool = True,
                     name: str | None = None, reuse: Any = None) -> Tensor:
    """A `Conv2DTranspose` layer applied to NHWC `inputs`."""
    return Conv2DTranspose(filters, kernel_size, strides, padding, data_format, activation,
                           use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                           bias_regularizer, activity_regularizer, kernel_constraint,
                           bias_constraint, trainable, name, _scope=name,
                           _reuse=reuse).apply(inputs)
