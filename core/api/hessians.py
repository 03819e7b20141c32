"""``tw.hessians``: second derivatives of ``sum(ys)``, as ``tf.compat.v1.hessians``.

Contract: for each x of known rank, the result has shape ``x.shape + x.shape`` and holds
``d^2 sum(ys) / dx_i dx_j``: the gradient is flattened, and each of its elements is
differentiated again with respect to x. TF loops over the elements with a ``while_loop``; here
the loop is unrolled at graph construction, so x must have a statically known number of elements
(a `ValueError` otherwise, as TF raises for an unknown rank). As in TF, whose loop writes each
second derivative into a TensorArray, a derivative that is ``None`` is a `ValueError` ("None
values not supported."): an x that ``ys`` does not depend on, or a first derivative that no
longer depends on x (``hessians(x, x)``, ys linear in x).
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops
from tensorweave.api.gradients import gradients
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = ["hessians"]


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _hessian(ys: Any, x: Any, t: Tensor, kwargs: dict[str, Any]) -> Tensor:
    """`x` as given (a `Variable` is differentiated through its ref); `t` its tensor."""
    flat = array_ops.reshape(convert_to_tensor(gradients(ys, x, **kwargs)[0]), [-1])
    rows = []
    for j in range(t.shape.num_elements()):
        rows.append(convert_to_tensor(gradients(flat[j], x, **kwargs)[0]))
    dims = t.shape.as_list()
    return array_ops.reshape(array_ops.stack(rows), dims + dims)


def hessians(ys: Any, xs: Any, name: str = "hessians", colocate_gradients_with_ops: bool = False,
             gate_gradients: bool = False,
             aggregation_method: int | None = None) -> list[Tensor]:
    """The Hessian of ``sum(ys)`` with respect to each of `xs`; see the module docstring."""
    kwargs = {"name": name, "colocate_gradients_with_ops": colocate_gradients_with_ops,
              "gate_gradients": gate_gradients, "aggregation_method": aggregation_method}
    result = []
    for i, x in enumerate(_as_list(xs)):
        t = convert_to_tensor(x)
        if t.shape.ndims is None:
            raise ValueError(f"Cannot compute Hessian because element {i} of `xs` does not have "
                             f"a statically-known rank.")
        if t.shape.num_elements() is None:
            raise ValueError(f"Cannot compute Hessian because element {i} of `xs` does not have "
                             f"a statically-known number of elements (shape {t.shape}).")
        result.append(_hessian(ys, x, t, kwargs))
    return result
