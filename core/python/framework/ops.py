"""Alias of ``tensorflow.python.framework.ops``: re-exports graph building (``tf.Graph``, scopes,
collections, gradient registration).
"""

from tensorweave.api.custom_gradient import NotDifferentiable, RegisterGradient, no_gradient
from tensorweave.api.indexed_slices import *
from tensorweave.api.misc_ops import init_scope, op_scope
from tensorweave.api.scopes import *
from tensorweave.engine.client.session import get_default_session
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import (
    Graph,
    GraphKeys,
    Operation,
    Tensor,
    get_default_graph,
    reset_default_graph,
)
from tensorweave.engine.graph.proto_functions import (
    get_collection_proto_type,
    get_from_proto_function,
    get_to_proto_function,
    register_proto_function,
)
from tensorweave.engine.graph.tensor_conversion_registry import (
    register_tensor_conversion_function,
)
