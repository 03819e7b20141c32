"""Keras's 2-D convolution and pooling layers: ``tw.layers``' `Conv2D`, `MaxPooling2D` and
`AveragePooling2D` with Keras's arguments (activation and initializer names, a pooling `strides`
that defaults to `pool_size`). Images are NHWC (``channels_last``), as tensorweave's kernels."""

from __future__ import annotations

from typing import Any

from tensorweave.api import layers as tf_layers
from tensorweave.keras import activations, initializers
from tensorweave.keras.base_layer import Layer

__all__ = ["AveragePooling2D", "Conv2D", "MaxPooling2D"]


class Conv2D(tf_layers.Conv2D, Layer):
    """2-D convolution with a ``kernel_size + (channels, filters)`` kernel, plus a bias,
    through `activation`."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1),
                 padding: str = "valid", data_format: str | None = None,
                 dilation_rate: Any = (1, 1), activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any) -> None:
        tf_layers.Conv2D.__init__(
            self, filters, kernel_size, strides, padding, data_format or "channels_last",
            dilation_rate, activations.get(activation), use_bias,
            initializers.get(kernel_initializer), initializers.get(bias_initializer),
            kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
            bias_constraint, **kwargs)


class MaxPooling2D(tf_layers.MaxPooling2D, Layer):
    """The maximum over each `pool_size` window."""

    def __init__(self, pool_size: Any = (2, 2), strides: Any = None, padding: str = "valid",
                 data_format: str | None = None, **kwargs: Any) -> None:
        tf_layers.MaxPooling2D.__init__(self, pool_size, pool_size if strides is None else
                                        strides, padding, data_format or "channels_last",
                                        **kwargs)


class AveragePooling2D(tf_layers.AveragePooling2D, Layer):
    """The mean over each `pool_size` window."""

    def __init__(self, pool_size: Any = (2, 2), strides: Any = None, padding: str = "valid",
                 data_format: str | None = None, **kwargs: Any) -> None:
        tf_layers.AveragePooling2D.__init__(self, pool_size, pool_size if strides is None else
                                            strides, padding, data_format or "channels_last",
                                            **kwargs)
