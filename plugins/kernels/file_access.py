"""Where kernels may touch files: the one check every file-touching kernel makes.

Contract: a device whose `file_root` is set (a server's ``--file-root DIR``) confines the files
its kernels read, write, list or open to DIR. `checked_path(ctx, path)` returns the path (as
given) when it resolves, symbolic links followed, to DIR or below, else raises
`PermissionDeniedError` naming the node and the path. `checked_pattern` does the same for a glob
pattern, judged by the directory its wildcards start below, and `checked_matches` for the names
a glob found, judged by the directory each is in (listing a link that points out of DIR is
allowed; opening it is not). Without a root every path passes unchanged.
Relative paths are resolved against the server's working directory, as the kernels open them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext

_WILDCARDS = frozenset("*?[")


def _text(path: Any) -> str:
    return os.fsdecode(path) if isinstance(path, (bytes, str)) else str(path)


def _inside(root: str, path: str) -> bool:
    resolved = os.path.realpath(path)
    return resolved == root or resolved.startswith(root.rstrip(os.sep) + os.sep)


def _denied(ctx: KernelContext, path: str, root: str) -> errors.PermissionDeniedError:
    return errors.PermissionDeniedError(
        ctx.node_name, ctx.op, f"{path} is outside this server's file root {root} (--file-root)")


def checked_path(ctx: KernelContext, path: Any) -> Any:
    """`path`, if a kernel on `ctx`'s device may touch it; else `PermissionDeniedError`."""
    root = getattr(ctx.device, "file_root", None)
    if root is not None and not _inside(root, _text(path)):
        raise _denied(ctx, _text(path), root)
    return path


def checked_pattern(ctx: KernelContext, pattern: Any) -> Any:
    """A glob `pattern`, if the directory its first wildcard is in lies under the root."""
    root = getattr(ctx.device, "file_root", None)
    if root is None:
        return pattern
    text = _text(pattern)
    parts = text.split(os.sep)
    fixed = []
    for part in parts[:-1]:
        if _WILDCARDS & set(part):
            break
        fixed.append(part)
    base = os.sep.join(fixed) or ("" if not text.startswith(os.sep) else os.sep)
    if not _inside(root, base or os.curdir):
        raise _denied(ctx, text, root)
    return pattern


def checked_matches(ctx: KernelContext, names: Iterable[Any]) -> list[Any]:
    """The names a glob matched, if each is in a directory under the root (a ``..`` after a
    wildcard can leave it)."""
    root = getattr(ctx.device, "file_root", None)
    names = list(names)
    if root is not None:
        for name in names:
            if not _inside(root, os.path.dirname(os.path.abspath(_text(name)))):
                raise _denied(ctx, _text(name), root)
    return names
