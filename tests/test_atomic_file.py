"""tensorweave.formats.atomic_file: replacement by rename, cleanup on failure, and removal of
the temporary files of writers that are gone (and only those)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tensorweave.formats import atomic_file


def test_write_atomic_replaces_and_a_failure_keeps_the_old_file(tmp_path: Path,
                                                                monkeypatch) -> None:
    target = tmp_path / "state"
    atomic_file.write_atomic(str(target), b"one")
    atomic_file.write_atomic(str(target), b"two")
    assert target.read_bytes() == b"two" and os.listdir(tmp_path) == ["state"]

    def failing_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="Input/output"):
        atomic_file.write_atomic(str(target), b"three")
    assert target.read_bytes() == b"two" and os.listdir(tmp_path) == ["state"]


def test_only_temp_files_of_gone_writers_of_this_host_are_removed(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    mine = Path(atomic_file.temp_path(str(tmp_path / "a")))
    stale = Path(str(mine).replace(f".tempstate{os.getpid()}-", f".tempstate{gone}-"))
    elsewhere = tmp_path / f"b.tempstate{gone}-otherhost-{'0' * 16}"
    unrelated = tmp_path / f"c.tempstate{gone}"
    for path in (mine, stale, elsewhere, unrelated):
        path.write_bytes(b"x")
    assert atomic_file.remove_stale_temp_files(str(tmp_path)) == [str(stale)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (mine, elsewhere, unrelated))
    assert atomic_file.remove_stale_temp_files(str(tmp_path / "missing")) == []
