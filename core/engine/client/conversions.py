"""Composite values in `Session.run`: how a fetch or feed key that is not a tensor expands into
tensors (TF's ``register_session_run_conversion_functions``).

Contract: `register_session_run_conversion_functions(tensor_type, fetch_function,
feed_function)` makes `Session.run` (and `make_callable`) fetch an instance ``x`` of
`tensor_type` (or of a subclass) as the tensors of ``fetch_function(x) -> (tensors, rebuild)``,
answering ``rebuild(values)`` with their values in that order, and feed a key ``x`` of that type
the pairs ``feed_function(x, value) -> [(tensor, value), ...]`` (which raises `TypeError` for a
value it cannot take). A type registered twice raises `ValueError`, as in TF. The library
registers `SparseTensor`, `RaggedTensor` and `IndexedSlices` this way; the engine knows none of
them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

FetchFunction = Callable[[Any], tuple[Sequence[Any], Callable[[list[Any]], Any]]]
FeedFunction = Callable[[Any, Any], Sequence[tuple[Any, Any]]]


@attrs.frozen
class Conversion:
    """How one composite type is fetched and fed."""

    fetch: FetchFunction
    feed: FeedFunction | None


_CONVERSIONS: dict[type, Conversion] = {}


def register_session_run_conversion_functions(
        tensor_type: type, fetch_function: FetchFunction,
        feed_function: FeedFunction | None = None,
        feed_function_for_partial_run: Callable[[Any], Sequence[Any]] | None = None) -> None:
    """Register how `Session.run` fetches and feeds `tensor_type`; see the module docstring.
    `feed_function_for_partial_run` is TF's argument for ``partial_run``, accepted and unused."""
    if tensor_type in _CONVERSIONS:
        raise ValueError(f"{tensor_type} has already been registered so ignore it.")
    _CONVERSIONS[tensor_type] = Conversion(fetch_function, feed_function)


def conversion_of(value: Any) -> Conversion | None:
    """The conversion registered for `value`'s type or its nearest registered base class."""
    if not _CONVERSIONS:
        return None
    for kind in type(value).__mro__:
        found = _CONVERSIONS.get(kind)
        if found is not None:
            return found
    return None
