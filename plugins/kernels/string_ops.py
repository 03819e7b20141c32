"""Kernels of the dense string ops, host-only as in TF (the CPU plugin's
``HOST_KERNEL_MODULES``).

Contract: string tensors are object arrays of `bytes` (see ``string_array``); every kernel
returns a new array of the node's dtype and shape and never touches its inputs. Runtime errors
are TF's, as `InvalidArgumentError` (``OutOfRangeError`` for a ``ReduceJoin`` axis,
``UnimplementedError`` for a ``Substr`` broadcast beyond two dims) naming the node.

Splits: ``StringSplit`` and ``StringSplitV2`` return a sparse tensor's indices, values and
dense shape ``[batch, most tokens in one string]``, row by row. ``StringSplit`` treats each byte
of its delimiter as a split point (none: every byte is a token) and gives no token for an empty
string; ``StringSplitV2`` is TF's ``SplitV2``: Python's ``bytes.split`` except that, with no
separator, ``maxsplit=0`` keeps the string whole and the rest after the last allowed split is
kept even when empty.

``StringFormat`` fills its template's placeholders with TF's ``SummarizeValue(summarize,
print_v2=true)`` of each input: per dimension the first and last `summarize` entries around
``...``, rows on new lines, strings quoted and C-escaped (UTF-8 kept), other values as
``Print`` shows them (bools as 1/0).

Regexes are RE2's, as TF's (``re2_regex``): matched on the raw bytes, TF's error for a pattern
RE2 rejects, RE2's replacement loop and rewrite syntax (``\\0``-``\\9``, ``\\\\``).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels import re2_regex
from tensorweave.plugins.kernels.array import _fail, _fmt, _segment_rows
from tensorweave.plugins.kernels.logging_ops import _element
from tensorweave.plugins.kernels.string_hash import fingerprint64, hash64, siphash24
from tensorweave.plugins.standard_ops.string_ops import split_template

# C's isspace in the "C" locale, which TF's number parsing and StringStrip skip.
_SPACE = b" \t\n\v\f\r"
_INT = re.compile(rb"-?[0-9]+")
_FLOAT = re.compile(rb"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|0[xX][0-9a-fA-F]+"
                    rb"|(?i:inf|nan))")
# double-conversion refuses strings as long as TF's number buffer
_MAX_FLOAT_CHARS = 32
_INT_RANGE = {dtypes.int32: (-(2**31), 2**31 - 1), dtypes.int64: (-(2**63), 2**63 - 1)}


def _map(x: Any, fn: Callable[[bytes], Any], out_type: Any = object) -> np.ndarray:
    """`fn` applied to each element of `x`, as an array of `x`'s shape."""
    arr = np.asarray(x, dtype=object)
    out = np.empty(arr.shape, dtype=out_type)
    flat = out.reshape(-1)
    for i, element in enumerate(arr.reshape(-1)):
        flat[i] = fn(element)
    return out


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


# --- joins -----------------------------------------------------------------------------------

def string_join(ctx: KernelContext, *inputs: Any) -> np.ndarray:
    arrays = [np.asarray(x, dtype=object) for x in inputs]
    shape: tuple[int, ...] | None = None
    for arr in arrays:
        if arr.ndim:
            if shape is not None and arr.shape != shape:
                raise _fail(ctx, f"Input shapes do not match: {_fmt(shape)} vs. "
                                 f"{_fmt(arr.shape)}")
            shape = arr.shape
    shape = () if shape is None else shape
    sep = _attr_bytes(ctx.attrs["separator"])
    parts = [np.broadcast_to(arr, shape).reshape(-1) for arr in arrays]
    out = np.empty(shape, dtype=object)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = sep.join(p[i] for p in parts)
    return out


