"""Throwaway third-party plugins for tests: a module plus a ``*.dist-info`` with an entry point,
put on ``sys.path`` so `importlib.metadata` finds them exactly as it finds a pip-installed one."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tensorweave.engine import plugin_manager


def install_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, source: str,
                   entry_name: str | None = None) -> None:
    """Write `module` with `source` and a dist-info registering it; reload the registries."""
    root = tmp_path / f"site_{module}"
    root.mkdir()
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    dist = root / f"{module}-1.2.3.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.2.3\n")
    (dist / "entry_points.txt").write_text(f"[tensorweave]\n{entry_name or module} = {module}\n")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, module, raising=False)
    plugin_manager.reset()
