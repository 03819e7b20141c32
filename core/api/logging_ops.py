"""``Assert`` and ``Print``, as ``tf.compat.v1``.

Contract: ``Assert(condition, data)`` returns an op that fails the step with
`InvalidArgumentError` (listing `data`) when `condition` is false; ``Print(input_, data)``
returns `input_` and, when run, writes `message` and the values of `data` to stderr. Neither is
ever folded or merged; use them through `control_dependencies` or by consuming their output.
Each entry of `data` is converted to a tensor, a Python ``str`` to a ``string`` one, as in TF.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorweave.api.scopes import name_scope
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply, make_op

__all__ = ["Assert", "Print"]


def _tensors(data: Sequence[Any] | None) -> list[Tensor]:
    if data is None:
        return []
    if isinstance(data, (str, bytes)) or not isinstance(data, Sequence):
        raise TypeError(f"data must be a list or tuple of tensors or strings, got {data!r}")
    return [convert_to_tensor(item) for item in data]


def _attrs(summarize: int | None) -> dict[str, Any]:
    return {} if summarize is None else {"summarize": summarize}


def Assert(condition: Any, data: Sequence[Any], summarize: int | None = None,  # noqa: N802
           name: str | None = None) -> Operation:
    with name_scope(name, "Assert", [condition]):
        condition = convert_to_tensor(condition, name="Condition")
        return make_op("Assert", [condition, _tensors(data)], _attrs(summarize), name="Assert")


def Print(input_: Any, data: Sequence[Any], message: str | None = None,  # noqa: N802
          first_n: int | None = None, summarize: int | None = None,
          name: str | None = None) -> Tensor:
    tensors = _tensors(data)
    attrs = _attrs(summarize)
    if message is not None:
        attrs["message"] = message
    if first_n is not None:
        attrs["first_n"] = first_n
    return apply("Print", [input_, tensors], attrs, name=name or "Print")