def reduce_join(ctx: KernelContext, inputs: Any, reduction_indices: Any) -> np.ndarray:
    x = np.asarray(inputs, dtype=object)
    rank = x.ndim
    reduced: list[int] = []
    for axis in np.asarray(reduction_indices).reshape(-1).tolist():
        if not -rank <= axis < rank:
            raise errors.OutOfRangeError(ctx.node_name, ctx.op, f"Invalid reduction dimension "
                                         f"{axis} for input with {rank} dimension(s)")
        if axis % rank in reduced:
            raise _fail(ctx, f"Duplicate reduction dimension {axis}")
        reduced.append(axis % rank)
    kept = [d for d in range(rank) if d not in reduced]
    # TF joins with the first listed axis varying fastest: order the reduced axes last to first.
    moved = x.transpose(kept + reduced[::-1])
    kept_shape = tuple(x.shape[d] for d in kept)
    rows = moved.reshape(math.prod(kept_shape), math.prod(x.shape[d] for d in reduced))
    sep = _attr_bytes(ctx.attrs["separator"])
    out = np.empty(kept_shape, dtype=object)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = sep.join(rows[i])
    if ctx.attrs["keep_dims"]:
        out = out.reshape([1 if d in reduced else x.shape[d] for d in range(rank)])
    return out


def unsorted_segment_join(ctx: KernelContext, inputs: Any, segment_ids: Any,
                          num_segments: Any) -> np.ndarray:
    """Each segment's rows joined item by item, in row-major order ("" for an empty one)."""
    ids, rows, n = _segment_rows(ctx, np.asarray(inputs, dtype=object), segment_ids,
                                 num_segments)
    inner = rows.shape[1:]
    items = rows.reshape(len(ids), math.prod(inner))
    groups: list[list[Any]] = [[] for _ in range(n)]
    for row, segment in zip(items, ids.tolist()):
        groups[segment].append(row)
    sep = _attr_bytes(ctx.attrs["separator"])
    out = np.empty((n, items.shape[1]), dtype=object)
    for segment, members in enumerate(groups):
        for k in range(items.shape[1]):
            out[segment, k] = sep.join(row[k] for row in members)
    return out.reshape((n, *inner))


