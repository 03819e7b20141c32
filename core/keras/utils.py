"""``tw.keras.utils``: `to_categorical` (integer class vectors as one-hot matrices),
`normalize` (unit L-`order` norm along an axis) and `Sequence`, the base of batch sequences that
`Model.fit` / `evaluate` / `predict` read by index (see `training_generator`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["Sequence", "normalize", "to_categorical"]


def to_categorical(y: Any, num_classes: int | None = None, dtype: str = "float32") -> np.ndarray:
    """One-hot rows for the integer classes `y` (any shape; a trailing axis of 1 is dropped):
    shape ``y.shape + (num_classes,)``; `num_classes` defaults to ``max(y) + 1``."""
    y = np.array(y, dtype="int")
    input_shape = y.shape
    if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
        input_shape = input_shape[:-1]
    y = y.ravel()
    if not num_classes:
        num_classes = int(np.max(y)) + 1
    categorical = np.zeros((y.shape[0], num_classes), dtype=dtype)
    categorical[np.arange(y.shape[0]), y] = 1
    return categorical.reshape(input_shape + (num_classes,))


def normalize(x: Any, axis: int = -1, order: int = 2) -> np.ndarray:
    """`x` divided by its L-`order` norms along `axis` (zero norms leave their slice as is)."""
    x = np.asarray(x)
    norms = np.atleast_1d(np.linalg.norm(x, order, axis))
    norms[norms == 0] = 1
    return x / np.expand_dims(norms, axis)


class Sequence:
    """A dataset of batches by index: subclasses define ``__getitem__(index)`` (one batch,
    ``(x, y)`` or ``(x, y, sample_weight)`` or ``x``) and ``__len__`` (the number of batches),
    and may define `on_epoch_end`, called after each full pass."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def on_epoch_end(self) -> None:
        """Called after each full pass over the batches (to reshuffle, for instance)."""

    def __iter__(self) -> Iterator[Any]:
        for index in range(len(self)):
            yield self[index]
