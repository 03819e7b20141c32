"""Kernel bodies written once against an array module ``xp`` (``ctx.xp``).

Each module here that has ``register(registry, device_type)`` is a kernel module; the CPU plugin
binds every one of them to numpy devices, and the GPU plugin binds those that do not declare
``HOST_ONLY = True`` to cupy devices. A new module is found by its presence here (no list to
edit); modules without ``register`` are helpers.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from types import ModuleType


@functools.cache
def kernel_modules() -> tuple[ModuleType, ...]:
    """Every kernel module of this package, in name order."""
    found = (importlib.import_module(f"{__name__}.{info.name}")
             for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name))
    return tuple(module for module in found if hasattr(module, "register"))


def device_kernel_modules() -> tuple[ModuleType, ...]:
    """The kernel modules that any device may run (not ``HOST_ONLY``)."""
    return tuple(m for m in kernel_modules() if not getattr(m, "HOST_ONLY", False))
