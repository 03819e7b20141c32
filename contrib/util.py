"""``tf.contrib.util``: static tensor values and TensorProto conversion.

Contract: `constant_value` is ``tw.get_static_value`` (TF's ``tensor_util.constant_value``);
`make_tensor_proto` and `make_ndarray` convert between values and ``TensorProto`` as
``tw.make_tensor_proto`` / ``tw.make_ndarray`` do.
"""

from __future__ import annotations

from tensorweave.api.static_value import get_static_value as constant_value
from tensorweave.engine.graph.tensor_proto import make_ndarray, make_tensor_proto

__all__ = ["constant_value", "make_ndarray", "make_tensor_proto"]
