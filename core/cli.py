"""The ``tensorweave`` command: ``tensorweave plugins`` and ``tensorweave server``.

Contract: `main(argv)` returns the process exit code. ``plugins`` lists every plugin of the
``tensorweave`` entry-point group with its version, its status (loaded, disabled, failed) and
what it provides (ops, kernels by device type, devices, passes, partitioner, transports, notes).
``server`` hands its arguments to `tensorweave.train.server_lib.run_server_cli`.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import pluggy

from tensorweave.engine.client.config import ConfigProto
from tensorweave.engine.plugin_manager import Registries, get_registries
from tensorweave.engine.runtime.device import TaskSpec
from tensorweave.engine.runtime.passes import Pass


def describe_plugins(registries: Registries) -> list[str]:
    """One block of lines per plugin, as ``tensorweave plugins`` prints it."""
    pm = registries.manager
    ops = registries.ops.by_plugin()
    kernels: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for k in registries.kernels.all():
        kernels[k.plugin][k.device_type] += 1
    passes = defaultdict(list)
    for p in registries.passes:
        passes[_plugin_of(pm, p)].append(f"{p.name} ({p.phase})")
    lines = []
    for info in registries.plugins:
        lines.append(f"{info.name} {info.version} [{info.status}] ({info.module})")
        if info.status != "loaded":
            continue
        plugin = pm.get_plugin(info.name)
        provides = []
        if ops.get(info.name):
            provides.append(f"ops: {len(ops[info.name])}")
        for device_type, n in sorted(kernels.get(info.name, {}).items()):
            provides.append(f"kernels[{device_type}]: {n}")
        failures = []
        found = _ask(plugin, "tensorweave_devices", failures, task=TaskSpec(),
                     config=ConfigProto())
        if found is not None:
            names = ", ".join(f"{d.device_type}:{d.index}" for d in found)
            provides.append(f"devices: {names or 'none'}")
        if passes.get(info.name):
            provides.append(f"passes: {', '.join(passes[info.name])}")
        if hasattr(plugin, "tensorweave_partitioner"):
            provides.append("partitioner")
        transports = _ask(plugin, "tensorweave_transports", failures)
        if transports is not None:
            provides.append("transports: " + ", ".join(t.scheme for t in transports))
        if hasattr(plugin, "tensorweave_register_gradients"):
            provides.append("gradients")
        note = _ask(plugin, "tensorweave_plugin_status", failures)
        lines.extend(f"    {line}" for line in provides)
        if note:
            lines.append(f"    note: {note}")
        lines.extend(f"    failed: {failure}" for failure in failures)
    return lines


def _ask(plugin: object, hook: str, failures: list[str], **kwargs: object) -> Any:
    """`plugin`'s answer to `hook` (None if it has none); a hook that raises is recorded in
    `failures` instead, so one broken plugin never stops the listing."""
    fn = getattr(plugin, hook, None)
    if fn is None:
        return None
    try:
        return fn(**kwargs)
    except Exception as exc:
        failures.append(f"{hook}: {exc!r}")
        return None


def _plugin_of(pm: pluggy.PluginManager, graph_pass: Pass) -> str:
    """The name of the plugin whose module defines `graph_pass`."""
    module = graph_pass.run.__module__
    for name, plugin in pm.list_name_plugin():
        if getattr(plugin, "__name__", None) and module.startswith(plugin.__name__):
            return name
    return "?"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tensorweave", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("plugins", help="list plugins, their versions and what they provide")
    sub.add_parser("server", help="run a cluster task's server (see --help)", add_help=False)
    args, rest = parser.parse_known_args(argv)
    if args.command == "plugins":
        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        print("\n".join(describe_plugins(get_registries())))
        return 0
    from tensorweave.train.server_lib import run_server_cli

    return run_server_cli(rest)


if __name__ == "__main__":
    sys.exit(main())
