"""Host kernels of the summary ops: serialized ``Summary`` protos, as TF's
``summary_op.cc``.

Contract: ``ScalarSummary`` writes one ``simple_value`` (as float32) per tag; tags and values of
different shapes are an `InvalidArgumentError`. ``HistogramSummary`` buckets the values as TF's
``histogram::Histogram`` does (`DEFAULT_BUCKET_LIMITS`: +-1e-12 growing by 1.1 up to 1e20, then
+-DBL_MAX, and 0), writing runs of empty buckets as one; NaN or infinity is an
`InvalidArgumentError`. ``MergeSummary`` concatenates its inputs' values unchanged and refuses
a duplicate tag or an input that is not a ``Summary``. Registered for ``CPU`` only.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.kernel import KernelContext
from tensorweave.proto_wire import bytes_field, fields
from tensorweave.summary_proto import HistogramProto, Summary, SummaryValue

_DBL_MAX = sys.float_info.max


def _default_limits() -> np.ndarray:
    positive = []
    v = 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1
    positive.append(_DBL_MAX)
    return np.array([-p for p in reversed(positive)] + [0.0] + positive)


DEFAULT_BUCKET_LIMITS = _default_limits()


def make_histogram(values: np.ndarray) -> HistogramProto:
    """TF's histogram of finite `values` (float64), empty-bucket runs collapsed."""
    values = np.asarray(values, np.float64).reshape(-1)
    counts = np.bincount(
        np.minimum(np.searchsorted(DEFAULT_BUCKET_LIMITS, values, side="right"),
                   len(DEFAULT_BUCKET_LIMITS) - 1),
        minlength=len(DEFAULT_BUCKET_LIMITS))
    limits, buckets = [], []
    i, n = 0, len(counts)
    while i < n:
        end, count = DEFAULT_BUCKET_LIMITS[i], counts[i]
        i += 1
        if count <= 0:
            while i < n and counts[i] <= 0:
                end, count = DEFAULT_BUCKET_LIMITS[i], counts[i]
                i += 1
        limits.append(float(end))
        buckets.append(float(count))
    return HistogramProto(
        min=float(values.min()) if values.size else _DBL_MAX,
        max=float(values.max()) if values.size else -_DBL_MAX,
        num=float(values.size), sum=float(values.sum()),
        sum_squares=float(np.dot(values, values)), bucket_limit=limits, bucket=buckets)


def _serialized(data: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def _tag(ctx: KernelContext, tag: bytes) -> str:
    try:
        return tag.decode("utf-8")
    except UnicodeDecodeError:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                          f"Summary tag {tag!r} is not valid UTF-8") from None


def scalar_summary(ctx: KernelContext, tags: np.ndarray, values: np.ndarray) -> np.ndarray:
    if tags.shape != values.shape:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"tags and values not the same shape: {list(tags.shape)} != "
            f"{list(values.shape)}")
    summary = Summary(tuple(
        SummaryValue(_tag(ctx, tag), simple_value=float(np.float32(value)))
        for tag, value in zip(tags.reshape(-1).tolist(), values.reshape(-1).tolist())))
    return _serialized(summary.SerializeToString())


def histogram_summary(ctx: KernelContext, tag: np.ndarray, values: np.ndarray) -> np.ndarray:
    flat = np.asarray(values, np.float64).reshape(-1)
    if not np.isfinite(flat).all():
        what = "Nan" if np.isnan(flat).any() else "Infinity"
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                          f"{what} in summary histogram for: {ctx.node_name}")
    value = SummaryValue(_tag(ctx, tag[()]), histo=make_histogram(flat))
    return _serialized(Summary((value,)).SerializeToString())


def merge_summary(ctx: KernelContext, *inputs: np.ndarray) -> np.ndarray:
    seen: set[str] = set()
    out = []
    for array in inputs:
        for data in array.reshape(-1).tolist():
            try:
                values = [raw for number, _, raw in fields(data) if number == 1]
                tags = [SummaryValue.FromString(raw).tag for raw in values]
            except (ValueError, UnicodeDecodeError):
                raise errors.InvalidArgumentError(
                    ctx.node_name, ctx.op, "Could not parse one of the summary inputs") from None
            for tag, raw in zip(tags, values):
                if tag and tag in seen:
                    raise errors.InvalidArgumentError(
                        ctx.node_name, ctx.op, f"Duplicate tag {tag} found in summary inputs")
                seen.add(tag)
                out.append(bytes_field(1, raw, always=True))
    return _serialized(b"".join(out))


def register(registry: Any, device_type: str) -> None:
    if device_type != "CPU":  # strings live in host memory
        return
    registry.add("ScalarSummary", device_type, scalar_summary)
    registry.add("HistogramSummary", device_type, histogram_summary)
    registry.add("MergeSummary", device_type, merge_summary)
