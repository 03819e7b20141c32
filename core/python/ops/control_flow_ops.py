"""Alias of ``tensorflow.python.ops.control_flow_ops``: re-exports tensorweave's control flow."""

from tensorweave.api.control_flow_ops import *
from tensorweave.api.logging_ops import Assert
