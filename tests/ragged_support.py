"""Shared helper of the ragged-tensor tests: a fetch's value as nested Python lists, the form
their references are written in."""

from __future__ import annotations

from typing import Any

from tensorweave.api.ragged_tensor import RaggedTensor
from tests.numeric import run


def value(result: Any) -> Any:
    """`result` (a Tensor or RaggedTensor) evaluated and turned into nested lists."""
    fetched = run(result)
    return fetched.to_list() if isinstance(result, RaggedTensor) else fetched.tolist()
