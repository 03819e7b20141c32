"""The kernel of ``PyFunc`` and ``PyFuncStateless``: call a registered Python callable.

Contract, as TF's ``py_func.cc`` and ``FuncRegistry``: the callable registered under attr
``token`` in this process (`tensorweave.engine.graph.py_func_registry`) gets one numpy value per
input: a fresh, writable array for numbers (0-d for scalars), an object array of `bytes` for
strings (a plain `bytes` for a scalar string). It returns one value or a list/tuple of them; each
becomes an array as ``np.asarray`` makes it (a Python float is float64, an int int64), strings
(``bytes``/``str`` elements, ``S``/``U`` arrays) become `bytes`, and a lone ``None`` means no
outputs. The count and each dtype must equal ``Tout`` exactly, else `InvalidArgumentError`
(``<token> returns 2 values, but expects to see 1 values.``, ``0-th value returned by <token> is
float64, but expects float32``); an unsupported element or numpy type is `UnimplementedError`.
Outputs are private copies, so the callable may keep or change what it returned.

An exception from the callable fails the step with TF's mapping: ValueError/TypeError ->
`InvalidArgumentError`, StopIteration -> `OutOfRangeError`, MemoryError ->
`ResourceExhaustedError`, NotImplementedError -> `UnimplementedError`, anything else ->
`UnknownError`; the message is ``<Type>: <text>`` and the traceback. A token with no callable in
this process (the op ran in another process, e.g. on a ``tensorweave server`` task, or its graph
is gone) is `InvalidArgumentError` ``callback <token> is not found``.

The kernel is host-only (``HOST_ONLY``), and step-bound so that host
evaluation (constant folding, graph-construction constant values) never calls user code: TF
never folds a ``PyFunc``.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.graph.py_func_registry import lookup
from tensorweave.engine.graph.string_array import to_string_array
from tensorweave.engine.kernel import KernelContext

_RAISED_AS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...],
                        type[errors.OpError]], ...] = (
    ((ValueError, TypeError), errors.InvalidArgumentError),
    (StopIteration, errors.OutOfRangeError),
    (MemoryError, errors.ResourceExhaustedError),
    (NotImplementedError, errors.UnimplementedError),
)


def _argument(value: Any, dtype: dtypes.DType) -> Any:
    """An input as the callable sees it; a copy, so it may write to it freely."""
    if dtype.is_string:
        strings = np.array(value, dtype=object)
        return strings[()] if strings.ndim == 0 else strings
    return np.array(value)


def _failure(ctx: KernelContext, exc: Exception) -> errors.OpError:
    cls = next((c for kinds, c in _RAISED_AS if isinstance(exc, kinds)), errors.UnknownError)
    text = "".join(traceback.format_exception(exc))
    return cls(ctx.node_name, ctx.op, f"{type(exc).__name__}: {exc}\n{text}")


def _as_arrays(returned: Any) -> list[np.ndarray]:
    """What the callable returned, as arrays (``None``: no outputs)."""
    if returned is None:
        return []
    values = returned if isinstance(returned, (tuple, list)) else [returned]
    return [np.asarray(v) for v in values]


def _tensor_value(ctx: KernelContext, array: np.ndarray) -> np.ndarray:
    """A private copy of `array` as the tensor it will be: strings as an object array of
    `bytes` (never a padded ``S``/``U`` array)."""
    if array.dtype.kind not in "OSU":
        try:
            dtypes.as_dtype(array.dtype)
        except TypeError:
            raise errors.UnimplementedError(ctx.node_name, ctx.op,
                                            f"Unsupported numpy type {array.dtype}") from None
        return np.array(array, order="C")
    for element in array.reshape(-1):
        if not isinstance(element, (bytes, str)):
            raise errors.UnimplementedError(ctx.node_name, ctx.op,
                                            f"Unsupported object type {type(element).__name__}")
    return to_string_array(array)


def _check(ctx: KernelContext, token: str, values: Sequence[np.ndarray]) -> None:
    """The results' count and dtypes must be the node's, with no cast (as TF)."""
    want = ctx.output_dtypes
    if len(values) != len(want):
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op,
            f"{token} returns {len(values)} values, but expects to see {len(want)} values.")
    for i, (value, dtype) in enumerate(zip(values, want)):
        got = dtypes.as_dtype(value.dtype)
        if got != dtype:
            raise errors.InvalidArgumentError(
                ctx.node_name, ctx.op,
                f"{i}-th value returned by {token} is {got.name}, but expects {dtype.name}")


def py_func(ctx: KernelContext, _step: Any, *inputs: Any) -> Any:
    token = ctx.attrs["token"]
    func = lookup(token)
    if func is None:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op,
            f"callback {token} is not found: a py_func runs only in the process that created "
            "it, and its callable is not registered in this process")
    args = [_argument(x, t) for x, t in zip(inputs, ctx.attrs["Tin"])]
    try:
        # making arrays of the result is part of the call, as in TF's FuncRegistry (a ragged
        # list is the callable's ValueError)
        arrays = _as_arrays(func(*args))
    except Exception as exc:  # noqa: BLE001 - every failure of user code becomes an OpError
        raise _failure(ctx, exc) from exc
    outputs = [_tensor_value(ctx, a) for a in arrays]
    _check(ctx, token, outputs)
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    registry.add("PyFunc", device_type, py_func, needs_step=True)
    registry.add("PyFuncStateless", device_type, py_func, needs_step=True)
