"""Loading plugins and building the frozen registries.

Contract: `get_registries()` loads every entry point of the ``tensorweave`` group once per process
(minus those named in ``TENSORWEAVE_DISABLE_PLUGINS``, which are never imported), calls the
registration hooks once per plugin, freezes the result and caches it. A plugin that fails to load
is skipped with a `PluginLoadWarning` naming it, or raises `PluginError` when
``TENSORWEAVE_STRICT_PLUGINS=1``. `reset()` drops the cache (tests, after changing sys.path or the
environment).
"""

from __future__ import annotations

import os
import threading
import warnings
from importlib.metadata import entry_points
from typing import Any

import attrs
import pluggy

from tensorweave.engine import hookspecs
from tensorweave.engine.registry import (
    GradientRegistry,
    KernelRegistry,
    NamedRegistry,
    OpRegistry,
    PluginConflictError,
    PluginError,
)

GROUP = "tensorweave"
hookimpl = pluggy.HookimplMarker("tensorweave")


class PluginLoadWarning(UserWarning):
    """A plugin could not be loaded and was skipped."""


@attrs.frozen
class PluginInfo:
    """What ``tensorweave plugins`` shows for one plugin."""

    name: str
    version: str
    module: str
    status: str  # "loaded", "disabled" or "failed: ..."


@attrs.frozen
class Registries:
    """Everything the plugins registered, frozen."""

    manager: pluggy.PluginManager
    ops: OpRegistry
    kernels: KernelRegistry
    gradients: GradientRegistry
    passes: tuple[Any, ...]
    partitioner: Any
    transports: NamedRegistry
    plugins: tuple[PluginInfo, ...]


_lock = threading.RLock()
_cached: Registries | None = None


def disabled_plugins() -> set[str]:
    raw = os.environ.get("TENSORWEAVE_DISABLE_PLUGINS", "")
    return {name.strip() for name in raw.split(",") if name.strip()}


def _strict() -> bool:
    return os.environ.get("TENSORWEAVE_STRICT_PLUGINS", "") not in ("", "0", "false", "False")


def _load(pm: pluggy.PluginManager) -> list[PluginInfo]:
    disabled = disabled_plugins()
    infos: list[PluginInfo] = []
    seen: set[str] = set()
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        if ep.name in seen:  # the same distribution visible twice on sys.path
            continue
        seen.add(ep.name)
        version = ep.dist.version if ep.dist is not None else "?"
        if ep.name in disabled:
            infos.append(PluginInfo(ep.name, version, ep.value, "disabled"))
            continue
        try:
            pm.register(ep.load(), name=ep.name)
        except Exception as exc:  # a broken third-party plugin must not take the rest down
            message = f"tensorweave plugin '{ep.name}' ({ep.value}) failed to load: {exc!r}"
            if _strict():
                raise PluginError(message) from exc
            warnings.warn(message, PluginLoadWarning, stacklevel=3)
            infos.append(PluginInfo(ep.name, version, ep.value, f"failed: {exc!r}"))
            continue
        infos.append(PluginInfo(ep.name, version, ep.value, "loaded"))
    return infos


def _per_plugin(pm: pluggy.PluginManager, hook_name: str) -> list[tuple[str, Any]]:
    """(plugin name, hook function) for each implementation, in registration order."""
    hook = getattr(pm.hook, hook_name)
    return [(impl.plugin_name, impl.function) for impl in reversed(hook.get_hookimpls())]


def _build() -> Registries:
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    from tensorweave.engine.runtime import (  # the runtime's own ops cannot be disabled
        internal_ops,
    )

    pm.register(internal_ops, name="runtime")
    infos = _load(pm)

    ops, kernels, gradients = OpRegistry(), KernelRegistry(), GradientRegistry()
    for plugin, fn in _per_plugin(pm, "tensorweave_register_ops"):
        fn(registry=ops.bind(plugin))
    for plugin, fn in _per_plugin(pm, "tensorweave_register_kernels"):
        fn(registry=kernels.bind(plugin))
    for plugin, fn in _per_plugin(pm, "tensorweave_register_gradients"):
        fn(registry=gradients.bind(plugin))
    passes: list[Any] = []
    for _, fn in _per_plugin(pm, "tensorweave_graph_passes"):
        passes.extend(fn())
    transports = NamedRegistry("transport")
    for plugin, fn in _per_plugin(pm, "tensorweave_transports"):
        for transport in fn():
            transports._add(transport.scheme, transport, plugin, getattr(transport, "priority", 0))
    for registry in (ops, kernels, gradients, transports):
        registry.freeze()
    return Registries(
        manager=pm, ops=ops, kernels=kernels, gradients=gradients,
        passes=tuple(sorted(passes, key=lambda p: (p.phase, p.order, p.name))),
        partitioner=pm.hook.tensorweave_partitioner(), transports=transports,
        plugins=tuple(infos),
    )


def get_registries() -> Registries:
    """The process-wide frozen registries, built on first use."""
    global _cached
    if _cached is None:
        with _lock:
            if _cached is None:
                _cached = _build()
    return _cached


def reset() -> None:
    """Forget the registries; the next `get_registries()` reloads every plugin."""
    global _cached
    with _lock:
        _cached = None
        from tensorweave.api import raw_ops

        raw_ops.clear_cache()


__all__ = [
    "PluginConflictError", "PluginError", "PluginInfo", "PluginLoadWarning", "Registries",
    "get_registries", "hookimpl", "reset",
]
