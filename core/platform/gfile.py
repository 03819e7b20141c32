"""``tw.io.gfile`` and ``tw.gfile``: TensorFlow's file API (``tensorflow/python/lib/io/
file_io.py``) over the local filesystem.

Contract: `GFile(name, mode)` (also `Open`, `FastGFile`) opens lazily, as TF's ``FileIO``: the
file is opened (and for ``"w"`` truncated) on the first read or write, so a missing file raises
`NotFoundError` then, not in the constructor. Modes are ``r``, ``w``, ``a``, ``r+``, ``w+``,
``a+``, each with an optional ``b``; reads give ``str`` (UTF-8) without ``b`` and ``bytes`` with
it, writes take either; ``read(n)`` counts bytes. Nothing translates newlines.

The functions carry TF 2's names with TF 1's aliases (``exists``/``Exists``, ...). Paths are
``str``, ``bytes`` or path-like; ``file://`` paths are local, any other scheme (``gs://``,
``hdfs://``, ...) raises `UnimplementedError` naming it. Failures raise TF's error types, from
the OS's errno as TF maps it (missing: `NotFoundError`, exists: `AlreadyExistsError`, not a
directory / is a directory / not empty: `FailedPreconditionError`, no access:
`PermissionDeniedError`); `rename` and `copy` without ``overwrite`` onto an existing path raise
`AlreadyExistsError` ("file already exists") and `listdir` of a non-directory `NotFoundError`,
as TF. `glob` follows TF's pattern grammar (``*`` and ``?`` never match ``/``, ``[^...]``
negates, ``*`` matches dot files) and returns sorted paths.
"""

from __future__ import annotations

import errno
import glob as _glob
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

import attrs

from tensorweave.engine import errors

__all__ = [
    "Copy", "DeleteRecursively", "Exists", "FastGFile", "GFile", "Glob", "IsDirectory",
    "ListDirectory", "MakeDirs", "MkDir", "Open", "Remove", "Rename", "Stat", "Walk", "copy",
    "exists", "glob", "isdir", "listdir", "makedirs", "mkdir", "remove", "rename", "rmtree",
    "stat", "walk",
]

PathLike = str | bytes | os.PathLike

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")

# TF's errno -> canonical code (tensorflow/core/platform/errors.cc, ErrnoToCode), for the
# errnos that file operations give
_ERRNO_ERRORS: dict[int, type[errors.OpError]] = {
    errno.ENOENT: errors.NotFoundError, errno.ENODEV: errors.NotFoundError,
    errno.ENXIO: errors.NotFoundError,
    errno.EEXIST: errors.AlreadyExistsError,
    errno.EPERM: errors.PermissionDeniedError, errno.EACCES: errors.PermissionDeniedError,
    errno.EROFS: errors.PermissionDeniedError,
    errno.ENOTEMPTY: errors.FailedPreconditionError, errno.EISDIR: errors.FailedPreconditionError,
    errno.ENOTDIR: errors.FailedPreconditionError, errno.EBUSY: errors.FailedPreconditionError,
    errno.EBADF: errors.FailedPreconditionError, errno.EXDEV: errors.UnimplementedError,
    errno.ENAMETOOLONG: errors.InvalidArgumentError, errno.EINVAL: errors.InvalidArgumentError,
    errno.ENOSPC: errors.ResourceExhaustedError, errno.EMFILE: errors.ResourceExhaustedError,
    errno.EFBIG: errors.OutOfRangeError,
}


