"""``Assert`` and ``Print``, as ``tf.compat.v1``.

Contract: ``Assert(condition, data)`` returns an op that fails the step with
`InvalidArgumentError` (listing `data`) when `condition` is false; ``Print(input_, data)``
returns `input_` and, when run, writes `message` and the values of `data` to stderr. Neither is
ever folded or merged; use them through `control_dependencies` or by consuming their output.
tensorweave has no string tensors: a Python ``str`` in `data` is shown as that literal text
where TF would show a string tensor's value; every other entry is converted to a tensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorweave.api.scopes import name_scope
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_builder import apply, make_op

__all__ = ["Assert", "Print"]


def split_data(data: Sequence[Any] | None) -> tuple[list[Any], list[str | None]]:
    """The tensors of `data`, and the op's ``literals`` attr: each ``str`` of `data`, with None
    in place of each tensor (empty when there is no ``str``)."""
    if data is None:
        return [], []
    if isinstance(data, (str, bytes)) or not isinstance(data, Sequence):
        raise TypeError(f"data must be a list or tuple of tensors or strings, got {data!r}")
    tensors = [item for item in data if not isinstance(item, str)]
    literals = [item if isinstance(item, str) else None for item in data]
    return tensors, literals if len(tensors) < len(literals) else []


def _attrs(literals: list[str | None], summarize: int | None) -> dict[str, Any]:
    attrs: dict[str, Any] = {"literals": literals}
    if summarize is not None:
        attrs["summarize"] = summarize
    return attrs


def Assert(condition: Any, data: Sequence[Any], summarize: int | None = None,  # noqa: N802
           name: str | None = None) -> Operation:
    with name_scope(name, "Assert", [condition]):
        condition = convert_to_tensor(condition, name="Condition")
        tensors, literals = split_data(data)
        return make_op("Assert", [condition, tensors], _attrs(literals, summarize),
                       name="Assert")


def Print(input_: Any, data: Sequence[Any], message: str | None = None,  # noqa: N802
          first_n: int | None = None, summarize: int | None = None,
          name: str | None = None) -> Tensor:
    tensors, literals = split_data(data)
    attrs = _attrs(literals, summarize)
    if message is not None:
        attrs["message"] = message
    if first_n is not None:
        attrs["first_n"] = first_n
    return apply("Print", [input_, tensors], attrs, name=name or "Print")
