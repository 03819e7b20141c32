"""The op and kernel registries that plugins fill.

Contract: registries are filled once, by the plugin manager calling each plugin's hook with a
view bound to that plugin's name, then frozen; after `freeze()` they only answer look-ups. Two
plugins claiming the same op name, or overlapping (op, device type, dtype) kernels, are settled by
the higher explicit `priority`; equal priorities raise `PluginConflictError` naming both plugins.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from tensorweave.engine import dtypes as _dtypes
from tensorweave.engine.kernel import ANY_DEVICE, KernelDef
from tensorweave.engine.op_def import OpDef


class PluginError(RuntimeError):
    """A plugin could not be loaded or registered something invalid."""


class PluginConflictError(PluginError):
    """Two plugins claim the same thing at the same priority."""


@attrs.define
class _Entry:
    value: Any
    plugin: str
    priority: int


class NamedRegistry:
    """Name -> one value (an `OpDef`, a gradient function, a transport), with its plugin."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, _Entry] = {}
        self._frozen = False

    def _add(self, name: str, value: Any, plugin: str, priority: int) -> None:
        if self._frozen:
            raise PluginError(f"the {self.kind} registry is frozen")
        old = self._entries.get(name)
        if old is not None:
            if old.priority == priority:
                raise PluginConflictError(
                    f"{self.kind} '{name}' is registered by both plugin '{old.plugin}' and "
                    f"plugin '{plugin}' at priority {priority}; give one a higher priority"
                )
            if old.priority > priority:
                return
        self._entries[name] = _Entry(value, plugin, priority)

    def freeze(self) -> None:
        self._frozen = True

    def get(self, name: str) -> Any:
        entry = self._entries.get(name)
        return None if entry is None else entry.value

    def plugin_of(self, name: str) -> str:
        return self._entries[name].plugin

    def names(self) -> list[str]:
        return sorted(self._entries)

    def by_plugin(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for name, entry in sorted(self._entries.items()):
            out[entry.plugin].append(name)
        return out

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)


class OpRegistry(NamedRegistry):
    """Op name -> `OpDef`."""

    def __init__(self) -> None:
        super().__init__("op")

    def bind(self, plugin: str) -> OpRegistration:
        return OpRegistration(self, plugin)


class GradientRegistry(NamedRegistry):
    """Op name -> gradient function ``grad(op, *output_grads) -> list of input grads``."""

    def __init__(self) -> None:
        super().__init__("gradient")

    def bind(self, plugin: str) -> GradientRegistration:
        return GradientRegistration(self, plugin)


@attrs.define
class GradientRegistration:
    """The view of the gradient registry a plugin's hook receives."""

    registry: GradientRegistry
    plugin: str

    def add(self, op: str, fn: Callable[..., Any] | None, priority: int = 0) -> None:
        """Register `fn` as `op`'s gradient; ``None`` declares `op` not differentiable."""
        self.registry._add(op, fn, self.plugin, priority)


@attrs.define
class OpRegistration:
    """The view of the op registry a plugin's hook receives."""

    registry: OpRegistry
    plugin: str

    def add(self, op_def: OpDef, priority: int = 0) -> None:
        self.registry._add(op_def.name, op_def, self.plugin, priority)

    def op(self, name: str, inputs: Iterable[str], infer: Callable[..., Any], *,
           priority: int = 0, **kwargs: Any) -> OpDef:
        """Declare and register an `OpDef` in one call."""
        op_def = OpDef(name=name, inputs=tuple(inputs), infer=infer, **kwargs)
        self.add(op_def, priority)
        return op_def


class KernelRegistry:
    """(op, device type, dtype) -> the `KernelDef` that runs it."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, str], list[KernelDef]] = defaultdict(list)
        self._frozen = False

    def bind(self, plugin: str) -> KernelRegistration:
        return KernelRegistration(self, plugin)

    def _add(self, kernel: KernelDef) -> None:
        if self._frozen:
            raise PluginError("the kernel registry is frozen")
        self._by_key[(kernel.op, kernel.device_type)].append(kernel)

    def freeze(self) -> None:
        """Check every overlap once; afterwards each list is sorted best first."""
        for (op, device_type), kernels in self._by_key.items():
            kernels.sort(key=lambda k: -k.priority)
            for i, a in enumerate(kernels):
                for b in kernels[i + 1:]:
                    if a.priority == b.priority and a.overlaps(b):
                        raise PluginConflictError(
                            f"kernel for op '{op}' on device type {device_type} is registered by "
                            f"both plugin '{a.plugin}' and plugin '{b.plugin}' for overlapping "
                            f"dtypes at priority {a.priority}; give one a higher priority"
                        )
        self._frozen = True

    def lookup(self, op: str, device_type: str, dtype: _dtypes.DType | None) -> KernelDef | None:
        for key in ((op, device_type), (op, ANY_DEVICE)):
            for kernel in self._by_key.get(key, ()):
                if kernel.matches(dtype):
                    return kernel
        return None

    def device_types_for(self, op: str) -> list[str]:
        return sorted({dt for (o, dt) in self._by_key if o == op})

    def all(self) -> list[KernelDef]:
        return [k for ks in self._by_key.values() for k in ks]


@attrs.define
class KernelRegistration:
    """The view of the kernel registry a plugin's hook receives."""

    registry: KernelRegistry
    plugin: str

    def add(self, op: str, device_type: str, fn: Callable[..., Any], *,
            dtypes: Iterable[_dtypes.DType] | None = None, priority: int = 0,
            is_async: bool = False, needs_step: bool = False, expensive: bool = False) -> None:
        self.registry._add(KernelDef(
            op=op, device_type=device_type, fn=fn, plugin=self.plugin,
            dtypes=None if dtypes is None else frozenset(dtypes), priority=priority,
            is_async=is_async, needs_step=needs_step, expensive=expensive,
        ))
