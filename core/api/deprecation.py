"""TF1's renamed arguments: one value under either of two names, never both.

Contract: `deprecated_argument_lookup(new_name, new_value, old_name, old_value)` is TF's
``deprecation.deprecated_argument_lookup``: it returns whichever value is not ``None`` (``None``
when neither is given) and raises `ValueError` naming both when both are.
"""

from __future__ import annotations

from typing import Any


def deprecated_argument_lookup(new_name: str, new_value: Any, old_name: str,
                               old_value: Any) -> Any:
    """The value of an argument that TF1 also accepts under `old_name` (``keep_dims``,
    ``reduction_indices``, ``dim``, ...)."""
    if old_value is None:
        return new_value
    if new_value is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'.")
    return old_value