def _attr_bytes(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8")


# --- elementwise -----------------------------------------------------------------------------

def _is_lead_byte(byte: int) -> bool:
    return byte & 0xC0 != 0x80


def string_length(ctx: KernelContext, x: Any) -> np.ndarray:
    if ctx.attrs["unit"] == "UTF8_CHAR":
        return _map(x, lambda s: sum(1 for b in s if _is_lead_byte(b)), np.int32)
    return _map(x, len, np.int32)


def _case(ctx: KernelContext, x: Any, ascii_fn: Callable[[bytes], bytes],
          text_fn: Callable[[str], str]) -> np.ndarray:
    encoding = ctx.attrs["encoding"]
    if encoding == "":
        return _map(x, ascii_fn)
    if encoding != "utf-8":
        raise _fail(ctx, f"only utf-8 or '' (no encoding) is supported, received {encoding}")
    return _map(x, lambda s: text_fn(s.decode("utf-8", "replace")).encode("utf-8"))


def string_upper(ctx: KernelContext, x: Any) -> np.ndarray:
    return _case(ctx, x, bytes.upper, str.upper)


def string_lower(ctx: KernelContext, x: Any) -> np.ndarray:
    return _case(ctx, x, bytes.lower, str.lower)


def string_strip(ctx: KernelContext, x: Any) -> np.ndarray:
    return _map(x, lambda s: s.strip(_SPACE))


# --- substr ----------------------------------------------------------------------------------

def _forward(s: bytes, chars: int, pos: int) -> tuple[int, bool]:
    """TF's ``ForwardNUTF8CharPositions``: `pos` moved `chars` characters on, and whether all
    of them were there."""
    counted = 0
    while counted < chars and pos < len(s):
        pos += 1
        while pos < len(s) and not _is_lead_byte(s[pos]):
            pos += 1
        counted += 1
    return pos, counted == chars


def _back(s: bytes, chars: int, pos: int) -> tuple[int, bool]:
    """TF's ``BackNUTF8CharPositions``."""
    counted = 0
    while counted < chars and pos > 0:
        pos -= 1
        while pos > 0 and not _is_lead_byte(s[pos]):
            pos -= 1
        counted += 1
    return pos, counted == chars


def _utf8_span(s: bytes, pos: int, length: int) -> tuple[int, int] | None:
    """Byte start and end of `length` characters from character `pos` (negative: from the
    end), or None when `pos` is out of range."""
    if pos >= 0:
        start, ok = _forward(s, pos, 0)
        if not ok:
            return None
        end, _ = _forward(s, length, start)  # a length past the end is capped
        return start, end
    end, ok = _back(s, max(-pos - length, 0), len(s))
    if not ok:
        return None
    start, ok = _back(s, -pos - max(-pos - length, 0), end)
    return (start, end) if ok else None


def _substr_one(ctx: KernelContext, s: bytes, pos: int, length: int, where: str) -> bytes:
    if ctx.attrs["unit"] == "UTF8_CHAR":
        span = _utf8_span(s, pos, length)
        if span is None:
            raise _fail(ctx, f"pos {pos} out of range for string at index {where}")
        return s[span[0]:span[1]]
    start = len(s) + pos if pos < 0 else pos
    if not 0 <= start <= len(s):
        text = s.decode("utf-8", "backslashreplace")
        raise _fail(ctx, f"pos {pos} out of range for string b'{text}' at index {where}")
    # a negative length is a huge size_t in TF's StringPiece::substr: the rest of the string
    return s[start:] if length < 0 else s[start:start + length]


def substr(ctx: KernelContext, x: Any, pos: Any, length: Any) -> np.ndarray:
    x = np.asarray(x, dtype=object)
    pos, length = np.asarray(pos), np.asarray(length)
    if pos.shape != length.shape:
        raise _fail(ctx, f"pos and len should have the same shape, got: {_fmt(pos.shape)} vs. "
                         f"{_fmt(length.shape)}")
    if pos.size == 0:
        raise _fail(ctx, f"received empty tensor pos_tensor: {_fmt(pos.shape)}")
    try:
        shape = np.broadcast_shapes(x.shape, pos.shape)
    except ValueError:
        raise _fail(ctx, f"Incompatible shapes: {_fmt(x.shape)} vs. {_fmt(pos.shape)}") from None
    broadcasting = pos.ndim > 0 and x.shape != pos.shape
    if broadcasting and len(shape) > 2:
        raise errors.UnimplementedError(ctx.node_name, ctx.op, f"Substr broadcast not "
                                        f"implemented for {len(shape)} dimensions")
    xs, ps, ls = (np.broadcast_to(a, shape) for a in (x, pos, length))
    out = np.empty(shape, dtype=object)
    for flat_index, index in enumerate(np.ndindex(*shape)):
        # TF names the flat index, or the row of a two-dim broadcast ((i, j) for bytes)
        where = str(flat_index)
        if broadcasting and len(shape) == 2:
            where = (str(index[0]) if ctx.attrs["unit"] == "UTF8_CHAR"
                     else f"({index[0]}, {index[1]})")
        out[index] = _substr_one(ctx, xs[index], int(ps[index]), int(ls[index]), where)
    return out


# --- regexes ---------------------------------------------------------------------------------

def _compile(ctx: KernelContext, pattern: bytes) -> Any:
    cache = ctx.state.setdefault("regex", {})
    if pattern not in cache:
        try:
            regex = re2_regex.compile_pattern(pattern)
        except ValueError as exc:
            raise _fail(ctx, f"Invalid pattern: {pattern.decode('utf-8', 'replace')}, error: "
                             f"{exc}") from None
        cache.clear()  # one pattern per node in practice, as TF's kernel keeps the last
        cache[pattern] = regex
    return cache[pattern]


def _scalar_string(ctx: KernelContext, value: Any, what: str) -> bytes:
    arr = np.asarray(value, dtype=object)
    if arr.ndim:
        raise _fail(ctx, f"{what} must be scalar, but received {_fmt(arr.shape)}")
    return arr[()]


def _regex_replace(ctx: KernelContext, x: Any, pattern: bytes, rewrite: bytes) -> np.ndarray:
    regex = _compile(ctx, pattern)
    replace_global = ctx.attrs["replace_global"]
    return _map(x, lambda s: re2_regex.replace(regex, s, rewrite, replace_global))


def regex_replace(ctx: KernelContext, x: Any, pattern: Any, rewrite: Any) -> np.ndarray:
    pattern = _scalar_string(ctx, pattern, "Pattern")
    rewrite = _scalar_string(ctx, rewrite, "Rewrite")
    return _regex_replace(ctx, x, pattern, rewrite)


def static_regex_replace(ctx: KernelContext, x: Any) -> np.ndarray:
    return _regex_replace(ctx, x, _attr_bytes(ctx.attrs["pattern"]),
                          _attr_bytes(ctx.attrs["rewrite"]))


def _full_match(ctx: KernelContext, x: Any, pattern: bytes) -> np.ndarray:
    regex = _compile(ctx, pattern)
    return _map(x, lambda s: re2_regex.full_match(regex, s), np.bool_)


def regex_full_match(ctx: KernelContext, x: Any, pattern: Any) -> np.ndarray:
    return _full_match(ctx, x, _scalar_string(ctx, pattern, "Pattern"))


def static_regex_full_match(ctx: KernelContext, x: Any) -> np.ndarray:
    return _full_match(ctx, x, _attr_bytes(ctx.attrs["pattern"]))


# --- numbers ---------------------------------------------------------------------------------

def _parse_number(s: bytes, out: dtypes.DType) -> Any:
    """TF's ``SafeStringToNumeric``: None when `s` is not a number of type `out`."""
    body = s.strip(_SPACE)
    if out.is_integer:
        if _INT.fullmatch(body) is None:
            return None
        value = int(body)
        low, high = _INT_RANGE[out]
        return value if low <= value <= high else None
    if len(s) >= _MAX_FLOAT_CHARS or _FLOAT.fullmatch(body) is None:
        return None
    lowered = body.lower().lstrip(b"+-")
    if lowered.startswith(b"0x"):
        value = float(int(lowered, 16))
        return -value if body.startswith(b"-") else value
    return float(body)


def string_to_number(ctx: KernelContext, x: Any) -> np.ndarray:
    out_type = ctx.attrs["out_type"]

    def convert(s: bytes) -> Any:
        value = _parse_number(s, out_type)
        if value is None:
            raise _fail(ctx, "StringToNumberOp could not correctly convert string: "
                             f"{s.decode('utf-8', 'backslashreplace')}")
        return value

    with np.errstate(over="ignore"):  # a float64 beyond float32's range is inf, as in TF
        return _map(x, convert, out_type.np_type)


def _as_string_format(ctx: KernelContext, dtype: dtypes.DType) -> str:
    """The printf format TF's ``AsStringOp`` builds from the attrs (checked as TF does)."""
    a = ctx.attrs
    if not dtype.is_floating:
        if a["scientific"] or a["shortest"]:
            raise _fail(ctx, f"scientific and shortest format not supported for datatype "
                             f"{dtype.name}")
        if a["precision"] >= 0:
            raise _fail(ctx, f"precision not supported for datatype {dtype.name}")
    fill = a["fill"]
    if len(fill) > 1:
        raise _fail(ctx, "Fill string must be one or fewer characters")
    if a["scientific"] and a["shortest"]:
        raise _fail(ctx, "Cannot select both scientific and shortest notation")
    if fill and fill not in " +-0#":
        raise _fail(ctx, f'Fill argument not supported: "{fill}"')
    spec = "%" + fill
    spec += str(a["width"]) if a["width"] > -1 else ""
    spec += f".{a['precision']}" if a["precision"] > -1 else ""
    if dtype.is_floating:
        return spec + ("g" if a["shortest"] else "e" if a["scientific"] else "f")
    return spec + "d"


def as_string(ctx: KernelContext, x: Any) -> np.ndarray:
    dtype = ctx.attrs["T"]
    spec = _as_string_format(ctx, dtype)
    if dtype.is_bool:
        return _map(x, lambda v: b"true" if v else b"false")
    cast = float if dtype.is_floating else int
    return _map(x, lambda v: (spec % cast(v)).encode("ascii"))


# --- hashes and base64 -----------------------------------------------------------------------

def hash_bucket_legacy(ctx: KernelContext, x: Any) -> np.ndarray:
    buckets = ctx.attrs["num_buckets"]
    return _map(x, lambda s: hash64(s) % buckets, np.int64)


def hash_bucket_fast(ctx: KernelContext, x: Any) -> np.ndarray:
    buckets = ctx.attrs["num_buckets"]
    return _map(x, lambda s: fingerprint64(s) % buckets, np.int64)


def hash_bucket_strong(ctx: KernelContext, x: Any) -> np.ndarray:
    key = list(ctx.attrs["key"])
    if len(key) != 2:
        raise _fail(ctx, f"Key must have 2 elements, got {len(key)}")
    buckets = ctx.attrs["num_buckets"]
    return _map(x, lambda s: siphash24(key[0], key[1], s) % buckets, np.int64)


def encode_base64(ctx: KernelContext, x: Any) -> np.ndarray:
    pad = ctx.attrs["pad"]
    return _map(x, lambda s: base64.urlsafe_b64encode(s) if pad
                else base64.urlsafe_b64encode(s).rstrip(b"="))


def decode_base64(ctx: KernelContext, x: Any) -> np.ndarray:
    def decode(s: bytes) -> bytes:
        body = s.rstrip(b"=") if len(s) % 4 == 0 else s
        if len(body) % 4 == 1 or re.fullmatch(rb"[A-Za-z0-9_-]*", body) is None:
            raise _fail(ctx, "Invalid character found in base64.")
        try:
            return base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
        except binascii.Error:
            raise _fail(ctx, "Invalid character found in base64.") from None

    return _map(x, decode)


# --- splits ---------------------------------------------------------------------------------

def _split_on_bytes(s: bytes, delimiter: bytes, skip_empty: bool) -> list[bytes]:
    """TF's ``Split`` of ``StringSplit``: at any byte of `delimiter`."""
    if not s:
        return []
    if not delimiter:
        return [s[i:i + 1] for i in range(len(s))]
    # every delimiter byte becomes the first one, so one bytes.split does the set
    first = delimiter[:1]
    tokens = s.translate(bytes.maketrans(delimiter, first * len(delimiter))).split(first)
    return [t for t in tokens if t] if skip_empty else tokens


def _split_v2(s: bytes, sep: bytes, maxsplit: int) -> list[bytes]:
    """TF's ``SplitV2``."""
    if maxsplit == 0:
        return [s]
    if sep:
        return s.split(sep, maxsplit)
    tokens: list[bytes] = []
    rest = s.lstrip(_SPACE)
    while rest:
        end = next((i for i, b in enumerate(rest) if b in _SPACE), len(rest))
        tokens.append(rest[:end])
        rest = rest[end:].lstrip(_SPACE)
        if len(tokens) == maxsplit:
            tokens.append(rest)
            break
    return tokens


def _sparse_tokens(ctx: KernelContext, x: Any, sep: Any, sep_name: str,
                   split: Callable[[bytes, bytes], list[bytes]]) -> tuple[Any, ...]:
    x = np.asarray(x, dtype=object)
    if x.ndim != 1:
        raise _fail(ctx, f"input must be a vector, got shape: {_fmt(x.shape)}")
    sep = np.asarray(sep, dtype=object)
    if sep.ndim:
        raise _fail(ctx, f"{sep_name} must be a scalar, got shape: {_fmt(sep.shape)}")
    rows = [split(s, sep[()]) for s in x]
    count = sum(len(r) for r in rows)
    indices = np.empty((count, 2), dtype=np.int64)
    values = np.empty(count, dtype=object)
    c = 0
    for i, row in enumerate(rows):
        indices[c:c + len(row), 0] = i
        indices[c:c + len(row), 1] = np.arange(len(row))
        values[c:c + len(row)] = row
        c += len(row)
    shape = np.array([len(rows), max((len(r) for r in rows), default=0)], dtype=np.int64)
    return indices, values, shape


def string_split(ctx: KernelContext, x: Any, delimiter: Any) -> tuple[Any, ...]:
    skip_empty = ctx.attrs["skip_empty"]
    return _sparse_tokens(ctx, x, delimiter, "delimiter",
                          lambda s, d: _split_on_bytes(s, d, skip_empty))


def string_split_v2(ctx: KernelContext, x: Any, sep: Any) -> tuple[Any, ...]:
    maxsplit = ctx.attrs["maxsplit"]
    return _sparse_tokens(ctx, x, sep, "sep", lambda s, d: _split_v2(s, d, maxsplit))


# --- format ---------------------------------------------------------------------------------

_ESCAPES = {ord("\n"): b"\\n", ord("\r"): b"\\r", ord("\t"): b"\\t", ord('"'): b'\\"',
            ord("'"): b"\\'", ord("\\"): b"\\\\"}


def _c_escape(s: bytes) -> bytes:
    """``absl::Utf8SafeCEscape``: C escapes, octal for other control bytes, bytes from 0x80
    kept as they are."""
    out = bytearray()
    for byte in s:
        if byte in _ESCAPES:
            out += _ESCAPES[byte]
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out)


