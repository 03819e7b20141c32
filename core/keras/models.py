"""``tw.keras.models``: `Model` and `Sequential`."""

from tensorweave.keras.sequential import Sequential
from tensorweave.keras.training import Model

__all__ = ["Model", "Sequential"]
