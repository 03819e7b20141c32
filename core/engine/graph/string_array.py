"""String tensor values: numpy object arrays whose elements are `bytes`.

Contract: `to_string_array(value)` turns a `str`, `bytes`, (nested) lists of them or a numpy
``S``/``U``/object array into a new object array of `bytes` (str encoded as UTF-8, as TF
does), and raises `TypeError` naming the first element that is neither. `string_nbytes(array)`
is the number of bytes a string array's elements hold.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _as_bytes(element: Any) -> bytes:
    if isinstance(element, bytes):  # np.bytes_ included
        return bytes(element)
    if isinstance(element, str):  # np.str_ included
        return element.encode("utf-8")
    raise TypeError(f"Expected string, got {element!r} of type '{type(element).__name__}' "
                    "instead.")


def to_string_array(value: Any) -> np.ndarray:
    """`value` as an object array of `bytes`; `TypeError` for any non-string element."""
    source = np.asarray(value, dtype=object)
    out = np.empty(source.shape, dtype=object)
    flat = out.reshape(-1)
    for i, element in enumerate(source.reshape(-1)):
        flat[i] = _as_bytes(element)
    return out


def string_nbytes(array: np.ndarray) -> int:
    """Total length of a string array's elements (what its values occupy, unlike ``nbytes``,
    which counts only the object pointers)."""
    return sum(len(e) for e in array.reshape(-1))
