"""``py_func`` and ``numpy_function``, as ``tf.compat.v1``.

Contract: ``py_func(func, inp, Tout)`` creates a ``PyFunc`` op (``PyFuncStateless`` when
``stateful=False``) that calls `func` with numpy values of `inp` whenever it runs, and returns
one `Tensor` when `Tout` is one dtype, a list when it is a list (the `Operation` for an empty
list), each of unknown shape. What `func` receives and must return, and the errors, are the
kernel's contract (``tensorweave/plugins/kernels/script_ops.py``): results are not cast, their
dtypes must equal `Tout`. `func` stays in this process (`tensorweave.framework.py_func_registry`:
the op carries only a token, and the graph keeps `func` alive), so the op runs only on a device
of this process; elsewhere it fails with `InvalidArgumentError`. The ops have no gradient
(`gradients` gives ``None`` through them) and are never constant-folded.
``numpy_function`` is ``py_func`` with ``stateful=True``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tensorweave import dtypes
from tensorweave.framework import py_func_registry
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_builder import make_op

__all__ = ["numpy_function", "py_func"]


def py_func(func: Callable[..., Any], inp: Sequence[Any], Tout: Any,  # noqa: N803 - TF's name
            stateful: bool = True, name: str | None = None,
            ) -> Tensor | list[Tensor] | Operation:
    """Wrap `func` (numpy in, numpy out) as an op; see the module docstring."""
    if not callable(func):
        raise ValueError(f"Expected func to be callable, got func of type {type(func)}")
    if not isinstance(inp, (list, tuple)):
        raise TypeError(f"Expected list for 'input' argument to 'PyFunc' Op, not {inp!r}.")
    is_list = isinstance(Tout, (list, tuple))
    tout = [dtypes.as_dtype(t) for t in (Tout if is_list else [Tout])]
    inputs = [convert_to_tensor(x) for x in inp]
    op_type = "PyFunc" if stateful else "PyFuncStateless"

    def build(token: str) -> Operation:
        attrs = {"token": token, "Tin": [t.dtype for t in inputs], "Tout": tout}
        return make_op(op_type, [inputs], attrs, name=name)

    op = py_func_registry.register(func, build)
    if not is_list:
        return op.outputs[0]
    return list(op.outputs) if tout else op


def numpy_function(func: Callable[..., Any], inp: Sequence[Any], Tout: Any,  # noqa: N803
                   name: str | None = None) -> Tensor | list[Tensor] | Operation:
    """``py_func(func, inp, Tout, stateful=True, name=name)``, as TF 1.15."""
    return py_func(func, inp, Tout, stateful=True, name=name)
