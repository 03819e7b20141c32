"""Variable storage on a device: what a ``VariableV2`` node hands to the ops that use it.

Contract: a `VariableRef` lives in its device's resource store under the variable's shared name
and survives across steps (and, on a server, across sessions). Ops that take a ref input
(``Assign``, ``AssignAdd``, ...) receive the `VariableRef`; every other consumer receives its
current value, and reading an uninitialized variable raises `FailedPreconditionError`. Values are
never mutated in place: an assignment stores a new read-only array, so a value already read keeps
its contents.
"""

from __future__ import annotations

import threading
from typing import Any

from tensorweave import errors


class VariableRef:
    """A variable's slot on a device."""

    __slots__ = ("name", "value", "lock")

    def __init__(self, name: str) -> None:
        self.name = name
        self.value: Any = None
        self.lock = threading.Lock()

    def read(self) -> Any:
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized value {self.name}")
        return value

    def store(self, value: Any) -> Any:
        flags = getattr(value, "flags", None)  # cupy's flags have no `writeable`
        if getattr(flags, "writeable", False) and flags.owndata:
            flags.writeable = False
        self.value = value
        return value


def deref(value: Any) -> Any:
    """The value behind a `VariableRef`; anything else unchanged."""
    return value.read() if type(value) is VariableRef else value
