"""The tensorweave wire format, version 1: envelopes of typed values with raw tensor bytes.

Every gRPC message of the ``grpc`` transport carries one *envelope*, or one chunk of one. An
envelope is a byte string (all integers little-endian)::

    preamble  24 bytes  "TW" | version u8 | kind u8 | num_tensors u32 | header_len u32
                        | reserved u32 (0) | payload_len u64
    header    header_len bytes (a multiple of 8):
                tensor table: num_tensors x (dtype code u8, rank u8, rank x dim i64
                              [, byte count u64 for a string tensor])
                body: one value (below), then zero padding to a multiple of 8
    payload   payload_len bytes: each tensor's C-order bytes, in table order, each padded
              with zeros to a multiple of 8 bytes (so inline tensors are 8-byte aligned)

``kind`` is 0 for a message and 1 for a deferred reply (the body is then
``{"transfer": id, "size": n}``: fetch the real envelope with ``Transfer/Fetch``).

A body value is a tag byte followed by its data:

    0 None   1 False   2 True   3 int (i64)   4 float (f64)   5 str (u32 length, UTF-8)
    6 bytes (u32 length, raw)   7 list (u32 count, values)   8 tuple (u32 count, values)
    9 dict (u32 count, count x (key value, value); keys are str or int)
    10 DType (u8 code)   11 TensorShape (i32 rank, -1 unknown; rank x i64 dim, -1 unknown)
    12 tensor (u32 index into the tensor table)   13 numpy scalar (u8 code, itemsize bytes)
    14 function (a str name value, then a list value: the function's nodes; see
       `tensorweave.engine.distributed.messages`)

Dtype codes are TensorFlow's ``DataType`` numbers: float32 1, float64 2, int32 3, uint8 4,
int16 5, int8 6, string 7, int64 9, bool 10, float16 19, uint16 17, uint32 22, uint64 23,
complex64 8, complex128 18 (real then imaginary part); resource 20 and variant 21 only as a
``DType`` value (an attr), never as a tensor's. Nothing else is accepted.

A string tensor's payload is its elements' lengths (one u64 each, C order) followed by their
bytes; its table entry declares that byte count (at most `MAX_STRING_TENSOR_BYTES`). The receiver
checks that the count holds the lengths and that they add up to the rest before it builds the
object array of `bytes`. A string is never a numpy scalar value (tag 13).

An envelope of at most `CHUNK_BYTES` travels as one gRPC message; a larger one is cut into chunks
of at most `CHUNK_BYTES` and streamed. The receiver (`StreamDecoder`) checks the declared size
against its per-message cap and validates the whole tensor table (known dtype, rank <=
`MAX_RANK`, dims >= 0, padded byte counts summing to ``payload_len``) before it allocates any
tensor; it allocates each tensor only when the stream reaches it, charging a per-connection
`MemoryCap`, so declaring a large message costs nothing until its bytes arrive. Going over a
cap is a `ResourceExhaustedError` naming it. The header is bounded by those caps (and
`MAX_HEADER_BYTES`), and so are the objects it decodes to (estimated as they are built, a
string tensor's element objects as soon as its table entry is read;
`decode` charges them too when given the caps), nesting by `MAX_DEPTH`. Any other violation
raises `InvalidArgumentError` (a truncated stream `DataLossError`). No pickle: only the types
listed above can be encoded, anything else is an `InvalidArgumentError` at the sender.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import attrs
import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.distributed.messages import WireFunction
from tensorweave.engine.tensor_shape import TensorShape

VERSION = 1
MAGIC = b"TW"
KIND_MESSAGE = 0
KIND_DEFERRED = 1
CHUNK_BYTES = 4 << 20
MAX_HEADER_BYTES = (1 << 32) - 8  # what the u32 field holds; a server's caps bound it further
DEFAULT_MAX_MESSAGE_BYTES = (2 << 30) + (64 << 20)  # TF's 2 GiB TensorProto, and a header
DEFAULT_MAX_SESSION_BYTES = 4 << 30
# A function's nodes nest 4 levels below it (function, node list, node, attrs), so this lets
# control flow nest 120 deep: beyond what the executor runs (it recurses per level, too).
# Encoding and decoding take one Python frame per level, within Python's default limit.
MAX_DEPTH = 480
MAX_RANK = 32
MAX_STRING_TENSOR_BYTES = 1 << 31  # TF's own bound: a TensorProto is at most 2 GiB
_NO_LIMIT = 1 << 62

_PREAMBLE = struct.Struct("<2sBBIIIQ")
_U8, _U32, _I32, _I64, _U64, _F64 = (
    struct.Struct(f) for f in ("<B", "<I", "<i", "<q", "<Q", "<d"))
_TENSOR_ENTRY = struct.Struct("<BB")
_TAG_U32, _TAG_I64 = struct.Struct("<BI"), struct.Struct("<Bq")

(T_NONE, T_FALSE, T_TRUE, T_INT, T_FLOAT, T_STR, T_BYTES, T_LIST, T_TUPLE, T_DICT, T_DTYPE,
 T_SHAPE, T_TENSOR, T_SCALAR, T_FUNCTION) = range(15)

DTYPE_CODES: dict[dtypes.DType, int] = {
    dtypes.float32: 1, dtypes.float64: 2, dtypes.int32: 3, dtypes.uint8: 4, dtypes.int16: 5,
    dtypes.int8: 6, dtypes.string: 7, dtypes.int64: 9, dtypes.bool_: 10, dtypes.float16: 19,
    dtypes.complex64: 8, dtypes.complex128: 18,
    dtypes.uint16: 17, dtypes.uint32: 22, dtypes.uint64: 23, dtypes.resource: 20,
    dtypes.variant: 21,
}
STRING_CODE = DTYPE_CODES[dtypes.string]
_DTYPE_BY_CODE = {code: dt for dt, code in DTYPE_CODES.items()}
# the dtypes of tensors that travel: a resource handle and a variant (a TensorList a loop's
# gradient records) stay on their device; only the dtype travels, as an attr
_TENSOR_CODES = {dt: code for dt, code in DTYPE_CODES.items()
                 if dt not in (dtypes.resource, dtypes.variant)}
# the fixed-size dtypes, whose bytes are their values (strings are framed, see above)
_NP_BY_CODE = {code: np.dtype(dt.np_type).newbyteorder("<") for dt, code in _TENSOR_CODES.items()
               if not dt.is_string}
_OBJECT = np.dtype(object)
_CODE_BY_NPTYPE = {np.dtype(dt.np_type).type: code for dt, code in _TENSOR_CODES.items()}
_PAD = bytes(8)
# What decoding builds beyond the bytes it is given, per object, as upper bounds (CPython,
# 64-bit, measured with tracemalloc; tests/test_grpc_wire.py checks them against the worst
# header of each kind): a leaf value (a short str 49 + n, a TensorShape 48, an int 32, a numpy
# scalar 32); a list 56 (a tuple 40) and per item its pointer and the leaf it may hold; a small
# dict 184 and per entry its slot, key and value; a known dimension of a shape; a tensor table
# entry (its spec and the array objects a decoded tensor holds).
_LEAF_BYTES = 56
_LIST_BYTES = 56
_ITEM_BYTES = 8 + _LEAF_BYTES
_DICT_BYTES = 184
_ENTRY_BYTES = 40 + 2 * _LEAF_BYTES
_DIM_BYTES = 57
_TENSOR_BYTES = 512
# A string tensor's element: its pointer in the object array and, unless it is empty or one
# byte long (CPython's cached bytes objects), its `bytes` object beyond the content (33 bytes of
# header, measured with tracemalloc, and pymalloc's rounding to 16)
_POINTER_BYTES = 8
_BYTES_OBJECT = 33 + 15
_STRING_BLOCK = 1 << 16  # elements built at a time (bounds the decoder's own lists)
_SETTLE_BYTES = 1 << 20  # decoding charges what it built so far about every MiB


def _malformed(what: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"Malformed tensorweave wire message: {what}")


def _padded(n: int) -> int:
    return (n + 7) & ~7


# -- encoding ---------------------------------------------------------------------------------


def _host_array(value: np.ndarray) -> tuple[int, np.ndarray]:
    code = _CODE_BY_NPTYPE.get(value.dtype.type)
    if code is None:
        raise errors.InvalidArgumentError(
            None, None, f"Cannot send a tensor of dtype {value.dtype}: the wire carries only "
            f"{', '.join(d.name for d in _TENSOR_CODES)}")
    if value.ndim > MAX_RANK:
        raise errors.InvalidArgumentError(None, None, f"Cannot send a tensor of rank "
                                          f"{value.ndim} (at most {MAX_RANK})")
    if not value.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
        value = np.ascontiguousarray(value)
    if value.dtype.byteorder == ">":
        value = value.astype(value.dtype.newbyteorder("<"))
    return code, value


def _string_blob(array: np.ndarray) -> np.ndarray:
    """A string tensor's payload: u64 lengths, then the elements' bytes (module docstring)."""
    items = array.reshape(-1).tolist()
    if not all(isinstance(e, bytes) for e in items):
        bad = next(e for e in items if not isinstance(e, bytes))
        raise errors.InvalidArgumentError(
            None, None, f"Cannot send a string tensor holding a {type(bad).__name__}: its "
            "elements must be bytes")
    lengths = np.fromiter((len(e) for e in items), "<u8", len(items))
    size = lengths.nbytes + int(lengths.sum())
    if size > MAX_STRING_TENSOR_BYTES:
        raise errors.InvalidArgumentError(
            None, None, f"Cannot send a string tensor of {size} bytes (at most "
            f"{MAX_STRING_TENSOR_BYTES})")
    return np.frombuffer(b"".join((lengths.tobytes(), *items)), np.uint8)


def _strings_from(raw: Any, shape: tuple[int, ...], out: np.ndarray | None = None) -> np.ndarray:
    """The object array of `bytes` that a string payload `raw` encodes, checked against it."""
    count = int(np.prod(shape, dtype=np.int64))
    lengths = np.frombuffer(raw, "<u8", count)
    rest = len(raw) - lengths.nbytes
    # each length is checked first, so their sum cannot wrap around
    if count and int(lengths.max()) > rest or int(lengths.sum()) != rest:
        raise _malformed(f"string tensor lengths do not add up to its {rest} bytes of data")
    data = bytes(raw[lengths.nbytes:])
    out = np.empty(shape, _OBJECT) if out is None else out
    flat = out.reshape(-1)
    start = 0
    for first in range(0, count, _STRING_BLOCK):  # (a block at a time: lists of ints are big)
        base = start
        for i, end in enumerate(np.cumsum(lengths[first:first + _STRING_BLOCK]).tolist(), first):
            flat[i] = data[start:base + end]
            start = base + end
    return out


class _Encoder:
    __slots__ = ("out", "tensors")

    def __init__(self) -> None:
        self.out = bytearray()
        self.tensors: list[tuple[int, np.ndarray]] = []

    def value(self, v: Any, depth: int = 0) -> None:
        out = self.out
        if depth > MAX_DEPTH:
            raise errors.InvalidArgumentError(None, None, "Value nested too deeply to send")
        # the common exact types first (the same bytes as their branch below)
        kind = type(v)
        if kind is str:
            data = v.encode()
            out += _TAG_U32.pack(T_STR, len(data))
            out += data
            return
        if kind is int and -(1 << 63) <= v < (1 << 63):
            out += _TAG_I64.pack(T_INT, v)
            return
        if kind is dict or kind is list or isinstance(v, (list, tuple, dict)):
            # containers inline (no helper frame): one Python frame per level of nesting
            if isinstance(v, dict):
                out += _TAG_U32.pack(T_DICT, len(v))
                for key, item in v.items():
                    if not isinstance(key, (str, int)) or isinstance(key, bool):
                        raise errors.InvalidArgumentError(
                            None, None, f"Cannot send a dict key of type {type(key).__name__}")
                    self.value(key, depth + 1)
                    self.value(item, depth + 1)
                return
            out += _TAG_U32.pack(T_LIST if isinstance(v, list) else T_TUPLE, len(v))
            for item in v:
                self.value(item, depth + 1)
            return
        if v is None:
            out.append(T_NONE)
        elif isinstance(v, np.ndarray):
            out.append(T_TENSOR)
            out += _U32.pack(len(self.tensors))
            self.tensors.append(_host_array(v))
        elif isinstance(v, np.generic):  # before float: np.float64 is a float
            code, array = _host_array(np.asarray(v))
            out.append(T_SCALAR)
            out.append(code)
            out += array.tobytes()
        elif v is True or v is False:
            out.append(T_TRUE if v else T_FALSE)
        elif isinstance(v, int) and not isinstance(v, bool):
            if not -(1 << 63) <= v < (1 << 63):
                raise errors.InvalidArgumentError(None, None, f"Integer {v} does not fit int64")
            out.append(T_INT)
            out += _I64.pack(v)
        elif isinstance(v, float):
            out.append(T_FLOAT)
            out += _F64.pack(v)
        elif isinstance(v, str):
            data = v.encode()
            out.append(T_STR)
            out += _U32.pack(len(data))
            out += data
        elif isinstance(v, (bytes, bytearray)):
            out.append(T_BYTES)
            out += _U32.pack(len(v))
            out += v
        elif isinstance(v, dtypes.DType):
            code = DTYPE_CODES.get(v)
            if code is None:
                raise errors.InvalidArgumentError(None, None, f"Cannot send dtype {v.name}")
            out.append(T_DTYPE)
            out.append(code)
        elif isinstance(v, TensorShape):
            out.append(T_SHAPE)
            dims = v.dims
            out += _I32.pack(-1 if dims is None else len(dims))
            for d in dims or ():
                out += _I64.pack(-1 if d is None else d)
        elif isinstance(v, WireFunction):
            out.append(T_FUNCTION)
            self.value(v.name, depth + 1)
            self.value(v.nodes, depth + 1)
        else:
            raise errors.InvalidArgumentError(
                None, None, f"Cannot send a value of type {type(v).__name__}: the tensorweave "
                "wire schema has no encoding for it")


@attrs.frozen
class Envelope:
    """One encoded message: its head (preamble and header) and its tensors' raw bytes."""

    head: bytes
    blobs: tuple[np.ndarray, ...]  # each a 1-d uint8 view of one tensor
    size: int

    def frame(self) -> bytes:
        """The whole envelope as one byte string (for envelopes of at most CHUNK_BYTES)."""
        parts: list[Any] = [self.head]
        for blob in self.blobs:
            parts.append(blob)
            parts.append(_PAD[:_padded(blob.size) - blob.size])
        return b"".join(parts)

    def chunks(self, size: int = CHUNK_BYTES) -> Iterator[bytes]:
        """The envelope as a stream of chunks of at most `size` bytes."""
        head = self.head
        for i in range(0, len(head), size):
            yield head[i:i + size]
        for blob in self.blobs:
            pad = _PAD[:_padded(blob.size) - blob.size]
            n = blob.size
            if n == 0:
                if pad:
                    yield pad
                continue
            for i in range(0, n, size):
                piece = blob[i:i + size]
                yield b"".join((piece, pad)) if i + size >= n and pad else piece.tobytes()


