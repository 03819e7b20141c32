"""TF's per-collection proto functions (``ops.register_proto_function``): how a meta graph
writes and reads back the items of a collection whose items are neither tensors, operations
nor plain values.

Contract: `register_proto_function(name, proto_type, to_proto, from_proto)` records, for the
collection `name`, the message class its items become, ``to_proto(item, export_scope=None)``
(the message, or ``None`` to leave the item out) and ``from_proto(message,
import_scope=None)`` (the item). A meta graph's exporter writes such a collection as a
``bytes_list`` of those messages and its importer rebuilds the items with `from_proto`. The
library registers its own (the control-flow contexts) when it is imported; registering a name
again replaces its functions, as TF's registry does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["get_collection_proto_type", "get_from_proto_function", "get_to_proto_function",
           "register_proto_function"]

_proto_types: dict[str, type] = {}
_to_proto: dict[str, Callable[..., Any]] = {}
_from_proto: dict[str, Callable[..., Any]] = {}


def register_proto_function(collection_name: str, proto_type: type | None = None,
                            to_proto: Callable[..., Any] | None = None,
                            from_proto: Callable[..., Any] | None = None) -> None:
    """Record how the items of `collection_name` are written and read (see the module
    docstring); the arguments left ``None`` are not recorded."""
    for table, value in ((_proto_types, proto_type), (_to_proto, to_proto),
                         (_from_proto, from_proto)):
        if value is not None:
            table[collection_name] = value


def get_collection_proto_type(collection_name: str) -> type | None:
    """The message class registered for `collection_name`, or ``None``."""
    return _proto_types.get(collection_name)


def get_to_proto_function(collection_name: str) -> Callable[..., Any] | None:
    """The ``to_proto`` registered for `collection_name`, or ``None``."""
    return _to_proto.get(collection_name)


def get_from_proto_function(collection_name: str) -> Callable[..., Any] | None:
    """The ``from_proto`` registered for `collection_name`, or ``None``."""
    return _from_proto.get(collection_name)
