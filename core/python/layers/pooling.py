"""Alias of ``tensorflow.python.layers.pooling``: re-exports the pooling layers."""

from tensorweave.api.layers import AveragePooling2D, MaxPooling2D, average_pooling2d, max_pooling2d
from tensorweave.api.layers3d import (
    AveragePooling3D,
    MaxPooling3D,
    average_pooling3d,
    max_pooling3d,
)
