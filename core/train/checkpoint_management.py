"""The ``checkpoint`` state file of a checkpoint directory, as TF1's ``checkpoint_management``.

Contract: the state file (``checkpoint`` unless `latest_filename` says otherwise) is text in TF's
format, one ``key: "value"`` per line::

    model_checkpoint_path: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-100"
    all_model_checkpoint_paths: "model.ckpt-200"

Paths of checkpoints inside the directory are written relative to it, so a directory can be moved
or read from another working directory; `get_checkpoint_state` returns them joined with the
directory. The file is replaced atomically. `latest_checkpoint` returns ``None`` when there is no
state or its newest checkpoint is missing.
"""

from __future__ import annotations

import json
import os
import re

import attrs
import numpy as np

from tensorweave.engine import errors
from tensorweave.train.checkpoint_format import list_tensors, read_checkpoint, write_atomic

__all__ = [
    "CheckpointState", "checkpoint_exists", "get_checkpoint_state", "latest_checkpoint",
    "list_variables", "load_variable", "update_checkpoint_state",
]

_LINE = re.compile(r'^\s*(model_checkpoint_path|all_model_checkpoint_paths)\s*:\s*(".*")\s*$')


@attrs.define
class CheckpointState:
    """The newest checkpoint of a directory, and every one still kept."""

    model_checkpoint_path: str = ""
    all_model_checkpoint_paths: list[str] = attrs.field(factory=list)


def _state_path(checkpoint_dir: str, latest_filename: str | None) -> str:
    return os.path.join(checkpoint_dir, latest_filename or "checkpoint")


def _relative(checkpoint_dir: str, path: str) -> str:
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(checkpoint_dir):
        return os.path.basename(path)
    return path


def update_checkpoint_state(save_dir: str, model_checkpoint_path: str,
                            all_model_checkpoint_paths: list[str] | None = None,
                            latest_filename: str | None = None) -> None:
    """Write the state file of `save_dir`; the newest path is always listed last."""
    paths = [p for p in all_model_checkpoint_paths or [] if p != model_checkpoint_path]
    paths.append(model_checkpoint_path)
    lines = [f"model_checkpoint_path: {json.dumps(_relative(save_dir, model_checkpoint_path))}"]
    lines += [f"all_model_checkpoint_paths: {json.dumps(_relative(save_dir, p))}" for p in paths]
    write_atomic(_state_path(save_dir, latest_filename), iter([("\n".join(lines) + "\n").encode()]))


def get_checkpoint_state(checkpoint_dir: str,
                         latest_filename: str | None = None) -> CheckpointState | None:
    """The parsed state file, or ``None`` if there is none; `ValueError` if it is malformed."""
    path = _state_path(checkpoint_dir, latest_filename)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    state = CheckpointState()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        match = _LINE.match(line)
        if match is None:
            raise ValueError(f"Invalid checkpoint state file {path}, line {number}: {line!r}")
        key, value = match.group(1), json.loads(match.group(2))
        value = value if os.path.isabs(value) else os.path.join(checkpoint_dir, value)
        if key == "model_checkpoint_path":
            state.model_checkpoint_path = value
        else:
            state.all_model_checkpoint_paths.append(value)
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state file {path}: no model_checkpoint_path")
    return state


def checkpoint_exists(checkpoint_path: str) -> bool:
    return os.path.isfile(checkpoint_path)


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The path of the newest checkpoint in `checkpoint_dir`, or ``None``."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None or not checkpoint_exists(state.model_checkpoint_path):
        return None
    return state.model_checkpoint_path


def _resolve(ckpt_dir_or_file: str) -> str:
    if os.path.isdir(ckpt_dir_or_file):
        path = latest_checkpoint(ckpt_dir_or_file)
        if path is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given "
                             f"directory {ckpt_dir_or_file}")
        return path
    return ckpt_dir_or_file


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """``(name, shape)`` of every variable in a checkpoint (or a directory's newest)."""
    return list_tensors(_resolve(ckpt_dir_or_file))


def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
    """The saved value of one variable, as a numpy array."""
    path = _resolve(ckpt_dir_or_file)
    tensors = read_checkpoint(path)
    if name not in tensors:
        raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint {path}")
    return tensors[name]
