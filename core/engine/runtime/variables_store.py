"""Variable storage on a device: what a ``VariableV2`` node hands to the ops that use it.

Contract: a `VariableRef` lives in its device's resource store under the variable's shared name
and survives across steps (and, on a server, across sessions). Ops that take a ref input
(``Assign``, ``AssignAdd``, ...) receive the `VariableRef`; every other consumer receives its
current value, and reading an uninitialized variable raises `FailedPreconditionError`. A stored
value is read-only, and a value already read keeps its contents: an update either stores a new
array or, through `updatable`, changes the stored host array in place only when nothing but the
variable refers to it (as TF forwards a buffer it holds the only reference to), so that a sparse
update costs the rows it touches, not a copy of the whole variable. A read racing with such an
update (another step, with no lock) may see it half done, as in TF.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np

from tensorweave.engine import errors

# references to the stored array while `updatable` checks it: the ref's, its local name and
# the argument of sys.getrefcount
_SOLE_REFERENCES = 3


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

    def updatable(self) -> Any:
        """The value to update and then `store`: the stored array itself, made writable, when
        no reader holds it (nothing but this ref refers to it), else a writable copy. Device
        (non-numpy) arrays are always copied: a kernel queued on another stream may still read
        them. The caller must hold no reference to the current value of its own."""
        value = self.read()
        if type(value) is np.ndarray and value.base is None \
                and sys.getrefcount(value) <= _SOLE_REFERENCES:
            value.flags.writeable = True
            return value
        return value.copy()

    def store(self, value: Any) -> Any:
        flags = getattr(value, "flags", None)  # cupy's flags have no `writeable`
        if getattr(flags, "writeable", False) and flags.owndata:
            flags.writeable = False
        self.value = value
        return value


class FetchedRef:
    """A fetched variable (its ref, not a snapshot), read when the step's partitions have all
    finished, so a step that fetches a variable it also updates returns the updated value, as
    TF's fetch of a ref does (``sess.run([train_op, global_step])``)."""

    __slots__ = ("ref", "node", "device")

    def __init__(self, ref: VariableRef, node: str, device: Any) -> None:
        self.ref, self.node, self.device = ref, node, device

    def read(self) -> Any:
        """The host value (`FailedPreconditionError` for an uninitialized variable)."""
        return self.device.to_host(self.ref.read())


def deref(value: Any) -> Any:
    """The value behind a `VariableRef`; anything else unchanged."""
    return value.read() if type(value) is VariableRef else value
