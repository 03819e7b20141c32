"""numpy's floating-point warnings off for a step, at the cost of two context-variable calls.

Contract: ``token = silence()`` makes the calling thread (and context) run numpy with every
floating-point error ignored, exactly as ``np.errstate(all="ignore")`` would from the state in
force; ``restore(token)`` puts that state back, and calls must nest. TF yields inf/NaN silently,
so every partition runs between the two.

Why not ``np.errstate`` itself: numpy 2 builds a new error state object each time it is entered
(about 1.5 us, a tenth of a small step). Here the silenced state is built once per state it is
derived from (the caller's, compared by identity) and set directly. numpy 1.x, which keeps the
state elsewhere, gets ``np.errstate`` per call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:  # numpy >= 2: the error state is one context variable
    from numpy._core._ufunc_config import _extobj_contextvar as _state
except ImportError:  # numpy 1.x keeps it elsewhere
    _state = None

# (a state in force, the same state with every error ignored), replaced whole (threads share it)
_derived: tuple[Any, Any] = (None, None)


def silence() -> Any:
    """Ignore numpy's floating-point errors until `restore` of the token returned."""
    global _derived
    if _state is None:  # numpy 1.x
        state = np.errstate(all="ignore")
        state.__enter__()
        return state
    outer = _state.get()
    derived = _derived
    if derived[0] is not outer:
        with np.errstate(all="ignore"):
            derived = _derived = (outer, _state.get())
    return _state.set(derived[1])


def restore(token: Any) -> None:
    """Put back the floating-point error state that `silence` replaced."""
    if _state is None:  # numpy 1.x
        token.__exit__(None, None, None)
        return
    _state.reset(token)
