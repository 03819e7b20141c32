"""Alias of ``tensorflow.python.ops.resource_variable_ops``: `ResourceVariable` and the
default-variable switches."""

from tensorweave.api.resource_variable_ops import *  # noqa: F403
