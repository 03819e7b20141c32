"""``tf.train.NewCheckpointReader``: read a checkpoint's tensors without a graph.

Contract: `NewCheckpointReader(path)` opens the checkpoint at `path` (a prefix written by
`Saver.save`, or a directory whose newest checkpoint is taken); a missing one is TF's
`NotFoundError`. The reader maps each saved name to its shape (a list of ints) and dtype, and
``get_tensor(name)`` returns a saved value as a numpy array (`NotFoundError` for an unknown
name).
"""

from __future__ import annotations

import os

import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.train.checkpoint_format import read_checkpoint
from tensorweave.train.checkpoint_management import latest_checkpoint

__all__ = ["CheckpointReader", "NewCheckpointReader"]


class CheckpointReader:
    """The tensors of one checkpoint; see the module docstring."""

    def __init__(self, path: str) -> None:
        if os.path.isdir(path):
            path = latest_checkpoint(path) or path
        if not os.path.isfile(path):
            raise errors.NotFoundError(None, None, f"Unsuccessful TensorSliceReader "
                                                   f"constructor: Failed to find any matching "
                                                   f"files for {path}")
        self._path = path
        self._tensors = read_checkpoint(path)

    def has_tensor(self, name: str) -> bool:
        return name in self._tensors

    def get_tensor(self, name: str) -> np.ndarray:
        if name not in self._tensors:
            raise errors.NotFoundError(None, None,
                                       f"Key {name} not found in checkpoint {self._path}")
        return self._tensors[name]

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {name: list(np.shape(v)) for name, v in self._tensors.items()}

    def get_variable_to_dtype_map(self) -> dict[str, dtypes.DType]:
        return {name: dtypes.as_dtype(np.asarray(v).dtype) for name, v in self._tensors.items()}

    def debug_string(self) -> bytes:
        lines = [f"{name} ({dtypes.as_dtype(np.asarray(v).dtype).name}) {list(np.shape(v))}"
                 for name, v in sorted(self._tensors.items())]
        return ("\n".join(lines) + "\n").encode()


def NewCheckpointReader(filepattern: str) -> CheckpointReader:  # noqa: N802 - TF's name
    return CheckpointReader(filepattern)
