"""The layers' import rule (docs/architecture.md): the engine imports neither the TF library,
the formats, contrib nor the plugins; formats import the engine only; the library imports
neither plugins nor contrib (plugins may use the library: gradients are written with its ops);
and no import cycle joins two layers. Imports are read with `ast`, deferred ones (inside
functions) included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"core": "tensorweave", "plugins": "tensorweave.plugins",
            "contrib": "tensorweave.contrib"}


def layer_of(module: str) -> str:
    """The layer of a ``tensorweave`` module name."""
    for prefix, layer in (("tensorweave.engine", "engine"), ("tensorweave.formats", "formats"),
                          ("tensorweave.plugins", "plugins"), ("tensorweave.contrib", "contrib")):
        if module == prefix or module.startswith(prefix + "."):
            return layer
    return "library"


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    parts = [PACKAGES[rel.parts[0]], *rel.with_suffix("").parts[1:]]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, source: str | None = None) -> set[str]:
    """Every ``tensorweave`` module `path` imports; ``from a import b`` counts as ``a.b`` when
    that is a module of the tree, else as ``a``."""
    tree = ast.parse(source if source is not None else path.read_text())
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("tensorweave"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if not base.startswith("tensorweave"):
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in MODULES else base)
    return found


def _tree() -> dict[str, Path]:
    modules = {}
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "build" not in path.relative_to(ROOT).parts:
                modules[module_name(path)] = path
    return modules


MODULES = _tree()

ALLOWED = {
    "engine": {"engine"},
    "formats": {"engine", "formats"},
    "library": {"engine", "formats", "library"},
    "plugins": {"engine", "formats", "library", "plugins"},
    "contrib": {"engine", "formats", "library", "plugins", "contrib"},
}


def violations(modules: dict[str, Path] = MODULES,
               sources: dict[str, str] | None = None) -> list[str]:
    """``importer -> imported`` for every import the layer rule forbids."""
    sources = sources or {}
    out = []
    for name, path in modules.items():
        src_layer = layer_of(name)
        for target in sorted(imported_modules(path, sources.get(name))):
            if layer_of(target) not in ALLOWED[src_layer]:
                out.append(f"{name} ({src_layer}) -> {target} ({layer_of(target)})")
    return out


def test_no_import_crosses_the_layers_upwards() -> None:
    assert violations() == []


def test_an_upward_import_is_caught() -> None:
    executor = "tensorweave.engine.runtime.executor"
    deferred = "\n\ndef _f():\n    from tensorweave.api import nn_ops\n"
    source = MODULES[executor].read_text() + deferred
    assert violations({executor: MODULES[executor]}, {executor: source}) == [
        f"{executor} (engine) -> tensorweave.api.nn_ops (library)"]
    fmt = "tensorweave.formats.tf_record"
    source = MODULES[fmt].read_text() + "\nimport tensorweave.train.saver\n"
    assert violations({fmt: MODULES[fmt]}, {fmt: source}) == [
        f"{fmt} (formats) -> tensorweave.train.saver (library)"]


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_the_layer_rule_has_no_cycle(layer: str) -> None:
    # A layer may import another only if that one may not import it back.
    for other in ALLOWED[layer] - {layer}:
        assert layer not in ALLOWED[other], (layer, other)


def test_the_root_holds_few_modules() -> None:
    assert len(list((ROOT / "core").glob("*.py"))) <= 15
