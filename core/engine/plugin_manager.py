"""Loading plugins and building the frozen registries.

Contract: `get_registries()` loads every entry point of the ``tensorweave`` group once per process
(minus those named in ``TENSORWEAVE_DISABLE_PLUGINS``, which are never imported), calls the
registration hooks once per plugin, freezes the result and caches it. A plugin fails when its
import raises, when it implements a hook that no spec names (a misspelling: the error names the
plugin and the hook), or when one of its registration hooks raises; a failed plugin is left out
(the registries are built again without it) with a `PluginLoadWarning` that names it and points
at the plugin's own line, and ``tensorweave plugins`` lists it as failed. With
``TENSORWEAVE_STRICT_PLUGINS=1`` a failure raises `PluginError` instead. Two plugins that
register the same op, kernel, transport or pass place at the same priority raise
`PluginConflictError` naming both. A pass whose ``replaces`` names another pass takes that
pass's place. `call_per_plugin` calls a hook outside registry building (devices) with the same
isolation. `reset()` drops the cache (tests, after changing sys.path or the environment).
"""

from __future__ import annotations

import os
import threading
import traceback
import warnings
from collections.abc import Callable
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


class _HookError(Exception):
    """A plugin's hook raised while the registries were built."""

    def __init__(self, plugin: str, hook: str, error: Exception) -> None:
        super().__init__(plugin, hook, error)
        self.plugin, self.hook, self.error = plugin, hook, error


_ENGINE_DIR = os.path.dirname(os.path.abspath(__file__))


def _origin(error: BaseException) -> tuple[str, int]:
    """The plugin's own line in `error`'s traceback: its deepest frame outside pluggy, importlib
    and the engine (for a syntax error, the offending line)."""
    if isinstance(error, SyntaxError) and error.filename:
        return error.filename, error.lineno or 0
    frames = traceback.extract_tb(error.__traceback__)
    for frame in reversed(frames):
        path = os.path.abspath(frame.filename)
        if not (path.startswith(_ENGINE_DIR) or "pluggy" in path or "importlib" in path
                or frame.filename.startswith("<frozen")):
            return frame.filename, frame.lineno or 0
    return (frames[-1].filename, frames[-1].lineno or 0) if frames else ("<unknown>", 0)


def _report(message: str, error: BaseException) -> None:
    """Warn about a failed plugin at its own line, or raise in strict mode."""
    if _strict():
        raise PluginError(message) from error
    filename, lineno = _origin(error)
    warnings.warn_explicit(message, PluginLoadWarning, filename, lineno)


