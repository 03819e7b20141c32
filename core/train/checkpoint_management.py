"""The ``checkpoint`` state file of a checkpoint directory, as TF1's ``checkpoint_management``.

Contract: the state file (``checkpoint`` unless `latest_filename` says otherwise) is a
`CheckpointState` proto (`tensorweave.formats.checkpoint_state_proto`) in protobuf's text
format, as TF writes it::

    model_checkpoint_path: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-100"
    all_model_checkpoint_paths: "model.ckpt-200"

(TF 2's ``all_model_checkpoint_timestamps`` and ``last_preserved_timestamp`` are read too.)

Paths of checkpoints inside the directory are written relative to it, so a directory can be moved
or read from another working directory; `get_checkpoint_state` returns them joined with the
directory. The file is replaced atomically. A checkpoint exists when its ``.index`` file does
(TF's V2 format). `latest_checkpoint` returns ``None`` when there is no state or its newest
checkpoint is missing.
"""

from __future__ import annotations

import os

import numpy as np
from google.protobuf import text_format

from tensorweave.formats.atomic_file import write_atomic
from tensorweave.formats.checkpoint_state_proto import CheckpointState
from tensorweave.formats.tensor_bundle import BundleReader, index_path

__all__ = [
    "CheckpointState", "checkpoint_exists", "get_checkpoint_state", "latest_checkpoint",
    "list_variables", "load_variable", "update_checkpoint_state",
]

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
    state = CheckpointState(model_checkpoint_path=_relative(save_dir, model_checkpoint_path),
                            all_model_checkpoint_paths=[_relative(save_dir, p) for p in paths])
    write_atomic(_state_path(save_dir, latest_filename),
                 text_format.MessageToString(state).encode())


def get_checkpoint_state(checkpoint_dir: str,
                         latest_filename: str | None = None) -> CheckpointState | None:
    """The parsed state file, or ``None`` if there is none; `ValueError` if it is malformed."""
    path = _state_path(checkpoint_dir, latest_filename)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    try:
        state = text_format.Merge(text, CheckpointState())  # TF's reader merges
    except text_format.ParseError as exc:
        raise ValueError(f"Invalid checkpoint state file {path}: {exc}") from None

    def joined(value: str) -> str:
        return value if os.path.isabs(value) else os.path.join(checkpoint_dir, value)

    if state.model_checkpoint_path:  # as TF: paths relative to the directory made whole
        state.model_checkpoint_path = joined(state.model_checkpoint_path)
    paths = [joined(p) for p in state.all_model_checkpoint_paths]
    del state.all_model_checkpoint_paths[:]
    state.all_model_checkpoint_paths.extend(paths)
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state file {path}: no model_checkpoint_path")
    return state


def checkpoint_exists(checkpoint_path: str) -> bool:
    """Whether the V2 checkpoint with prefix `checkpoint_path` exists (its index does)."""
    return os.path.isfile(index_path(checkpoint_path))


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
    reader = BundleReader(_resolve(ckpt_dir_or_file))
    return [(name, list(reader.shape(name))) for name in reader.names()]


def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
    """The saved value of one variable, as a numpy array."""
    return BundleReader(_resolve(ckpt_dir_or_file)).read(name.removesuffix(":0"))
