"""Array ops: shapes, indexing, joining and creation."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.graph import Tensor

__all__ = ["stack"]


def stack(values: list[Any], axis: int = 0, name: str = "stack") -> Tensor:
    raise NotImplementedError
