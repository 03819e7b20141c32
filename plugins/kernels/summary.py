"""Host kernels of the summary ops: serialized ``Summary`` protos, as TF's
``summary_op.cc``.

Contract: ``ScalarSummary`` writes one ``simple_value`` (as float32) per tag; tags and values of
different shapes are an `InvalidArgumentError`. ``HistogramSummary`` buckets the values as TF's
``histogram::Histogram`` does (`DEFAULT_BUCKET_LIMITS`: +-1e-12 growing by 1.1 up to 1e20, then
+-DBL_MAX, and 0), writing runs of empty buckets as one; NaN or infinity is an
`InvalidArgumentError`. ``ImageSummary`` PNG-encodes the first ``max_images`` images of a
``[batch, h, w, 1|3|4]`` tensor as TF's ``summary_image_op.cc`` (tags ``<tag>/image`` when
``max_images`` is 1, else ``<tag>/image/<i>``; float images mapped to uint8 as `_to_uint8`
says). ``MergeSummary`` concatenates its inputs' values unchanged and refuses
a duplicate tag or an input that is not a ``Summary``. Registered for ``CPU`` only.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.formats import png
from tensorweave.formats.summary_proto import HistogramProto, Summary

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
    summary = Summary(value=[
        Summary.Value(tag=_tag(ctx, tag), simple_value=float(np.float32(value)))
        for tag, value in zip(tags.reshape(-1).tolist(), values.reshape(-1).tolist())])
    return _serialized(summary.SerializeToString())


def histogram_summary(ctx: KernelContext, tag: np.ndarray, values: np.ndarray) -> np.ndarray:
    flat = np.asarray(values, np.float64).reshape(-1)
    if not np.isfinite(flat).all():
        what = "Nan" if np.isnan(flat).any() else "Infinity"
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                          f"{what} in summary histogram for: {ctx.node_name}")
    value = Summary.Value(tag=_tag(ctx, tag[()]), histo=make_histogram(flat))
    return _serialized(Summary(value=[value]).SerializeToString())


def _to_uint8(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """TF's float-image mapping: nonnegative images scaled so the max is 255, others centred
    on 128 with the largest magnitude at 1 or 255; pixels with a nonfinite channel get
    `bad_color`. The arithmetic is in the image's own dtype, as TF's."""
    finite = np.isfinite(image).all(axis=-1)
    good = image[finite]
    low = float(good.min()) if good.size else np.inf
    high = float(good.max()) if good.size else -np.inf
    if low < 0:
        top = max(abs(low), abs(high))
        scale, offset = (0.0 if top < 1e-6 else 127.0 / top), 128.0
    else:
        scale, offset = (0.0 if high < 1e-6 else 255.0 / high), 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        mapped = image * image.dtype.type(scale) + image.dtype.type(offset)
    out = np.where(finite[..., None], mapped, 0).astype(np.uint8)
    out[~finite] = bad_color[:image.shape[-1]]
    return out


def image_summary(ctx: KernelContext, tag: np.ndarray, tensor: np.ndarray) -> np.ndarray:
    if tag.shape != ():
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op, "Tags must be a scalar")
    if tensor.ndim != 4 or tensor.shape[3] not in (1, 3, 4):
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op,
            "Tensor must be 4-D with last dim 1, 3, or 4, not "
            f"[{','.join(str(d) for d in tensor.shape)}]")
    batch, height, width, depth = tensor.shape
    if height * width == 0:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, "input tensor must have non-zero dims. Found: "
            f"[{batch}, {height}, {width}, {depth}].")
    bad_color = np.asarray(ctx.attrs["bad_color"], np.uint8).reshape(-1)
    if tensor.dtype != np.uint8 and bad_color.size < depth:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"expected depth <= bad_color.size, got depth = {depth}, "
            f"bad_color.size = {bad_color.size}")
    base, many = _tag(ctx, tag[()]), int(ctx.attrs["max_images"]) > 1
    values = []
    for i in range(min(int(ctx.attrs["max_images"]), batch)):
        image = tensor[i] if tensor.dtype == np.uint8 else _to_uint8(tensor[i], bad_color)
        encoded = Summary.Image(height=height, width=width, colorspace=depth,
                                encoded_image_string=png.encode(image))
        values.append(Summary.Value(tag=f"{base}/image/{i}" if many else f"{base}/image",
                                    image=encoded))
    return _serialized(Summary(value=values).SerializeToString())


def merge_summary(ctx: KernelContext, *inputs: np.ndarray) -> np.ndarray:
    seen: set[str] = set()
    merged = Summary()
    for array in inputs:
        for data in array.reshape(-1).tolist():
            try:
                summary = Summary.FromString(data)
            except (DecodeError, TypeError):  # TypeError: not bytes
                raise errors.InvalidArgumentError(
                    ctx.node_name, ctx.op, "Could not parse one of the summary inputs") from None
            for value in summary.value:
                if value.tag and value.tag in seen:
                    raise errors.InvalidArgumentError(
                        ctx.node_name, ctx.op,
                        f"Duplicate tag {value.tag} found in summary inputs")
                seen.add(value.tag)
            merged.value.extend(summary.value)
    return _serialized(merged.SerializeToString())


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    if device_type != "CPU":  # strings live in host memory
        return
    registry.add("ScalarSummary", device_type, scalar_summary)
    registry.add("HistogramSummary", device_type, histogram_summary)
    registry.add("ImageSummary", device_type, image_summary)
    registry.add("MergeSummary", device_type, merge_summary)
