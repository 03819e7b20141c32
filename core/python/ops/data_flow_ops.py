"""Alias of ``tensorflow.python.ops.data_flow_ops``: re-exports tensorweave's queues and
accumulators.
"""

from tensorweave.api.accumulators import *
from tensorweave.api.data_flow_ops import *