def encode(body: Any, kind: int = KIND_MESSAGE) -> Envelope:
    """Encode `body` (a value of the types listed in the module docstring) as an envelope."""
    enc = _Encoder()
    enc.value(body)
    table = bytearray()
    blobs = []
    payload = 0
    for code, array in enc.tensors:
        table += _TENSOR_ENTRY.pack(code, array.ndim)
        for d in array.shape:
            table += _I64.pack(d)
        if code == STRING_CODE:
            blob = _string_blob(array)
            table += _U64.pack(blob.size)
        else:
            blob = array.reshape(-1).view(np.uint8)
        blobs.append(blob)
        payload += _padded(blob.size)
    header_len = _padded(len(table) + len(enc.out))
    if header_len > MAX_HEADER_BYTES:
        raise errors.ResourceExhaustedError(
            None, None, f"Message header of {header_len} bytes exceeds {MAX_HEADER_BYTES}")
    head = b"".join((
        _PREAMBLE.pack(MAGIC, VERSION, kind, len(blobs), header_len, 0, payload), table, enc.out,
        _PAD[:header_len - len(table) - len(enc.out)],
    ))
    return Envelope(head, tuple(blobs), len(head) + payload)


# -- decoding ---------------------------------------------------------------------------------


@attrs.frozen
class Preamble:
    kind: int
    num_tensors: int
    header_len: int
    payload_len: int