def _path(path: PathLike) -> str:
    """`path` as a local path; `UnimplementedError` for a filesystem other than the local one."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = path.decode("utf-8")
    match = _SCHEME.match(path)
    if match:
        if match.group(1) != "file":
            raise errors.UnimplementedError(
                None, None, f"File system scheme '{match.group(1)}' not implemented "
                f"(file: '{path}')")
        path = path[match.end():]
    return path


def _error(exc: OSError, context: str) -> errors.OpError:
    cls = _ERRNO_ERRORS.get(exc.errno or 0, errors.UnknownError)
    return cls(None, None, f"{context}; {exc.strerror or exc}")


def _exists(path: str) -> bool:
    return os.path.lexists(path)


# -- files ------------------------------------------------------------------------------------

_MODES = {"r": "rb", "w": "wb", "a": "ab", "r+": "r+b", "w+": "w+b", "a+": "a+b"}


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"Expected binary or unicode string, got {value!r}")


class GFile:
    """A file of the local filesystem with TF's ``GFile`` interface; see the module
    docstring."""

    def __init__(self, name: PathLike, mode: str = "r") -> None:
        self._name = name
        self._mode = mode
        self._binary = "b" in mode
        base = mode.replace("b", "")
        if base not in _MODES:
            raise errors.InvalidArgumentError(
                None, None, "mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'")
        self._open_mode = _MODES[base]
        self._readable = base in ("r", "r+", "a+", "w+")
        self._writable = base in ("a", "w", "r+", "a+", "w+")
        self._file: IO[bytes] | None = None

    @property
    def name(self) -> PathLike:
        return self._name

    @property
    def mode(self) -> str:
        return self._mode

    def _open(self) -> IO[bytes]:
        if self._file is None:
            path = _path(self._name)
            try:
                self._file = open(path, self._open_mode)  # noqa: SIM115 - closed by close()
            except OSError as exc:
                raise _error(exc, f"{path}: cannot open file") from None
        return self._file

    def _for_reading(self) -> IO[bytes]:
        if not self._readable:
            raise errors.PermissionDeniedError(None, None, "File isn't open for reading")
        return self._open()

    def _value(self, data: bytes) -> str | bytes:
        return data if self._binary else data.decode("utf-8")

    def size(self) -> int:
        return stat(self._name).length

    def write(self, file_content: str | bytes) -> None:
        if not self._writable:
            raise errors.PermissionDeniedError(None, None, "File isn't open for writing")
        self._open().write(_as_bytes(file_content))

    def read(self, n: int = -1) -> str | bytes:
        """`n` bytes (all that is left if ``n == -1``) from the current position."""
        return self._value(self._for_reading().read(None if n == -1 else n))

    def readline(self) -> str | bytes:
        """The next line, with its ``\\n``; empty at the end of the file."""
        return self._value(self._for_reading().readline())

    def readlines(self) -> list[str | bytes]:
        return [self._value(line) for line in self._for_reading().readlines()]

    def seek(self, offset: int | None = None, whence: int = 0,
             position: int | None = None) -> None:
        """Move to `offset` from the start (`whence` 0), the current position (1) or the end
        (2); `position` is TF's deprecated name for `offset`."""
        f = self._for_reading()
        if offset is None and position is None:
            raise TypeError("seek(): offset argument required")
        if offset is not None and position is not None:
            raise TypeError("seek(): offset and position may not be set simultaneously.")
        if whence not in (0, 1, 2):
            raise errors.InvalidArgumentError(
                None, None, f"Invalid whence argument: {whence}. Valid values are 0, 1, or 2.")
        try:
            f.seek(offset if offset is not None else position, whence)
        except OSError as exc:
            raise _error(exc, f"{_path(self._name)}: cannot seek") from None

    def tell(self) -> int:
        return (self._for_reading() if self._readable else self._open()).tell()

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Flush and close; a later call opens the file again, as TF's."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def seekable(self) -> bool:
        return True

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[str | bytes]:
        return self

    def __next__(self) -> str | bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


Open = GFile
FastGFile = GFile


# -- paths ------------------------------------------------------------------------------------


def exists(path: PathLike) -> bool:
    """Whether `path` exists, as a file or a directory."""
    return _exists(_path(path))


def isdir(path: PathLike) -> bool:
    """Whether `path` is a directory (``False`` for any error, as TF)."""
    try:
        return os.path.isdir(_path(path))
    except errors.OpError:
        return False


def mkdir(path: PathLike) -> None:
    """Create the directory `path`, whose parent must exist."""
    local = _path(path)
    try:
        os.mkdir(local)
    except OSError as exc:
        raise _error(exc, local) from None


def makedirs(path: PathLike) -> None:
    """Create the directory `path` and its missing parents; nothing if it is a directory."""
    local = _path(path)
    head = local.rstrip("/") or "/"
    while head and not _exists(head):  # TF: the deepest existing ancestor must be a directory
        head = os.path.dirname(head)
    if head and not os.path.isdir(head):
        raise errors.FailedPreconditionError(None, None, f"{head} is not a directory")
    try:
        os.makedirs(local, exist_ok=True)
    except OSError as exc:
        raise _error(exc, local) from None


def listdir(path: PathLike) -> list[str]:
    """The names in the directory `path` (no ``.``/``..``), in no particular order."""
    local = _path(path)
    if not os.path.isdir(local):
        raise errors.NotFoundError(None, None, f"Could not find directory {local}")
    try:
        return os.listdir(local)
    except OSError as exc:
        raise _error(exc, local) from None


