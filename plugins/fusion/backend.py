"""The fusion backend: numba, found without importing it, compiled into numpy ufuncs.

Contract: `unavailable()` is None when numba can be imported, else the reason (checked once,
by the import machinery's `find_spec`, so that loading the plugin does not pay numba's import
time). `ufunc(source, input_dtypes, output_dtype)` compiles the scalar function in `source`
(see `program.scalar_source`) with numba's ``vectorize`` for exactly those dtypes and returns
the plain numpy ufunc (numba's own wrapper adds a Python call to every use): it broadcasts as
numpy does and returns the output dtype. Compiled ufuncs are kept per (source, dtypes) for the
process, since the same region recurs in every graph that builds the same layer. The choice
of numba over numexpr is measured in ``benchmarks/fusion_backends.py``.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorweave.engine.dtypes import DType

MODULE = "numba"
_compiling = threading.Lock()


@functools.cache
def unavailable() -> str | None:
    """Why the backend cannot be used, or None."""
    try:
        found = importlib.util.find_spec(MODULE) is not None
    except (ImportError, ValueError):  # a blocked or half-removed module
        found = False
    if not found:
        return f"{MODULE} is not installed (pip install 'tensorweave[fusion]')"
    return None


def _numba() -> Any:
    import numba

    return numba


def ufunc(source: str, input_dtypes: Sequence[DType], output_dtype: DType) -> np.ufunc:
    """The numpy ufunc computing `source`'s ``fused`` over these dtypes."""
    return _compiled(source, tuple(d.name for d in input_dtypes), output_dtype.name)


@functools.lru_cache(maxsize=4096)
def _compiled(source: str, input_names: tuple[str, ...], output_name: str) -> np.ufunc:
    numba = _numba()
    scope: dict[str, Any] = {"np": np}
    scope.update({name: getattr(np, name) for name in (*input_names, output_name)})
    exec(compile(source, "<fused elementwise>", "exec"), scope)  # text made by scalar_source
    signature = getattr(numba, output_name)(*(getattr(numba, n) for n in input_names))
    with _compiling:  # numba's compiler is not thread-safe
        return numba.vectorize([signature], nopython=True)(scope["fused"]).ufunc
