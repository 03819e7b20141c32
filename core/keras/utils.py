"""``tw.keras.utils``: `to_categorical`, integer class vectors as one-hot matrices."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["to_categorical"]


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
