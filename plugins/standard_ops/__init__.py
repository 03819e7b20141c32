"""The ``standard_ops`` plugin: OpDefs (signatures and shape functions) of the standard op set,
and their gradients.

Kernels live elsewhere (``tensorweave.plugins.kernels``, bound to devices by the ``cpu`` and
``gpu`` plugins), so a third party can add kernels for these ops on its own devices.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from types import ModuleType
from typing import Any

from tensorweave.engine.plugin_manager import hookimpl


@functools.cache
def _modules() -> tuple[ModuleType, ...]:
    """Every module of this package, in name order: one with ``register(registry)`` declares
    ops, one with ``register_gradients(registry)`` their gradients (no list to edit)."""
    return tuple(importlib.import_module(f"{__name__}.{info.name}")
                 for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name))


@hookimpl
def tensorweave_register_ops(registry: Any) -> None:
    for module in _modules():
        if hasattr(module, "register"):
            module.register(registry)


@hookimpl
def tensorweave_register_gradients(registry: Any) -> None:
    for module in _modules():
        if hasattr(module, "register_gradients"):
            module.register_gradients(registry)
