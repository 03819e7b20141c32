"""OpDefs of ``PyFunc`` and ``PyFuncStateless``, as TF's ``script_ops.cc``.

Contract: ``PyFunc(input)`` calls the Python callable registered under attr ``token`` on its
inputs (types ``Tin``, which must match them) and yields outputs typed ``Tout`` of unknown
shape. ``PyFunc`` is stateful, so passes never merge, fold or drop it; ``PyFuncStateless``
promises the callable is pure, so CSE may merge two with the same token and inputs. Neither is
ever evaluated outside a step (its kernel is step-bound; see ``plugins/kernels/script_ops.py``).
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape


def _py_func(ctx: InferContext) -> list[TensorSpec]:
    tin = list(ctx.attr("Tin"))
    given = [s.dtype for s in ctx.inputs]
    if given != tin:
        raise ctx.type_error(f"attr Tin is {[t.name for t in tin]} but the inputs are "
                             f"{[t.name for t in given]}")
    return [TensorSpec(t, TensorShape(None)) for t in ctx.attr("Tout")]


def register(registry: Any) -> None:
    for name, stateful in (("PyFunc", True), ("PyFuncStateless", False)):
        registry.op(name, ["input:*"], _py_func, stateful=stateful, list_output=True,
                    attrs={"token": REQUIRED, "Tin": REQUIRED, "Tout": REQUIRED})