def read_preamble(data: Any) -> Preamble:
    if len(data) < _PREAMBLE.size:
        raise _malformed(f"{len(data)} bytes is shorter than the {_PREAMBLE.size}-byte preamble")
    magic, version, kind, num_tensors, header_len, reserved, payload_len = \
        _PREAMBLE.unpack_from(data)
    if magic != MAGIC:
        raise _malformed("bad magic (not a tensorweave message)")
    if version != VERSION:
        raise errors.FailedPreconditionError(
            None, None, f"Unsupported tensorweave wire version {version} (this build speaks "
            f"version {VERSION})")
    if reserved:
        raise _malformed(f"reserved preamble field is {reserved}, not 0")
    if kind not in (KIND_MESSAGE, KIND_DEFERRED):
        raise _malformed(f"unknown message kind {kind}")
    if header_len > MAX_HEADER_BYTES or header_len % 8:
        raise _malformed(f"header length {header_len}")
    # every table entry takes at least 2 bytes
    if num_tensors * _TENSOR_ENTRY.size > header_len:
        raise _malformed(f"{num_tensors} tensors cannot fit a {header_len}-byte header")
    return Preamble(kind, num_tensors, header_len, payload_len)


@attrs.frozen
class TensorSpecs:
    """A validated tensor table: numpy dtype and shape of each tensor, and where the body
    starts."""

    specs: tuple[tuple[np.dtype, tuple[int, ...], int], ...]  # dtype, shape, nbytes
    body_offset: int


