"""Whole-checkpoint helpers for tests: every tensor of a V2 checkpoint as a dict, and a
single-file checkpoint written from one."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.formats.tensor_bundle import BundleReader, SavedTensor, write_bundle


def read_checkpoint(prefix: str) -> dict[str, np.ndarray]:
    reader = BundleReader(prefix)
    return {name: reader.read(name) for name in reader.names()}


def write_checkpoint(prefix: str, tensors: dict[str, Any]) -> None:
    write_bundle(prefix, [[SavedTensor(key, np.asarray(value)) for key, value in tensors.items()]])