def _element_v2(value: Any) -> bytes:
    """TF's ``PrintOneElement(value, print_v2=true)``: strings quoted, the rest as ``Print``
    shows them (bools as 1/0)."""
    if isinstance(value, bytes):
        return b'"' + _c_escape(value) + b'"'
    return _element(value).encode()


def _dims_v2(flat: np.ndarray, shape: tuple[int, ...], dim: int, ends: int, start: int) -> bytes:
    """TF's ``PrintOneDimV2``: dimension `dim` of the block at flat index `start`, showing
    `ends` entries at each end of every dimension."""
    if dim == len(shape):
        return _element_v2(flat[start])
    # between entries: a space in the last dimension, else a newline per dimension left below
    # and an indent to this depth
    spacing = b" " if dim == len(shape) - 1 else b"\n" * (len(shape) - dim - 1) + b" " * (dim + 1)
    count = shape[dim]
    step = math.prod(shape[dim + 1:])
    head = range(min(ends, count))
    tail = range(max(ends, count - ends), count)
    parts = [_dims_v2(flat, shape, dim + 1, ends, start + step * i) for i in head]
    if count > 2 * ends:
        parts.append(b"...")
    parts += [_dims_v2(flat, shape, dim + 1, ends, start + step * i) for i in tail]
    return b"[" + spacing.join(parts) + b"]"


