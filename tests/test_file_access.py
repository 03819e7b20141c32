"""`kernels.file_access`: the path rule of a device with a file root, in-process."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.plugins.kernels.file_access import (
    checked_matches,
    checked_path,
    checked_pattern,
)


def context(root: Path | None) -> KernelContext:
    device = Device.create(TaskSpec(), "CPU", 0, np,
                           file_root=None if root is None else os.path.realpath(root))
    return KernelContext(node_name="n", op="ReadFile", attrs={}, device=device, xp=np,
                         output_dtypes=[], output_shapes=[])


def test_paths_patterns_and_matches(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    os.symlink(tmp_path / "out", root / "door")
    ctx = context(root)
    for ok in (root, root / "sub" / "new.txt", root / "sub" / ".." / "a", str(root / "x").encode()):
        assert checked_path(ctx, ok) == ok
    for bad in (tmp_path / "out" / "a", root / ".." / "out", root / "door" / "a", "/etc/passwd",
                str(root) + "2/a"):
        with pytest.raises(errors.PermissionDeniedError, match="outside this server's file root"):
            checked_path(ctx, bad)
    assert checked_pattern(ctx, str(root / "*" / "*.txt")) == str(root / "*" / "*.txt")
    for bad in (str(tmp_path / "*"), str(root / "door" / "*"), "/*/passwd"):
        with pytest.raises(errors.PermissionDeniedError):
            checked_pattern(ctx, bad)
    assert checked_matches(ctx, [str(root / "door")]) == [str(root / "door")]  # listed, not read
    with pytest.raises(errors.PermissionDeniedError):
        checked_matches(ctx, [str(root / "sub" / ".." / ".." / "out" / "a")])
    anywhere = context(None)
    assert checked_path(anywhere, "/etc/passwd") == "/etc/passwd"
    assert checked_matches(anywhere, ["/etc/passwd"]) == ["/etc/passwd"]
