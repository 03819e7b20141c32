"""Host kernels of the utility ops: ``SerializeTensor``/``ParseTensor``, ``Timestamp``,
``MatchingFiles`` and ``DecodeCompressed``.

Contract: ``ParseTensor`` raises `InvalidArgumentError` for bytes that are no ``TensorProto`` or
hold another dtype than `out_type`. ``MatchingFiles`` sorts the matches
of all its patterns together; none matching is `NotFoundError`, as TF. ``DecodeCompressed``
inflates ``ZLIB`` or ``GZIP`` data (``""``: as is), element-wise.
"""

from __future__ import annotations

import gzip
import time
import zlib
from typing import Any

import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.graph.tensor_proto import parse_tensor, serialize_tensor_content
from tensorweave.engine.kernel import KernelContext
from tensorweave.platform import gfile
from tensorweave.plugins.kernels.file_access import checked_matches, checked_pattern


def _scalar_string(data: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def serialize_tensor(ctx: KernelContext, tensor: Any) -> np.ndarray:
    return _scalar_string(serialize_tensor_content(np.asarray(tensor)))


def parse_tensor_kernel(ctx: KernelContext, serialized: Any) -> np.ndarray:
    data = np.asarray(serialized).item()
    want = ctx.attrs["out_type"]
    try:
        array = parse_tensor(data)
    except ValueError:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, "Could not parse `serialized` as TensorProto: "
            f"'{data!r}'") from None
    got = dtypes.as_dtype(array.dtype)
    if got != want:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"Type mismatch between parsed tensor ({got.name}) and "
            f"dtype ({want.name})")
    return array


def timestamp(ctx: KernelContext) -> np.ndarray:
    return np.asarray(time.time(), np.float64)


def matching_files(ctx: KernelContext, pattern: Any) -> np.ndarray:
    patterns = [p.decode() if isinstance(p, bytes) else str(p)
                for p in np.asarray(pattern, dtype=object).reshape(-1)]
    found = sorted(checked_matches(ctx, (name for p in patterns
                                         for name in gfile.glob(checked_pattern(ctx, p)))))
    if not found:
        raise errors.NotFoundError(ctx.node_name, ctx.op,
                                   f"No files matched pattern: {', '.join(patterns)}")
    out = np.empty(len(found), dtype=object)
    out[:] = [name.encode() for name in found]
    return out


_INFLATE = {"": lambda data: data, "ZLIB": zlib.decompress, "GZIP": gzip.decompress}


def decode_compressed(ctx: KernelContext, data: Any) -> np.ndarray:
    kind = ctx.attrs.get("compression_type", "")
    if kind not in _INFLATE:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                          f"Unsupported compression_type: {kind}")
    source = np.asarray(data, dtype=object)
    out = np.empty(source.shape, dtype=object)
    flat = out.reshape(-1)
    for i, element in enumerate(source.reshape(-1)):
        try:
            flat[i] = _INFLATE[kind](bytes(element))
        except (zlib.error, OSError, EOFError) as exc:
            raise errors.DataLossError(ctx.node_name, ctx.op,
                                       f"Failed to decompress {kind} data: {exc}") from None
    return out


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    registry.add("SerializeTensor", device_type, serialize_tensor)
    registry.add("ParseTensor", device_type, parse_tensor_kernel)
    registry.add("Timestamp", device_type, timestamp)
    registry.add("MatchingFiles", device_type, matching_files)
    registry.add("DecodeCompressed", device_type, decode_compressed)
