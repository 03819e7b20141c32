"""Alias of ``tensorflow.python.ops.partitioned_variables``: re-exports the variable partitioners.
"""

from tensorweave.api.partitioned_variables import *
