"""A third-party tensorweave plugin: ``Hypot(x, y) = sqrt(x**2 + y**2)``, elementwise.

It declares the op (with a shape function, so bad shapes fail at graph construction), a CPU
kernel written against the device's array module, and the op's gradient.
"""

from __future__ import annotations

from typing import Any

import tensorweave as tw
from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED
from tensorweave.plugins.standard_ops.shape_fns import broadcast


@tw.hookimpl
def tensorweave_register_ops(registry: Any) -> None:
    registry.op("Hypot", ["x:T", "y:T"], infer=broadcast(), attrs={"T": REQUIRED},
                type_constraints={"T": dtypes.FLOATS},
                doc="Elementwise sqrt(x**2 + y**2), with broadcasting.")


@tw.hookimpl
def tensorweave_register_kernels(registry: Any) -> None:
    registry.add("Hypot", "CPU", lambda ctx, x, y: ctx.xp.hypot(x, y))


@tw.hookimpl
def tensorweave_register_gradients(registry: Any) -> None:
    def hypot_grad(op: Any, grad: Any) -> list[Any]:
        x, y = op.inputs
        h = op.outputs[0]
        return [grad * x / h, grad * y / h]

    registry.add("Hypot", hypot_grad)


def hypot(x: Any, y: Any, name: str | None = None) -> Any:
    """The friendly wrapper: `tw_hypot.hypot(3.0, 4.0)`."""
    return tw.raw_ops.Hypot(x=x, y=y, name=name)
