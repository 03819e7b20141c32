"""Alias of ``tensorflow.python.ops.nn_ops``: re-exports tensorweave's neural-network ops."""

from tensorweave.api.nn_conv3d_ops import *
from tensorweave.api.nn_conv_ops import *
from tensorweave.api.nn_extra import *
from tensorweave.api.nn_fractional_ops import *
from tensorweave.api.nn_ops import *
