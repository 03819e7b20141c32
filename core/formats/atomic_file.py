"""Atomic file replacement, and removal of what crashed writers left behind.

Contract: a file is written to `temp_path(path)` (``<path>.tempstate<pid>-<host>-<random hex>``,
in the same directory), fsynced, then renamed over `path` (``os.replace``, atomic on POSIX and
Windows) and the directory fsynced: a crash at any point leaves either the old file or the
complete new one, plus at most the temporary file. `write_atomic` does that for one file and
removes the temporary file on any failure it sees. `replace_all` renames several finished
temporary files in the order given (a checkpoint's data files before its index, so a reader
never finds an index whose data is missing; several files are not replaced as one, so a crash
between two renames over an existing checkpoint of the same prefix leaves its new data with its
old index, which reads as `DataLossError`, as in TF). `remove_stale_temp_files(directory)`
deletes the temporary files whose writer process, on this host, no longer runs (a writer killed
with SIGKILL cannot clean up after itself); files of live processes, this one included, of other
hosts (a shared file system) and of other names are left alone. On Windows none are removed
(there is no harmless liveness check).
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import uuid
from collections.abc import Iterable

__all__ = ["remove_stale_temp_files", "replace_all", "temp_path", "write_atomic"]

_TEMP = re.compile(r"\.tempstate(\d+)-(.+)-[0-9a-f]{16}$")
_HOST = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "_"


def temp_path(path: str) -> str:
    return f"{path}.tempstate{os.getpid()}-{_HOST}-{uuid.uuid4().hex[:16]}"


def _fsync_directory(directory: str) -> None:
    """Make renames durable; directories cannot be opened for fsync on Windows."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_all(renames: Iterable[tuple[str, str]]) -> None:
    """Rename each finished ``(temporary, final)`` pair, in order, then fsync the directories."""
    directories = set()
    for temp, final in renames:
        os.replace(temp, final)
        directories.add(os.path.dirname(os.path.abspath(final)))
    for directory in sorted(directories):
        _fsync_directory(directory)


def write_atomic(path: str, data: bytes) -> None:
    """Replace `path` by a file holding `data`; see the module docstring."""
    temp = temp_path(path)
    try:
        with open(temp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        replace_all([(temp, path)])
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def _running(pid: int) -> bool:
    if pid == os.getpid() or os.name != "posix":  # Windows' os.kill would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    except OverflowError:
        return False
    return True


def remove_stale_temp_files(directory: str) -> list[str]:
    """Delete the temporary files in `directory` whose writer is gone; returns their paths."""
    removed = []
    with contextlib.suppress(FileNotFoundError), os.scandir(directory) as entries:
        for entry in entries:
            match = _TEMP.search(entry.name)
            if (match is None or match.group(2) != _HOST or _running(int(match.group(1)))
                    or not entry.is_file()):
                continue
            with contextlib.suppress(FileNotFoundError):  # another saver removed it first
                os.unlink(entry.path)
                removed.append(entry.path)
    return removed
