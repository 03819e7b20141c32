"""Op signatures: what an op type takes, gives and guarantees.

Contract: an `OpDef` names its inputs, each ``"name:TYPE"`` where TYPE is a type attr (``T``), a
fixed dtype (``int32``), or absent (any dtype); a leading ``*`` on TYPE (``"values:*T"``, or
``"values:*"``) marks a list input. Type attrs are filled from the inputs at op creation, checked
against `type_constraints`, and a mismatch raises `TypeError` naming the node. `attrs` maps attr
names to defaults (`REQUIRED` for none). `infer(ctx)` receives the inputs' dtypes and static
shapes plus the attrs, and returns one `TensorSpec` per output; it raises `ValueError` for
incompatible shapes.

`stateful` ops (random, variables, I/O) are never merged or folded. `ref_inputs` are inputs that
take a variable ref (the op is placed with the variable); `ref_output` marks an op whose output
is one, and other consumers of a ref receive the variable's value. `grad`, when set, builds the
op's gradient graph (see `tensorweave_register_gradients`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from attrs import define, field, frozen

from tensorweave.engine import dtypes
from tensorweave.engine.tensor_shape import TensorShape, format_dims


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@frozen
class TensorSpec:
    """The static dtype and shape of one tensor; for a ``resource`` tensor `handle` is the spec
    of the value the handle refers to, when known (TF's handle data: a ``ReadVariableOp``'s
    output shape comes from it)."""

    dtype: dtypes.DType
    shape: TensorShape = field(converter=TensorShape)
    handle: TensorSpec | None = None


@frozen
class OpDef:
    """The signature of one op type."""

    name: str
    inputs: tuple[str, ...]
    infer: Callable[[InferContext], Sequence[TensorSpec]]
    attrs: Mapping[str, Any] = field(factory=dict)
    type_constraints: Mapping[str, frozenset[dtypes.DType]] = field(factory=dict)
    stateful: bool = False
    ref_inputs: tuple[int, ...] = ()
    ref_output: bool = False  # output 0 is a variable ref (VariableV2)
    list_output: bool = False  # outputs form one list whose length depends on attrs (Split)
    grad: Callable[..., Any] | None = None
    doc: str = ""
    # TF's ApiDef renames: input name -> the keyword ``raw_ops`` takes for it (``Sum``'s
    # ``reduction_indices`` is ``axis`` there), where they differ
    api_names: Mapping[str, str] = field(factory=dict)

    @property
    def args(self) -> tuple[ArgSpec, ...]:
        return _parse_args(self.inputs)

    @property
    def api_input_names(self) -> tuple[str, ...]:
        """The inputs' keywords in ``raw_ops``, in order."""
        return tuple(self.api_names.get(name, name) for name in self.input_names)

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args)


@frozen
class ArgSpec:
    """One declared input: its name, whether it is a list, and its type rule."""

    name: str
    is_list: bool
    type_attr: str | None
    fixed: dtypes.DType | None


@functools.cache
def _parse_args(inputs: tuple[str, ...]) -> tuple[ArgSpec, ...]:
    out = []
    for text in inputs:
        name, _, kind = (part.strip() for part in text.partition(":"))
        is_list = kind.startswith("*")
        kind = kind.lstrip("*")
        fixed = None
        type_attr = None
        if kind:
            try:
                fixed = dtypes.as_dtype(kind)
            except TypeError:
                type_attr = kind
        out.append(ArgSpec(name, is_list, type_attr, fixed))
    return tuple(out)


@define
class InferContext:
    """What a shape/dtype function sees at op creation."""

    node_name: str
    op: str
    inputs: list[TensorSpec]
    attrs: dict[str, Any]
    value_of: Callable[[int], np.ndarray | None]

    def attr(self, name: str) -> Any:
        return self.attrs[name]

    def dtype(self, i: int) -> dtypes.DType:
        return self.inputs[i].dtype

    def shape(self, i: int) -> TensorShape:
        return self.inputs[i].shape

    def constant_value(self, i: int) -> np.ndarray | None:
        """The input's value when known at graph-construction time, else ``None``."""
        return self.value_of(i)

    def shape_error(self, detail: str) -> ValueError:
        shapes = ", ".join(format_dims(s.shape) for s in self.inputs)
        return ValueError(
            f"{detail} for '{{{{node {self.node_name}}}}} = {self.op}[]' (op: '{self.op}') "
            f"with input shapes: {shapes}."
        )

    def type_error(self, detail: str) -> TypeError:
        return TypeError(f"{detail} (node '{self.node_name}', op '{self.op}')")
