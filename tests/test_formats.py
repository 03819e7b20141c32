"""The formats package's one rule: it uses engine types (errors, dtypes) and libraries, never the
library above it (train, framework, api, ...)."""

from __future__ import annotations

import ast
from pathlib import Path

FORMATS = Path(__file__).resolve().parent.parent / "core" / "formats"
ALLOWED = {"tensorweave.errors", "tensorweave.dtypes"}


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_formats_import_only_engine_types_and_libraries() -> None:
    modules = sorted(FORMATS.glob("*.py"))
    assert {p.stem for p in modules} >= {"atomic_file", "crc32c", "table", "tensor_bundle",
                                           "tensor_bundle_proto", "varint"}
    for path in modules:
        for name in imported_modules(path):
            if name.startswith("tensorweave") and not name.startswith("tensorweave.formats"):
                assert name in ALLOWED, f"{path.name} imports {name}"
