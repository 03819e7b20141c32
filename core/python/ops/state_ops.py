"""Alias of ``tensorflow.python.ops.state_ops``: re-exports tensorweave's state ops."""

from tensorweave.api.state_ops import *