def _unknown_hooks(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    """The names `plugin` marks as hook implementations that no hook spec has."""
    return sorted(name for name in dir(plugin)
                  if pm.parse_hookimpl_opts(plugin, name) is not None  # type: ignore[arg-type]
                  and not hasattr(hookspecs, name))


def _load(pm: pluggy.PluginManager, failed: dict[str, str]) -> list[PluginInfo]:
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
        if ep.name in failed:
            infos.append(PluginInfo(ep.name, version, ep.value, failed[ep.name]))
            continue
        try:
            plugin = ep.load()
            unknown = _unknown_hooks(pm, plugin)
            if unknown:
                raise PluginError(
                    f"it implements {', '.join(repr(n) for n in unknown)}, which no hook spec "
                    f"names (misspelled?); the hooks are in tensorweave.engine.hookspecs")
            pm.register(plugin, name=ep.name)
        except Exception as exc:  # a broken third-party plugin must not take the rest down
            _report(f"tensorweave plugin '{ep.name}' ({ep.value}) failed to load: {exc}", exc)
            infos.append(PluginInfo(ep.name, version, ep.value, f"failed: {exc}"))
            continue
        infos.append(PluginInfo(ep.name, version, ep.value, "loaded"))
    return infos


def _per_plugin(pm: pluggy.PluginManager, hook_name: str) -> list[tuple[str, Any]]:
    """(plugin name, hook function) for each implementation, in the order pluggy calls them."""
    hook = getattr(pm.hook, hook_name)
    return [(impl.plugin_name, impl.function) for impl in reversed(hook.get_hookimpls())]


def _call(plugin: str, hook: str, fn: Callable[..., Any], **kwargs: Any) -> Any:
    try:
        return fn(**kwargs)
    except PluginConflictError:
        raise  # a conflict is between two plugins: it names both and leaves neither out
    except Exception as exc:
        raise _HookError(plugin, hook, exc) from exc


def _place_passes(found: list[tuple[str, Any]]) -> list[Any]:
    """The passes that run: a pass whose ``replaces`` names another takes its place; two
    plugins claiming one place (the same name, or replacing the same pass) conflict."""
    claims: dict[str, tuple[str, Any]] = {}
    for plugin, p in found:
        place = getattr(p, "replaces", None) or p.name
        old = claims.get(place)
        if old is not None:
            old_replaces = getattr(old[1], "replaces", None) is not None
            if old_replaces == (getattr(p, "replaces", None) is not None):
                first, second = sorted((old[0], plugin))
                raise PluginConflictError(
                    f"pass '{place}' is claimed by both plugin '{first}' and plugin '{second}'")
            if old_replaces:
                continue  # the replacement already holds the place
        claims[place] = (plugin, p)
    return [p for _, p in claims.values()]


def _build(failed: dict[str, str]) -> Registries:
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    from tensorweave.engine.runtime import (  # the runtime's own ops cannot be disabled
        internal_ops,
    )

    pm.register(internal_ops, name="runtime")
    infos = _load(pm, failed)
    pm.check_pending()  # _load left out every plugin with an unknown hook: nothing is pending

    ops, kernels, gradients = OpRegistry(), KernelRegistry(), GradientRegistry()
    for hook, registry in (("tensorweave_register_ops", ops),
                           ("tensorweave_register_kernels", kernels),
                           ("tensorweave_register_gradients", gradients)):
        for plugin, fn in _per_plugin(pm, hook):
            _call(plugin, hook, fn, registry=registry.bind(plugin))
    passes: list[tuple[str, Any]] = []
    for plugin, fn in _per_plugin(pm, "tensorweave_graph_passes"):
        passes.extend((plugin, p) for p in _call(plugin, "tensorweave_graph_passes", fn))
    transports = NamedRegistry("transport")
    for plugin, fn in _per_plugin(pm, "tensorweave_transports"):
        for transport in _call(plugin, "tensorweave_transports", fn):
            transports._add(transport.scheme, transport, plugin, getattr(transport, "priority", 0))
    partitioner = None
    for plugin, fn in _per_plugin(pm, "tensorweave_partitioner"):  # firstresult: first answer
        partitioner = _call(plugin, "tensorweave_partitioner", fn)
        if partitioner is not None:
            break
    for registry in (ops, kernels, gradients, transports):
        registry.freeze()
    return Registries(
        manager=pm, ops=ops, kernels=kernels, gradients=gradients,
        passes=tuple(sorted(_place_passes(passes), key=lambda p: (p.phase, p.order, p.name))),
        partitioner=partitioner, transports=transports, plugins=tuple(infos),
    )


def _build_leaving_out_failures() -> Registries:
    failed: dict[str, str] = {}
    while True:
        try:
            return _build(failed)
        except _HookError as exc:
            if exc.plugin == "runtime" or exc.plugin in failed:
                raise exc.error from None
            _report(f"tensorweave plugin '{exc.plugin}' failed in {exc.hook}: {exc.error!r}; it "
                    "is left out", exc.error)
            failed[exc.plugin] = f"failed: {exc.error!r} in {exc.hook}"


def call_per_plugin(registries: Registries, hook_name: str, **kwargs: Any) -> list[Any]:
    """Each plugin's result of `hook_name` in `registries` (None results dropped). A plugin
    whose hook raises is reported as at load time (`PluginLoadWarning` at its own line,
    `PluginError` when strict) and its result left out."""
    results = []
    for plugin, fn in _per_plugin(registries.manager, hook_name):
        try:
            result = fn(**kwargs)
        except Exception as exc:
            _report(f"tensorweave plugin '{plugin}' failed in {hook_name}: {exc!r}; its result "
                    "is left out", exc)
            continue
        if result is not None:
            results.append(result)
    return results


def get_registries() -> Registries:
    """The process-wide frozen registries, built on first use."""
    global _cached
    if _cached is None:
        with _lock:
            if _cached is None:
                _cached = _build_leaving_out_failures()
    return _cached


def reset() -> None:
    """Forget the registries; the next `get_registries()` reloads every plugin."""
    global _cached
    with _lock:
        _cached = None


__all__ = [
    "PluginConflictError", "PluginError", "PluginInfo", "PluginLoadWarning", "Registries",
    "call_per_plugin", "get_registries", "hookimpl", "reset",
]
