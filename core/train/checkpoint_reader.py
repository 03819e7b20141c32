"""``tf.train.NewCheckpointReader``: read a checkpoint's tensors without a graph.

Contract: `NewCheckpointReader(path)` opens the checkpoint at `path` (a prefix written by
`Saver.save`, or a directory whose newest checkpoint is taken); a missing one is TF's
`NotFoundError`. The checkpoint is TF's V2 format (`tensorweave.formats.tensor_bundle`),
written by TF or tensorweave. The reader maps each saved name to its shape (a list of ints) and
dtype (a partitioned variable saved in slices under its full name and full shape), and
``get_tensor(name)`` returns a saved value as a numpy array, read when asked for
(`NotFoundError` for an unknown name, `DataLossError` naming the file for a corrupted one).
"""

from __future__ import annotations

import os

import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.formats.tensor_bundle import BundleReader, index_path
from tensorweave.train.checkpoint_management import latest_checkpoint

__all__ = ["CheckpointReader", "NewCheckpointReader"]


class CheckpointReader:
    """The tensors of one checkpoint; see the module docstring."""

    def __init__(self, path: str) -> None:
        if os.path.isdir(path):
            path = latest_checkpoint(path) or path
        if not os.path.isfile(index_path(path)):
            raise errors.NotFoundError(None, None, f"Unsuccessful TensorSliceReader "
                                                   f"constructor: Failed to find any matching "
                                                   f"files for {path}")
        self._reader = BundleReader(path)

    def has_tensor(self, name: str) -> bool:
        return name in self._reader

    def get_tensor(self, name: str) -> np.ndarray:
        return self._reader.read(name)

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {name: list(self._reader.shape(name)) for name in self._reader.names()}

    def get_variable_to_dtype_map(self) -> dict[str, dtypes.DType]:
        return {name: self._reader.dtype(name) for name in self._reader.names()}

    def debug_string(self) -> bytes:
        lines = [f"{name} ({self._reader.dtype(name).name}) {list(self._reader.shape(name))}"
                 for name in self._reader.names()]
        return ("\n".join(lines) + "\n").encode()


def NewCheckpointReader(filepattern: str) -> CheckpointReader:  # noqa: N802 - TF's name
    return CheckpointReader(filepattern)
