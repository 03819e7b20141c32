"""Kernel of ``GatherTree``: beam-search backtracking (TF's ``GatherTreeOp``).

Contract: for each batch entry b and beam k, with ``L = min(max_time, max_sequence_lengths[b])``,
``beams[L-1, b, k] = step_ids[L-1, b, k]`` and, going back, each earlier step takes the id of the
beam its successor's parent pointer names. Steps at or past L hold `end_token`, and so does every
step after the first `end_token` within L. A parent id outside ``[0, beam_width)`` met while
backtracking raises `InvalidArgumentError`. All (batch, beam) pairs are walked at once, one time
step per iteration.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext


def gather_tree(ctx: KernelContext, step_ids: Any, parent_ids: Any, lengths: Any,
                end_token: Any) -> Any:
    xp = ctx.xp
    max_time, batch, beam_width = step_ids.shape
    if parent_ids.shape != step_ids.shape:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"step_ids.shape must match parent_ids.shape. but shapes "
            f"are: {list(step_ids.shape)} and {list(parent_ids.shape)}")
    if lengths.shape != (batch,):
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"batch size dimensions step_ids.shape[1] and "
            f"max_sequence_lengths.shape[0] must match. but shapes are: "
            f"{list(step_ids.shape)} and {list(lengths.shape)}")
    end = end_token.astype(ctx.out_np)
    beams = xp.full(step_ids.shape, end, dtype=ctx.out_np)
    limit = xp.minimum(lengths, max_time)[:, None]  # [batch, 1]
    cur = xp.broadcast_to(xp.arange(beam_width, dtype=step_ids.dtype), (batch, beam_width))
    for t in range(max_time - 1, -1, -1):
        active = xp.broadcast_to(t < limit, (batch, beam_width))
        bad = active & ((cur < 0) | (cur >= beam_width))
        if bool(bad.any()):
            b, k = (int(i[0]) for i in xp.nonzero(bad))
            raise errors.InvalidArgumentError(
                ctx.node_name, ctx.op, f"Saw invalid parent id {int(cur[b, k])} at (batch, "
                f"time, beam) == ({b}, {t}, {k})")
        safe = xp.where(active, cur, 0)
        beams[t] = xp.where(active, xp.take_along_axis(step_ids[t], safe, 1), beams[t])
        cur = xp.where(active, xp.take_along_axis(parent_ids[t], safe, 1), cur)
    # a hand-fed trajectory may continue past an end token: everything after it is end
    within = xp.arange(max_time)[:, None, None] < limit[None]
    is_end = (beams == end) & within
    after_end = (xp.cumsum(is_end, axis=0) - is_end) > 0
    return xp.where(after_end & within, end, beams).astype(ctx.out_np, copy=False)


def register(registry: Any, device_type: str) -> None:
    registry.add("GatherTree", device_type, gather_tree)
