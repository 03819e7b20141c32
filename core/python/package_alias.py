"""Importing a tensorweave package, and each of its submodules, under a second name.

Contract: after `install({"a.alias": "a.real"})`, importing ``a.alias`` or ``a.alias.x.y`` gives
the module object ``a.real`` / ``a.real.x.y`` itself (imported on first use), so its classes and
module state are shared rather than loaded twice. The real module keeps its own ``__name__`` and
``__spec__``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType


class _ExistingModule(importlib.abc.Loader):
    """Hands the import system an already imported module."""

    def __init__(self, module: ModuleType) -> None:
        self._module = module
        self._spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self._module

    def exec_module(self, module: ModuleType) -> None:
        # The import system has just stamped the alias's spec on the module; give it back its own.
        module.__spec__ = self._spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def __init__(self, aliases: Mapping[str, str]) -> None:
        self._aliases = dict(aliases)

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        for alias, real in self._aliases.items():
            if fullname == alias or fullname.startswith(alias + "."):
                module = importlib.import_module(real + fullname[len(alias):])
                return importlib.machinery.ModuleSpec(fullname, _ExistingModule(module),
                                                      is_package=hasattr(module, "__path__"))
        return None


def install(aliases: Mapping[str, str]) -> None:
    """Make each alias name import its real package; see the module docstring."""
    sys.meta_path.insert(0, _AliasFinder(aliases))