def summarize_v2(value: np.ndarray, summarize: int) -> bytes:
    """TF's ``Tensor::SummarizeValue(summarize, print_v2=true)``."""
    limit = value.size if summarize < 0 else min(summarize, value.size)
    flat = value.reshape(-1)
    if value.ndim:
        return _dims_v2(flat, value.shape, 0, limit, 0)
    return b" ".join(_element_v2(v) for v in flat[:limit]) + (b"..." if value.size > limit
                                                               else b"")


def string_format(ctx: KernelContext, *inputs: Any) -> np.ndarray:
    pieces = split_template(ctx.attrs["template"], ctx.attrs["placeholder"])
    out = [pieces[0]]
    for value, piece in zip(inputs, pieces[1:]):
        out += [summarize_v2(np.asarray(value), ctx.attrs["summarize"]), piece]
    return np.array(b"".join(out), dtype=object)


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    registry.add("StringJoin", device_type, string_join)
    registry.add("ReduceJoin", device_type, reduce_join)
    registry.add("UnsortedSegmentJoin", device_type, unsorted_segment_join)
    registry.add("StringLength", device_type, string_length)
    registry.add("StringUpper", device_type, string_upper)
    registry.add("StringLower", device_type, string_lower)
    registry.add("StringStrip", device_type, string_strip)
    registry.add("Substr", device_type, substr)
    registry.add("RegexReplace", device_type, regex_replace)
    registry.add("StaticRegexReplace", device_type, static_regex_replace)
    registry.add("RegexFullMatch", device_type, regex_full_match)
    registry.add("StaticRegexFullMatch", device_type, static_regex_full_match)
    registry.add("StringToNumber", device_type, string_to_number)
    registry.add("AsString", device_type, as_string)
    registry.add("StringToHashBucket", device_type, hash_bucket_legacy)
    registry.add("StringToHashBucketFast", device_type, hash_bucket_fast)
    registry.add("StringToHashBucketStrong", device_type, hash_bucket_strong)
    registry.add("EncodeBase64", device_type, encode_base64)
    registry.add("DecodeBase64", device_type, decode_base64)
    registry.add("StringSplit", device_type, string_split)
    registry.add("StringSplitV2", device_type, string_split_v2)
    registry.add("StringFormat", device_type, string_format)
