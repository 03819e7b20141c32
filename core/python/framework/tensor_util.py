"""Alias of ``tensorflow.python.framework.tensor_util``: re-exports build-time tensor values and
``TensorProto`` conversion.
"""

from tensorweave.framework.graph import constant_value
from tensorweave.framework.tensor_proto import make_ndarray as MakeNdarray  # noqa: N812 - TF's name
from tensorweave.framework.tensor_proto import make_tensor_proto
