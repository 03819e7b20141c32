"""User tensor conversion functions: `tf.register_tensor_conversion_function`.

Contract: `register_tensor_conversion_function(base_type, conversion_func, priority=100)` records
a function ``conversion_func(value, dtype=None, name=None, as_ref=False)`` for instances of
`base_type` (a type or a tuple of types). `convert_registered` is the hook `convert_to_tensor`
calls first: it runs the matching functions in TF's order (smaller priority first, then
registration order) and returns the first result that is not `NotImplemented`, or None when the
built-in conversion should decide.

TF registers its own conversions in the same table, before any user's: autopacking of lists and
tuples at priority 99, tensors and variables at 100, and the `Const` conversion of any `object`
at 200. Those are tensorweave's built-in path, so a user function runs only when its priority is
smaller than the built-in one matching the value (at equal priority the built-in was registered
first and always answers). Python numbers, numpy scalars and arrays never consult the table, and
registering for them is a `TypeError`, as in TF.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.engine import dtypes

ConversionFunc = Callable[..., Any]

_UNCONVERTIBLE_TYPES = (int, float, np.generic, np.ndarray)

_lock = threading.Lock()
_order = itertools.count()
# (priority, registration order, base types, function), kept sorted.
_registry: list[tuple[int, int, tuple[type, ...], ConversionFunc]] = []


def register_tensor_conversion_function(base_type: type | tuple[type, ...],
                                        conversion_func: ConversionFunc,
                                        priority: int = 100) -> None:
    """Register `conversion_func` for instances of `base_type`; see the module docstring."""
    base_types = base_type if isinstance(base_type, tuple) else (base_type,)
    if any(not isinstance(t, type) for t in base_types):
        raise TypeError("base_type must be a type or a tuple of types.")
    if any(issubclass(t, _UNCONVERTIBLE_TYPES) for t in base_types):
        raise TypeError("Cannot register conversions for Python numeric types and "
                        "NumPy scalars and arrays.")
    if not callable(conversion_func):
        raise TypeError("conversion_func must be callable.")
    with _lock:
        _registry.append((priority, next(_order), base_types, conversion_func))
        _registry.sort(key=lambda entry: entry[:2])


def _builtin_priority(value: Any) -> int:
    from tensorweave.engine.graph.graph import Tensor

    if isinstance(value, (list, tuple)):
        return 99
    if isinstance(value, Tensor) or hasattr(value, "_as_tensor"):
        return 100
    return 200


def convert_registered(value: Any, dtype: dtypes.DType | None, name: str | None,
                       preferred_dtype: Any, as_ref: bool) -> Any:
    """The tensor a registered function makes of `value`, or None to use the built-in path."""
    if not _registry or isinstance(value, _UNCONVERTIBLE_TYPES):
        return None
    from tensorweave.engine.graph.graph import Tensor

    builtin = _builtin_priority(value)
    funcs = [f for priority, _, types, f in list(_registry)
             if priority < builtin and isinstance(value, types)]
    preferred = None if preferred_dtype is None else dtypes.as_dtype(preferred_dtype)
    for func in funcs:
        result = None
        if dtype is None and preferred is not None:
            try:
                result = func(value, dtype=preferred, name=name, as_ref=as_ref)
            except (TypeError, ValueError):
                result = None  # TF retries without the preferred dtype
            if result is not None and result is not NotImplemented \
                    and result.dtype.base_dtype != preferred.base_dtype:
                raise TypeError(f"convert_to_tensor did not convert to the preferred dtype: "
                                f"{result.dtype.base_dtype} vs {preferred.base_dtype} ")
        if result is None:
            result = func(value, dtype=dtype, name=name, as_ref=as_ref)
        if result is NotImplemented:
            continue
        if not isinstance(result, Tensor):
            raise RuntimeError(f"Conversion function {func!r} for type {type(value)} returned "
                               f"non-Tensor: {result!r}")
        if dtype is not None and result.dtype.base_dtype != dtype.base_dtype:
            raise RuntimeError(f"Conversion function {func!r} for type {type(value)} returned "
                               f"incompatible dtype: requested = {dtype.name}, "
                               f"actual = {result.dtype.name}")
        return result
    return None
