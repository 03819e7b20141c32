"""Constants and conversion of Python and numpy values to tensors.

Contract: `convert_to_tensor` returns a `Tensor` for a `Tensor`, for anything with an
``_as_tensor(dtype)`` method (variables), and for Python/numpy values (as a new ``Const``). Python
floats default to float32 and ints to int32 (int64 when they do not fit), numpy arrays keep their
dtype, and str/bytes values become `string` tensors (object arrays of bytes), as in TF. A value
that does not fit the requested dtype raises `TypeError`; a tensor of
another dtype raises `ValueError`, both as TF does. Functions registered with
`tf.register_tensor_conversion_function` are tried first (`tensor_conversion_registry`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Graph, Operation, Tensor, get_default_graph
from tensorweave.engine.graph.string_array import to_string_array
from tensorweave.engine.graph.tensor_conversion_registry import convert_registered


def is_tensor_like(value: Any) -> bool:
    return isinstance(value, Tensor) or hasattr(value, "_as_tensor")


def to_numpy(value: Any, dtype: dtypes.DType | None = None) -> np.ndarray:
    """`value` as an array of `dtype` (or TF's default dtype for it); `TypeError` if it does not
    fit."""
    if isinstance(value, (Tensor, Operation)):
        raise TypeError(f"Cannot convert {value!r} to a constant value.")
    if value is None:
        # TF refuses a bare None (e.g. a variable's missing gradient) with ValueError.
        raise ValueError("None values not supported.")
    arr = np.asarray(value)
    if dtype is not None and dtype.is_string or dtype is None and arr.dtype.kind in "USO":
        return to_string_array(value)
    if arr.dtype.kind in "USO":
        raise TypeError(f"Failed to convert elements of {value!r} to Tensor: "
                        f"unsupported element type {arr.dtype}.")
    if dtype is None:
        # Python numbers default to float32/int32 (int64 if too big); numpy values keep theirs.
        from_python = not isinstance(value, (np.ndarray, np.generic))
        if arr.dtype == np.float64 and from_python:
            return arr.astype(np.float32)
        if arr.dtype == np.int64 and from_python:
            fits = arr.size == 0 or (arr.min() >= -2**31 and arr.max() < 2**31)
            return arr.astype(np.int32 if fits else np.int64)
        dtypes.as_dtype(arr.dtype)  # TypeError for dtypes tensorweave lacks
        return arr
    target = np.dtype(dtype.np_type)
    if target == np.uint64 and arr.dtype == np.float64 and not isinstance(value, np.ndarray):
        arr = _exact_uint64(value, arr)
    if arr.size and ((arr.dtype.kind == "b") != (target.kind == "b")):
        raise TypeError(f"Expected {dtype.name}, got {value!r} of type "
                        f"'{type(value).__name__}' instead.")
    converted = arr.astype(target)
    # TF casts a numpy value to the dtype asked for as numpy's astype does, and Python ints
    # wrap into a narrower integer dtype (-1 as uint8 is 255): TF 1.15 relies on numpy 1.x's
    # np.array(values, dtype), which wraps.
    if isinstance(value, (np.ndarray, np.generic)) or arr.dtype.kind in "iu" \
            and target.kind in "iu":
        return converted
    if target.kind in "iu" and arr.size and arr.dtype.kind in "fiu":
        with np.errstate(invalid="ignore"):
            # uint64 -> int64 wraps back to a negative input, so check the sign separately
            negative = target.kind == "u" and arr.dtype.kind != "u" and bool((arr < 0).any())
            if negative or not np.array_equal(converted.astype(arr.dtype), arr):
                raise TypeError(f"Expected {dtype.name}, got {value!r} of type "
                                f"'{type(value).__name__}' instead.")
    return converted


def _exact_uint64(value: Any, arr: np.ndarray) -> np.ndarray:
    """numpy reads Python ints of 2**63 and more as float64: keep them exact for uint64 when every
    element is a Python int (negative or too big ones then fail the fit check as float64 does)."""
    items = np.array(value, dtype=object)
    if not all(isinstance(v, int) and 0 <= v < 2**64 for v in items.flat):
        return arr
    return items.astype(np.uint64)


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str = "Const",
             verify_shape: bool = False, graph: Graph | None = None) -> Tensor:
    """Create a ``Const`` op holding `value` (broadcast or reshaped to `shape` if given)."""
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    arr = to_numpy(value, dtype)
    if shape is not None:
        shape = [int(d) for d in np.atleast_1d(np.asarray(shape, dtype=np.int64))] \
            if np.ndim(shape) else ([] if np.asarray(shape).size == 0 else [int(shape)])
        if verify_shape and list(arr.shape) != shape:
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {arr.shape}.")
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), shape).copy()
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise TypeError(
                f"Eager execution of tf.constant with unsupported shape. Tensor {value!r} "
                f"(converted from {value!r}) has {arr.size} elements, but got `shape` "
                f"{tuple(shape)} with {int(np.prod(shape))} elements)."
            )
    arr = np.array(arr, order="C")  # a private copy, frozen so no kernel can change it
    arr.flags.writeable = False
    g = graph or get_default_graph()
    op = g.create_op("Const", [], {"value": arr, "dtype": dtypes.as_dtype(arr.dtype)}, name=name)
    return op.outputs[0]


def convert_to_tensor(value: Any, dtype: Any = None, name: str | None = None,
                      preferred_dtype: Any = None, graph: Graph | None = None,
                      as_ref: bool = False) -> Tensor:
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    registered = convert_registered(value, dtype, name, preferred_dtype, as_ref)
    if registered is not None:
        return registered
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
                f"{value.dtype.name}: {value!r}"
            )
        return value
    if hasattr(value, "_as_tensor"):
        return value._as_tensor(dtype)
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, preferred_dtype, name=name or "Const", graph=graph)
        except TypeError:
            pass
    if isinstance(value, (list, tuple)) and _holds_tensors(value) and _pack is not None:
        # TF packs only when the elements' dtype is the one asked for.
        for v in value:
            if is_tensor_like(v) and dtype is not None and v.dtype != dtype:
                raise TypeError(f"Expected {dtype.name}, got {v!r} of type "
                                f"'{type(v).__name__}' instead.")
        return _pack([convert_to_tensor(v, dtype) if isinstance(v, (list, tuple)) else v
                      for v in value], name=name or "packed")
    return constant(value, dtype, name=name or "Const", graph=graph)


_pack: Callable[..., Tensor] | None = None


def register_autopacking(pack: Callable[..., Tensor]) -> None:
    """Make `convert_to_tensor` turn a list or tuple holding tensors into ``pack(values,
    name=...)`` (TF's autopacking, which ``array_ops`` registers with its ``stack``)."""
    global _pack
    _pack = pack


def _holds_tensors(value: list | tuple) -> bool:
    return any(is_tensor_like(v) or isinstance(v, (list, tuple)) and _holds_tensors(v)
               for v in value)
