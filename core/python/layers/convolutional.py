"""Alias of ``tensorflow.python.layers.convolutional``: re-exports the convolution layers."""

from tensorweave.api.conv_transpose_layers import *
from tensorweave.api.layers import Conv2D, conv2d
from tensorweave.api.layers3d import Conv3D, Conv3DTranspose, conv3d, conv3d_transpose