def read_table(header: memoryview, pre: Preamble) -> TensorSpecs:
    pos = 0
    specs = []
    total = 0
    end = len(header)
    for _ in range(pre.num_tensors):
        if pos + 2 > end:
            raise _malformed("tensor table is truncated")
        code, rank = _TENSOR_ENTRY.unpack_from(header, pos)
        pos += 2
        np_dtype = _OBJECT if code == STRING_CODE else _NP_BY_CODE.get(code)
        if np_dtype is None:
            raise _malformed(f"tensor dtype code {code} is not an allowed dtype")
        if rank > MAX_RANK:
            raise _malformed(f"tensor rank {rank} exceeds {MAX_RANK}")
        if pos + 8 * rank > end:
            raise _malformed("tensor table is truncated")
        shape = struct.unpack_from(f"<{rank}q", header, pos)
        pos += 8 * rank
        if any(d < 0 for d in shape):
            raise _malformed(f"negative dimension in tensor shape {list(shape)}")
        if np_dtype is _OBJECT:
            if pos + 8 > end:
                raise _malformed("tensor table is truncated")
            nbytes = _U64.unpack_from(header, pos)[0]
            pos += 8
            count = 1
            for d in shape:
                count *= d
            if nbytes > MAX_STRING_TENSOR_BYTES or 8 * count > nbytes:
                raise _malformed(f"string tensor of {count} elements declares {nbytes} bytes")
        else:
            nbytes = np_dtype.itemsize
            for d in shape:
                nbytes *= d
        total += _padded(nbytes)
        if total > pre.payload_len:
            raise _malformed(f"tensor shapes need more than the declared {pre.payload_len} "
                             "payload bytes")
        specs.append((np_dtype, shape, nbytes))
    if total != pre.payload_len:
        raise _malformed(f"declared payload of {pre.payload_len} bytes but the tensors take "
                         f"{total} (shape x itemsize, padded)")
    return TensorSpecs(tuple(specs), pos)


