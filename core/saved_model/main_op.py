"""The standard SavedModel main op (``tf.compat.v1.saved_model.main_op``).

Contract: `main_op` groups the local-variable and lookup-table initializers, as TF's, to pass as
a builder's ``main_op`` so loading a SavedModel resets local state such as metric counters and
fills the tables (from the SavedModel's copies of their vocabulary files).
"""

from __future__ import annotations

from tensorweave.api.control_flow_ops import group
from tensorweave.api.variables import local_variables_initializer, tables_initializer
from tensorweave.engine.graph.graph import Operation

__all__ = ["main_op"]


def main_op() -> Operation:
    return group(local_variables_initializer(), tables_initializer())
