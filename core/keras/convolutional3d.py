"""Keras's 3-D convolution and pooling layers: ``tw.layers``' `Conv3D`, `Conv3DTranspose`,
`MaxPooling3D` and `AveragePooling3D` with Keras's arguments (activation and initializer names, a
pooling `strides` that defaults to `pool_size`). Volumes are NDHWC (``channels_last``), as
tensorweave's kernels."""

from __future__ import annotations

from typing import Any

from tensorweave.api import layers3d
from tensorweave.keras import activations, initializers
from tensorweave.keras.base_layer import Layer

__all__ = [
    "AveragePooling3D", "AvgPool3D", "Conv3D", "Conv3DTranspose", "Convolution3D",
    "Convolution3DTranspose", "MaxPool3D", "MaxPooling3D",
]


def _keras_args(activation: Any, kernel_initializer: Any, bias_initializer: Any) -> tuple:
    return (activations.get(activation), initializers.get(kernel_initializer),
            initializers.get(bias_initializer))


class Conv3D(layers3d.Conv3D, Layer):
    """3-D convolution with a ``kernel_size + (channels, filters)`` kernel, plus a bias,
    through `activation`."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1, 1),
                 padding: str = "valid", data_format: str | None = None,
                 dilation_rate: Any = (1, 1, 1), activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any) -> None:
        activation, kernel_init, bias_init = _keras_args(activation, kernel_initializer,
                                                         bias_initializer)
        layers3d.Conv3D.__init__(
            self, filters, kernel_size, strides, padding, data_format or "channels_last",
            dilation_rate, activation, use_bias, kernel_init, bias_init, kernel_regularizer,
            bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, **kwargs)


class Conv3DTranspose(layers3d.Conv3DTranspose, Layer):
    """Transposed 3-D convolution with a ``kernel_size + (filters, channels)`` kernel, plus a
    bias, through `activation`."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1, 1),
                 padding: str = "valid", data_format: str | None = None,
                 activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any) -> None:
        activation, kernel_init, bias_init = _keras_args(activation, kernel_initializer,
                                                         bias_initializer)
        layers3d.Conv3DTranspose.__init__(
            self, filters, kernel_size, strides, padding, data_format or "channels_last",
            activation, use_bias, kernel_init, bias_init, kernel_regularizer, bias_regularizer,
            activity_regularizer, kernel_constraint, bias_constraint, **kwargs)


class MaxPooling3D(layers3d.MaxPooling3D, Layer):
    """The maximum over each `pool_size` window."""

    def __init__(self, pool_size: Any = (2, 2, 2), strides: Any = None,
                 padding: str = "valid", data_format: str | None = None,
                 **kwargs: Any) -> None:
        layers3d.MaxPooling3D.__init__(self, pool_size, pool_size if strides is None else
                                       strides, padding, data_format or "channels_last",
                                       **kwargs)


class AveragePooling3D(layers3d.AveragePooling3D, Layer):
    """The mean over each `pool_size` window."""

    def __init__(self, pool_size: Any = (2, 2, 2), strides: Any = None,
                 padding: str = "valid", data_format: str | None = None,
                 **kwargs: Any) -> None:
        layers3d.AveragePooling3D.__init__(self, pool_size, pool_size if strides is None else
                                           strides, padding, data_format or "channels_last",
                                           **kwargs)


# Keras's aliases
Convolution3D = Conv3D
Convolution3DTranspose = Conv3DTranspose
MaxPool3D = MaxPooling3D
AvgPool3D = AveragePooling3D