def _tf_pattern(pattern: str) -> str:
    """TF's glob pattern in `glob`'s grammar: ``[^`` negates, ``\\c`` matches ``c``."""
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            out.append(f"[{pattern[i + 1]}]" if pattern[i + 1] in "*?[]" else pattern[i + 1])
            i += 2
            continue
        out.append("[!" if pattern.startswith("[^", i) else char)
        i += 2 if pattern.startswith("[^", i) else 1
    return "".join(out)


def glob(pattern: PathLike | Iterable[PathLike]) -> list[str]:
    """The paths that match `pattern` (or any of several patterns), sorted."""
    patterns = [pattern] if isinstance(pattern, (str, bytes, os.PathLike)) else list(pattern)
    out: list[str] = []
    for p in patterns:
        local = _tf_pattern(_path(p))
        out += sorted(_glob.glob(local, include_hidden=True))
    return out


def remove(path: PathLike) -> None:
    """Delete the file `path`."""
    local = _path(path)
    try:
        os.remove(local)
    except OSError as exc:
        raise _error(exc, local) from None


def rename(oldname: PathLike, newname: PathLike, overwrite: bool = False) -> None:
    """Rename or move a file or directory; an existing `newname` is replaced only with
    `overwrite`."""
    old, new = _path(oldname), _path(newname)
    if not overwrite and _exists(new):
        raise errors.AlreadyExistsError(None, None, "file already exists")
    try:
        os.replace(old, new)
    except OSError as exc:
        raise _error(exc, f"Failed to rename: {old} to: {new}") from None


def copy(oldpath: PathLike, newpath: PathLike, overwrite: bool = False) -> None:
    """Copy the file `oldpath` to `newpath`; an existing `newpath` is replaced only with
    `overwrite`."""
    old, new = _path(oldpath), _path(newpath)
    if not overwrite and _exists(new):
        raise errors.AlreadyExistsError(None, None, "file already exists")
    try:
        with open(old, "rb") as src, open(new, "wb") as dst:
            shutil.copyfileobj(src, dst)
    except OSError as exc:
        raise _error(exc, f"{exc.filename or old}") from None


def rmtree(path: PathLike) -> None:
    """Delete the directory `path` and everything under it."""
    local = _path(path)
    if not _exists(local):
        raise errors.NotFoundError(None, None, f"{local}; No such file or directory")
    try:
        shutil.rmtree(local)
    except OSError as exc:
        raise _error(exc, local) from None


@attrs.frozen
class FileStatistics:
    """TF's ``FileStatistics``: size in bytes, modification time in ns, whether a directory."""

    length: int
    mtime_nsec: int
    is_directory: bool


def stat(path: PathLike) -> FileStatistics:
    local = _path(path)
    try:
        result = os.stat(local)
    except OSError as exc:
        raise _error(exc, local) from None
    return FileStatistics(result.st_size, result.st_mtime_ns, os.path.isdir(local))


def walk(top: PathLike, topdown: bool = True,
         onerror: Callable[[errors.OpError], Any] | None = None
         ) -> Iterator[tuple[str, list[str], list[str]]]:
    """``(dirname, subdirs, files)`` for `top` and each directory under it, parents first
    with `topdown` (removing names from `subdirs` skips them), else children first; a
    directory that cannot be listed is passed to `onerror`, or skipped."""
    top = _path(top)
    try:
        listing = listdir(top)
    except errors.NotFoundError as err:
        if onerror:
            onerror(err)
        return
    subdirs, files = [], []
    for name in listing:
        (subdirs if os.path.isdir(os.path.join(top, name)) else files).append(name)
    here = (top, subdirs, files)
    if topdown:
        yield here
    for subdir in subdirs:
        yield from walk(os.path.join(top, subdir), topdown, onerror)
    if not topdown:
        yield here


def Walk(top: PathLike,  # noqa: N802 - TF 1's name
         in_order: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:
    """TF 1's `walk`: parents first if `in_order`."""
    return walk(top, topdown=in_order)


# TF 1's names
Exists = exists
IsDirectory = isdir
MkDir = mkdir
MakeDirs = makedirs
ListDirectory = listdir
Glob = glob
Remove = remove
Rename = rename
Copy = copy
DeleteRecursively = rmtree
Stat = stat
