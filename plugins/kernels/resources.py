"""Named resources that kernels keep in their device's resource store (queues,
accumulators): made by the first run of the node that names them, found by the handle it
outputs.

Contract: `make_handle` gives the node's handle, a string scalar ``<kind>:<shared_name>`` (the
node name when the shared name is empty, as variables are named here; ":" never occurs in a
variable's name). The first node to ask creates the resource; every node asking checks that
its attrs agree with the resource (`InvalidArgumentError` with the check's message). The
handle is cached in the node's kernel state, which outlives a plan (it belongs to the node
name on this device), so it is trusted only for the attrs it was checked against. `find`
returns the resource a handle names (`NotFoundError` if there is none of the expected type);
`get_or_create` is the store's create-once lookup, which variables and iterators use too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext

R = TypeVar("R")


def make_handle(ctx: KernelContext, kind: str, create: Callable[[str], Any],
                mismatch: Callable[[Any], str | None]) -> np.ndarray:
    """The handle of the node's resource: ``create(name)`` makes it when it does not exist,
    ``mismatch(resource)`` says why the node's attrs do not fit it (``None`` when they do)."""
    cached = ctx.state.get("handle")
    if cached is not None and cached[0] is ctx.attrs:
        return cached[1]
    name = ctx.attrs["shared_name"] or ctx.node_name
    key = f"{kind}:{name}"
    resource = get_or_create(ctx, key, lambda: create(name))
    problem = mismatch(resource)
    if problem is not None:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op, problem)
    handle = np.array(key.encode(), dtype=object)
    ctx.state["handle"] = (ctx.attrs, handle)
    return handle


def get_or_create(ctx: KernelContext, key: str, create: Callable[[], R]) -> R:
    """The resource stored under `key` on the node's device, made by `create` if there is
    none (under the device's lock, so concurrent first runs make one)."""
    with ctx.device.lock:
        resource = ctx.device.resources.get(key)
        if resource is None:
            resource = ctx.device.resources[key] = create()
    return resource


def find(ctx: KernelContext, handle: Any, kind: type[R]) -> R:
    """The resource of type `kind` that `handle` names on the node's device."""
    key = handle.item() if hasattr(handle, "item") else handle
    key = key.decode() if isinstance(key, bytes) else str(key)
    resource = ctx.device.resources.get(key)
    if not isinstance(resource, kind):
        raise errors.NotFoundError(ctx.node_name, ctx.op,
                                   f"Resource {key} does not exist on {ctx.device.name}")
    return resource
