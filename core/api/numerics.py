"""NaN/Inf checks: ``tw.check_numerics``, ``tw.verify_tensor_all_finite`` and
``tw.add_check_numerics_ops``, as in ``tf.compat.v1``.

Contract: a ``CheckNumerics`` node passes its input through and fails the step with
`InvalidArgumentError` ``"<message> : Tensor had NaN values"`` (or ``Inf``, ``Inf and NaN``),
naming the node. `verify_tensor_all_finite` returns its input behind such a check.
`add_check_numerics_ops` checks every half/float/double output in the default graph (message
``"<op name>:<output index>"``), the checks chained by control dependencies so they run one after
the other, and returns the group of the last one; like TF's it refuses graphs with ``cond`` or
``while_loop`` ops (`ValueError`).
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.control_flow_ops import group
from tensorweave.api.scopes import colocate_with, name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Operation, Tensor, get_default_graph
from tensorweave.engine.graph.op_builder import apply

__all__ = ["add_check_numerics_ops", "check_numerics", "verify_tensor_all_finite"]

_CONTROL_FLOW = frozenset({"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond",
                           "RefSwitch", "RefMerge", "RefEnter", "If", "StatelessIf", "While",
                           "StatelessWhile"})


def check_numerics(tensor: Any, message: str, name: str | None = None) -> Tensor:
    """`tensor`, or at run time `InvalidArgumentError` if it holds a NaN or an Inf."""
    return apply("CheckNumerics", [tensor], {"message": message}, name=name)


def verify_tensor_all_finite(t: Any, msg: str, name: str | None = None) -> Tensor:
    """`t` after a ``CheckNumerics`` of it (colocated with `t`) has run."""
    with name_scope(name, "VerifyFinite", [t]) as scope:
        t = convert_to_tensor(t, name="t")
        with colocate_with(t):
            check = check_numerics(t, message=msg)
        graph = get_default_graph()
        with graph.control_dependencies([check.op]):
            return apply("Identity", [t], name=scope)


def add_check_numerics_ops() -> Operation:
    """A ``CheckNumerics`` for every floating output of the default graph; see the module
    docstring."""
    graph = get_default_graph()
    last: list[Operation] = []
    for op in graph.get_operations():
        for output in op.outputs:
            if output.dtype not in dtypes.FLOATS or op.op_def.ref_output:
                continue
            if op.type in _CONTROL_FLOW:
                raise ValueError("`tf.add_check_numerics_ops() is not compatible with "
                                 "TensorFlow control flow operations such as `tf.cond()` or "
                                 "`tf.while_loop()`.")
            with graph.control_dependencies(last):
                last = [check_numerics(output, f"{op.name}:{output.value_index}").op]
    return group(*last)