def _string_objects(table: TensorSpecs) -> int:
    """What the string tensors of `table` build beyond their bytes, at most: a pointer per
    element, and an object per element that its content leaves room for (two bytes or more)."""
    total = 0
    for np_dtype, shape, nbytes in table.specs:
        if np_dtype is _OBJECT:
            count = 1
            for d in shape:
                count *= d
            content = nbytes - 8 * count
            total += count * _POINTER_BYTES + min(count, content // 2) * _BYTES_OBJECT
    return total


class _Decoder:
    """Decodes one body; `cost` estimates the bytes of the objects it builds (the constants
    above), which it reports to `owe` (the running total) about every `_SETTLE_BYTES`, so a
    header that decodes to many small objects is charged while it decodes."""

    __slots__ = ("_due", "_owe", "buf", "cost", "end", "pos", "tensors")

    def __init__(self, buf: memoryview, pos: int, end: int, tensors: list[np.ndarray],
                 cost: int = 0, owe: Callable[[int], None] | None = None) -> None:
        self.buf = buf
        self.pos = pos
        self.end = end
        self.tensors = tensors
        self.cost = cost
        self._owe = owe
        self._due = _SETTLE_BYTES if owe is not None else _NO_LIMIT

    def settle(self) -> None:
        """Report the cost so far to `owe` (which raises when it is over a cap)."""
        if self._owe is not None:
            self._owe(self.cost)
            self._due = self.cost + _SETTLE_BYTES

    def _take(self, n: int) -> int:
        start = self.pos
        if start + n > self.end:
            raise _malformed("message body is truncated")
        self.pos = start + n
        return start

    def _count(self, base: int, per_item: int) -> int:
        """A container's item count; charges the container, its items' pointers and leaves."""
        n = _U32.unpack_from(self.buf, self._take(4))[0]
        if n > self.end - self.pos:  # each item takes at least one byte
            raise _malformed(f"count {n} exceeds the remaining body")
        self.cost += base + n * per_item
        if self.cost >= self._due:
            self.settle()
        return n

    def value(self, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise _malformed("values nested too deeply")
        buf, pos, end = self.buf, self.pos, self.end
        if pos >= end:
            raise _malformed("message body is truncated")
        tag = buf[pos]
        if tag == T_STR and pos + 5 <= end:  # the common tags first, bounds checked inline
            n = _U32.unpack_from(buf, pos + 1)[0]
            start = pos + 5
            if start + n <= end:
                self.pos = start + n
                try:
                    return str(buf[start:start + n], "utf-8")
                except UnicodeDecodeError:
                    raise _malformed("string is not valid UTF-8") from None
        if tag == T_INT and pos + 9 <= end:
            self.pos = pos + 9
            return _I64.unpack_from(buf, pos + 1)[0]
        self.pos = pos + 1
        if tag == T_STR:  # truncated
            n = _U32.unpack_from(buf, self._take(4))[0]
            self._take(n)
        if tag == T_INT:  # truncated
            self._take(8)
        if tag == T_DICT:
            out = {}
            for _ in range(self._count(_DICT_BYTES, _ENTRY_BYTES)):
                key = self.value(depth + 1)
                if not isinstance(key, (str, int)) or isinstance(key, bool):
                    raise _malformed(f"dict key of type {type(key).__name__}")
                out[key] = self.value(depth + 1)
            return out
        if tag == T_NONE:
            return None
        if tag == T_FALSE:
            return False
        if tag == T_TRUE:
            return True
        if tag == T_FLOAT:
            return _F64.unpack_from(buf, self._take(8))[0]
        if tag == T_BYTES:
            n = _U32.unpack_from(buf, self._take(4))[0]
            start = self._take(n)
            return bytes(buf[start:start + n])
        if tag in (T_LIST, T_TUPLE):
            items = []
            # (a loop, not a comprehension: no extra frame)
            for _ in range(self._count(_LIST_BYTES, _ITEM_BYTES)):
                items.append(self.value(depth + 1))
            return items if tag == T_LIST else tuple(items)
        if tag == T_DTYPE:
            code = buf[self._take(1)]
            dtype = _DTYPE_BY_CODE.get(code)
            if dtype is None:
                raise _malformed(f"dtype code {code} is not an allowed dtype")
            return dtype
        if tag == T_SHAPE:
            rank = _I32.unpack_from(buf, self._take(4))[0]
            if rank == -1:
                return TensorShape(None)
            if not 0 <= rank <= MAX_RANK:
                raise _malformed(f"shape rank {rank}")
            dims = struct.unpack_from(f"<{rank}q", buf, self._take(8 * rank))
            if any(d < -1 for d in dims):
                raise _malformed(f"shape dimension in {list(dims)}")
            self.cost += _DIM_BYTES * rank
            if self.cost >= self._due:
                self.settle()
            return TensorShape([None if d == -1 else d for d in dims])
        if tag == T_TENSOR:
            index = _U32.unpack_from(buf, self._take(4))[0]
            if index >= len(self.tensors):
                raise _malformed(f"tensor index {index} is not in the tensor table")
            return self.tensors[index]
        if tag == T_SCALAR:
            code = buf[self._take(1)]
            np_dtype = _NP_BY_CODE.get(code)
            if np_dtype is None:
                raise _malformed(f"scalar dtype code {code} is not an allowed dtype")
            start = self._take(np_dtype.itemsize)
            value = np.frombuffer(buf[start:start + np_dtype.itemsize], np_dtype)[0]
            _check_bool(value)
            return value
        if tag == T_FUNCTION:
            name, nodes = self.value(depth + 1), self.value(depth + 1)
            if not isinstance(name, str) or not isinstance(nodes, list):
                raise _malformed("function is not a name and a list of nodes")
            return WireFunction(name, nodes)
        raise _malformed(f"unknown value tag {tag}")


def _check_bool(array: Any) -> None:
    if array.dtype == np.bool_ and np.asarray(array).view(np.uint8).max(initial=0) > 1:
        raise _malformed("bool tensor holds bytes other than 0 and 1")


def _body(header: memoryview, table: TensorSpecs, tensors: list[np.ndarray],
          owe: Callable[[int], None] | None = None) -> Any:
    """The body value; with `owe`, the objects it builds are reported to it as they are built,
    starting with a copy of the header's bytes (its strings' contents)."""
    decoder = _Decoder(header, table.body_offset, len(header), tensors, len(header), owe)
    body = decoder.value()
    decoder.settle()
    if any(header[decoder.pos:]):
        raise _malformed("trailing bytes after the body")
    return body


@attrs.frozen
class Message:
    """A decoded envelope."""

    kind: int
    body: Any


def decode(frame: bytes, max_message_bytes: int | None = None,
           memory: MemoryCap | None = None, key: Any = None) -> Message:
    """Decode a whole envelope received as one message; tensors are read-only views of it.
    What decoding builds (the body's objects, string tensors) is charged to `memory` under
    `key` while it decodes and, with the frame, bounded by `max_message_bytes`
    (`ResourceExhaustedError` naming the cap); without either, nothing is charged."""
    account = _Account(max_message_bytes, memory, key)
    try:
        pre = read_preamble(frame)
        start = _PREAMBLE.size
        if len(frame) != start + pre.header_len + pre.payload_len:
            raise _malformed(f"message of {len(frame)} bytes, but its preamble declares "
                             f"{start + pre.header_len + pre.payload_len}")
        account.declare(len(frame))
        owed = pre.num_tensors * _TENSOR_BYTES
        account.objects(owed)
        view = memoryview(frame)
        header = view[start:start + pre.header_len]
        table = read_table(header, pre)
        owed += _string_objects(table)
        account.objects(owed)
        tensors = []
        offset = start + pre.header_len
        for np_dtype, shape, nbytes in table.specs:
            raw = np.frombuffer(frame, np.uint8, nbytes, offset)
            if np_dtype is _OBJECT:  # (its objects charged above, its bytes here)
                account.charge(nbytes)
                array = _strings_from(raw, shape)
            else:
                array = raw.view(np_dtype).reshape(shape)
                _check_bool(array)
            tensors.append(array)
            offset += _padded(nbytes)
        return Message(pre.kind, _body(header, table, tensors,
                                       account.after(owed) if account.active else None))
    finally:
        account.release()


class MemoryCap:
    """The bytes that incoming messages hold while they arrive, per client connection (a
    server's *session* of the transport: one gRPC connection or call lane), at most `limit`
    for each. `charge` raises `ResourceExhaustedError` naming the limit when a connection would
    go over it."""

    def __init__(self, limit: int = DEFAULT_MAX_SESSION_BYTES,
                 name: str = "max_session_bytes") -> None:
        self.limit = limit
        self.name = name
        self._used: dict[Any, int] = {}
        self._lock = threading.Lock()

    def charge(self, key: Any, n: int) -> None:
        with self._lock:
            used = self._used.get(key, 0) + n
            if used > self.limit:
                raise errors.ResourceExhaustedError(
                    None, None, f"Incoming messages of one connection would hold {used} bytes, "
                    f"over the server's per-session memory cap of {self.limit} bytes "
                    f"({self.name})")
            self._used[key] = used

    def release(self, key: Any, n: int) -> None:
        with self._lock:
            used = self._used.get(key, 0) - n
            if used > 0:
                self._used[key] = used
            else:
                self._used.pop(key, None)

    def used(self, key: Any) -> int:
        with self._lock:
            return self._used.get(key, 0)


class _Account:
    """What one incoming message holds while it is decoded: every allocation is charged to
    `memory` under `key`, and the declared envelope with the objects decoding builds stays
    within `max_message_bytes` (either may be ``None``: no such bound)."""

    def __init__(self, max_message_bytes: int | None, memory: MemoryCap | None,
                 key: Any) -> None:
        self._max = max_message_bytes
        self._memory = memory
        self._key = key
        self._charged = 0
        self._declared = 0
        self._objects = 0

    @property
    def active(self) -> bool:
        return self._max is not None or self._memory is not None

    def declare(self, size: int) -> None:
        """The envelope's declared size: over the per-message cap it is refused before
        anything is allocated for it."""
        if self._max is not None and size > self._max:
            raise errors.ResourceExhaustedError(
                None, None, f"Incoming message of {size} bytes exceeds the server's per-message "
                f"memory cap of {self._max} bytes (max_message_bytes); it cannot allocate it")
        self._declared = size

    def charge(self, n: int) -> None:
        if self._memory is not None and n:
            self._memory.charge(self._key, n)
            self._charged += n

    def objects(self, total: int) -> None:
        """`total` bytes (an estimate) of objects built for the message so far."""
        if self._max is not None and self._declared + total > self._max:
            raise errors.ResourceExhaustedError(
                None, None, f"Incoming message of {self._declared} bytes decodes to objects of "
                f"about {total} bytes, over the server's per-message memory cap of {self._max} "
                "bytes (max_message_bytes)")
        self.charge(total - self._objects)
        self._objects = total

    def after(self, owed: int) -> Callable[[int], None]:
        """`objects` for a decoder whose costs come on top of `owed`."""
        return lambda total: self.objects(owed + total)

    def release(self) -> None:
        """Give back what the message was charged (idempotent)."""
        if self._memory is not None and self._charged:
            self._memory.release(self._key, self._charged)
        self._charged = 0


class StreamDecoder:
    """Decodes an envelope arriving in pieces, straight into arrays allocated as it arrives.

    Either `feed` each chunk in order, or `fill` from a reader such as ``socket.recv_into``;
    then `finish` (or `release`, to give up). The bytes go where `next_buffer` says: the
    preamble, the header, then each tensor's own memory, allocated only when the stream reaches
    it (a string tensor's object array only once all its bytes are there), so a message that
    declares much and sends little costs little. The declared size is checked against
    `max_message_bytes` and the tensor table is validated before any tensor is allocated; every
    allocation is charged to `memory` under `key` until `finish` or `release`, and so are the
    objects the header decodes to (estimated as they are built), which count towards
    `max_message_bytes` too. Going over either limit raises `ResourceExhaustedError` naming it;
    extra or missing bytes are errors.
    """

    def __init__(self, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 memory: MemoryCap | None = None, key: Any = None) -> None:
        self._account = _Account(max_message_bytes, memory, key)
        self._stages = self._layout()
        self._current: memoryview | None = None
        self._offset = 0
        self._done = False
        self._pre: Preamble | None = None
        self._header: memoryview | None = None
        self._table: TensorSpecs | None = None
        self._tensors: list[np.ndarray] = []
        self._strings: list[tuple[int, np.ndarray]] = []  # (tensor index, its raw bytes)
        self._scratch = memoryview(bytearray(8))
        self._owed = 0  # the objects the tensor table stands for

    def release(self) -> None:
        """Give back what this message was charged (idempotent)."""
        self._account.release()

    def _layout(self) -> Iterator[memoryview]:
        """The buffers the stream fills, in order, each allocated when it is reached."""
        preamble = memoryview(bytearray(_PREAMBLE.size))
        yield preamble
        pre = self._pre = read_preamble(preamble)
        account = self._account
        account.declare(_PREAMBLE.size + pre.header_len + pre.payload_len)
        account.charge(pre.header_len)
        header = self._header = memoryview(_allocate(pre.header_len))
        yield header
        account.objects(pre.num_tensors * _TENSOR_BYTES)
        table = self._table = read_table(header, pre)
        self._owed = pre.num_tensors * _TENSOR_BYTES + _string_objects(table)
        account.objects(self._owed)  # (before any tensor is allocated)
        for np_dtype, shape, nbytes in table.specs:
            if np_dtype is _OBJECT:  # the raw bytes land aside; `finish` builds the array
                account.charge(nbytes)  # (and, as it builds it, a copy of the content)
                raw = _allocate(nbytes)
                self._strings.append((len(self._tensors), raw))
                self._tensors.append(raw)
                yield memoryview(raw)
            else:
                account.charge(nbytes)
                array = _allocate(shape, np_dtype)
                self._tensors.append(array)
                yield memoryview(array.reshape(-1).view(np.uint8))
            if _padded(nbytes) > nbytes:
                yield self._scratch[:_padded(nbytes) - nbytes]

    def next_buffer(self) -> memoryview | None:
        """Where the next bytes of the stream go (``None`` once the envelope is complete)."""
        while not self._done:
            current = self._current
            if current is not None and self._offset < len(current):
                return current[self._offset:]
            self._offset = 0
            try:
                self._current = next(self._stages)
            except StopIteration:
                self._done = True
                self._current = None
            except BaseException:
                self.release()
                raise
        return None

    def advance(self, n: int) -> None:
        """Record that `n` bytes were written into `next_buffer()`."""
        self._offset += n
        if self._offset == len(self._current):
            self.next_buffer()  # validate a completed preamble or header at once

    def feed(self, chunk: bytes) -> None:
        view = memoryview(chunk)
        while len(view):
            target = self.next_buffer()
            if target is None:
                self.release()
                raise _malformed("stream carries more bytes than its preamble declares")
            n = min(len(target), len(view))
            target[:n] = view[:n]
            self.advance(n)
            view = view[n:]

    def fill(self, readinto: Callable[[memoryview], int], limit: int = CHUNK_BYTES) -> None:
        """Read the rest of the envelope with `readinto` (at most `limit` bytes a call)."""
        while (target := self.next_buffer()) is not None:
            n = readinto(target[:limit])
            if n <= 0:
                break
            self.advance(n)

    def finish(self) -> Message:
        try:
            if self.next_buffer() is not None or self._table is None:
                raise errors.DataLossError(None, None, "Tensor stream ended before the whole "
                                           "message arrived (truncated)")
            tensors = self._tensors
            for array in tensors:
                _check_bool(array)  # (a string tensor's raw bytes are uint8 until built)
            for index, raw in self._strings:
                shape = self._table.specs[index][1]
                try:
                    tensors[index] = _strings_from(raw, shape)
                except MemoryError:
                    raise _exhausted(raw.nbytes) from None
            return Message(self._pre.kind, _body(self._header, self._table, tensors,
                                                 self._account.after(self._owed)))
        finally:
            self.release()


def _exhausted(nbytes: int) -> errors.ResourceExhaustedError:
    return errors.ResourceExhaustedError(
        None, None, f"Cannot allocate {nbytes} bytes for an incoming tensor")


def _allocate(shape: int | tuple[int, ...], np_dtype: Any = np.uint8) -> np.ndarray:
    """An uninitialised array: its pages are touched only as the bytes arrive."""
    try:
        return np.empty(shape, np_dtype)
    except MemoryError:
        size = shape if isinstance(shape, int) else int(np.prod(shape, dtype=np.int64))
        raise _exhausted(size * np.dtype(np_dtype).itemsize) from None


def decode_stream(chunks: Iterable[bytes], max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                  memory: MemoryCap | None = None, key: Any = None) -> Message:
    """Decode a streamed envelope (see `StreamDecoder` for the limits)."""
    decoder = StreamDecoder(max_message_bytes, memory, key)
    try:
        for chunk in chunks:
            decoder.feed(chunk)
        return decoder.finish()
    finally:
        decoder.release()
