"""Alias of ``tensorflow.python.framework.tensor_util``: re-exports build-time tensor values and
``TensorProto`` conversion.
"""

from tensorweave.engine.graph.graph import constant_value
from tensorweave.engine.graph.tensor_proto import (  # noqa: N812 - TF's name
    make_ndarray as MakeNdarray,
)
from tensorweave.engine.graph.tensor_proto import make_tensor_proto
