"""Kernels: the implementation of one op type on one device type.

Contract: a kernel is a plain callable registered as a `KernelDef`. It is called as
``fn(ctx, *inputs)`` where `ctx` is the node's `KernelContext` (built once per node when a
partition is registered, never per step) and the inputs are arrays of the device's array module
``ctx.xp``. It returns one array, or a tuple for ops with several outputs. Flags change the call:
``needs_step`` -> ``fn(ctx, step, *inputs)``; ``is_async`` -> ``fn(ctx, step, done, *inputs)``,
and the kernel calls ``done(outputs)`` or ``done(exc)`` exactly once, on any thread. `expensive`
kernels run on the inter-op thread pool; cheap ones run inline.

A pure kernel may also offer ``fn.bind(ctx, input_dtypes)`` (see `bound`), called once per node
when a plan is built: a callable of the inputs alone that returns exactly what
``fn(ctx, *inputs)`` returns for inputs of those dtypes, or None where it has no such form. It
may fail with a different exception than `fn`; whoever catches its failure calls `fn` itself for
the kernel's error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from tensorweave.engine import dtypes

ANY_DEVICE = "*"


@attrs.frozen
class KernelDef:
    """One registered kernel; `dtypes` constrains the node's type attr (None: any)."""

    op: str
    device_type: str
    fn: Callable[..., Any]
    plugin: str
    dtypes: frozenset[dtypes.DType] | None = None
    priority: int = 0
    is_async: bool = False
    needs_step: bool = False
    expensive: bool = False

    def matches(self, dtype: dtypes.DType | None) -> bool:
        return self.dtypes is None or dtype is None or dtype in self.dtypes

    def overlaps(self, other: KernelDef) -> bool:
        if self.dtypes is None or other.dtypes is None:
            return True
        return bool(self.dtypes & other.dtypes)


@attrs.define
class KernelContext:
    """Per-node, per-device state a kernel may read; built once at registration."""

    node_name: str
    op: str
    attrs: dict[str, Any]
    device: Any
    xp: Any
    output_dtypes: list[dtypes.DType]
    output_shapes: list[Any]
    state: dict[str, Any] = attrs.field(factory=dict)

    def attr(self, name: str) -> Any:
        return self.attrs[name]

    @property
    def out_np(self) -> type:
        """numpy type of output 0, for kernels that must produce exactly the node's dtype."""
        return self.output_dtypes[0].np_type


def bound(fn: Callable[..., Any], ctx: KernelContext,
          input_dtypes: list[dtypes.DType]) -> Callable[..., Any] | None:
    """`fn`'s form for one node that takes the inputs alone (``fn.bind``), or None. A kernel
    that needs the step (``needs_step``) takes the step, then the inputs, in its bound form."""
    bind = getattr(fn, "bind", None)
    return None if bind is None else bind(ctx, input_dtypes)


def type_key(attrs_: dict[str, Any], output_dtypes: list[dtypes.DType]) -> dtypes.DType | None:
    """The dtype a kernel's constraint is checked against: attr ``T``, else ``dtype``, else
    output 0's dtype."""
    for name in ("T", "dtype"):
        value = attrs_.get(name)
        if isinstance(value, dtypes.DType):
            return value
    return output_dtypes[0] if output_dtypes else None
