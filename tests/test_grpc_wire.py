"""The wire format: every value type and dtype round-trips exactly, inline and chunked, and
every malformed envelope is refused before anything is allocated."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.grpc import wire

ALL_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
              np.uint8, np.bool_]


def extreme_values(np_type: type) -> np.ndarray:
    if np_type is np.bool_:
        return np.array([[True, False], [False, True]])
    if np.issubdtype(np_type, np.floating):
        info = np.finfo(np_type)
        return np.array([info.min, info.max, info.tiny, -0.0, np.inf, -np.inf, np.nan, 1 / 3],
                        dtype=np_type).reshape(2, 4)
    info = np.iinfo(np_type)
    return np.array([info.min, info.max, 0, 1, -1 if info.min else 2, 7], dtype=np_type)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return (a.dtype == b.dtype and a.shape == b.shape
            and a.tobytes() == b.tobytes())


def roundtrips(body: object) -> list[object]:
    envelope = wire.encode(body)
    return [wire.decode(envelope.frame()).body,
            wire.decode_stream(envelope.chunks(7)).body,
            wire.decode_stream(envelope.chunks()).body]


@pytest.mark.parametrize("np_type", ALL_DTYPES, ids=lambda t: np.dtype(t).name)
def test_every_dtype_round_trips_bit_exactly(np_type: type) -> None:
    value = extreme_values(np_type)
    for decoded in roundtrips({"t": value, "scalar": value.reshape(-1)[1]}):
        assert same_bits(decoded["t"], value)
        assert decoded["scalar"].dtype == value.dtype
        assert decoded["scalar"].tobytes() == value.reshape(-1)[1].tobytes()


def test_values_of_every_tag_round_trip() -> None:
    body = {
        "none": None, "bools": [True, False], "int": -(1 << 63), "float": 2.5, "str": "héllo",
        "bytes": b"\x00\xff", "tuple": (1, (2, [3])), 7: "int key", "dtype": tf.int64,
        "attr dtypes": [tf.resource, tf.variant],
        "shape": TensorShape([None, 3]), "unknown": TensorShape(None),
        "scalar0d": np.array(4.0), "empty": np.zeros((0, 3), np.int16),
        "strided": np.arange(12.0).reshape(3, 4)[:, ::2],
        "bigendian": np.arange(3, dtype=">i4"),
    }
    for decoded in roundtrips(body):
        assert decoded["none"] is None and decoded["bools"] == [True, False]
        assert decoded["int"] == -(1 << 63) and decoded["float"] == 2.5
        assert decoded["str"] == "héllo" and decoded["bytes"] == b"\x00\xff"
        assert decoded["tuple"] == (1, (2, [3])) and decoded[7] == "int key"
        assert decoded["dtype"] == tf.int64
        assert decoded["attr dtypes"] == [tf.resource, tf.variant]  # (a While's T, a list's)
        assert decoded["shape"] == TensorShape([None, 3])
        assert decoded["unknown"].dims is None
        assert decoded["scalar0d"].shape == () and decoded["scalar0d"] == 4.0
        assert decoded["empty"].shape == (0, 3) and decoded["empty"].dtype == np.int16
        np.testing.assert_array_equal(decoded["strided"], [[0, 2], [4, 6], [8, 10]])
        assert decoded["bigendian"].dtype == np.int32
        np.testing.assert_array_equal(decoded["bigendian"], [0, 1, 2])


def test_inline_tensors_are_aligned_views_of_the_message() -> None:
    frame = wire.encode({"a": np.arange(3, dtype=np.int8),
                         "b": np.arange(5, dtype=np.float64)}).frame()
    decoded = wire.decode(frame).body
    assert decoded["b"].ctypes.data % 8 == 0
    assert not decoded["b"].flags.writeable  # a view of the received bytes, not a copy


def test_large_tensors_stream_in_bounded_chunks_into_preallocated_arrays() -> None:
    value = np.random.default_rng(0).standard_normal((3 << 20) + 3).astype(np.float32)
    envelope = wire.encode({"v": value, "odd": np.arange(5, dtype=np.uint8)})
    chunks = list(envelope.chunks())
    assert envelope.size > wire.CHUNK_BYTES
    assert all(len(c) <= wire.CHUNK_BYTES for c in chunks) and len(chunks) >= 4
    decoded = wire.decode_stream(chunks).body
    assert same_bits(decoded["v"], value)
    assert decoded["v"].flags.writeable and decoded["v"].flags.owndata
    np.testing.assert_array_equal(decoded["odd"], np.arange(5))


@pytest.mark.parametrize("value, message", [
    (object(), "type object"), ({1.5: 2}, "dict key"), (1 << 64, "does not fit int64"),
    (np.array(["a"]), "dtype <U1"), (np.zeros(2, np.clongdouble), "dtype complex256"),
])
def test_values_outside_the_schema_are_refused_at_the_sender(value: object, message: str,
                                                            ) -> None:
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        wire.encode({"x": value})


def header(num_tensors: int, header_len: int, payload: int, magic: bytes = b"TW",
           version: int = wire.VERSION, kind: int = 0) -> bytes:
    return struct.pack("<2sBBIIIQ", magic, version, kind, num_tensors, header_len, 0, payload)


def body(value: object) -> bytes:
    """The header of a tensor-free envelope holding `value`."""
    return wire.encode(value).frame()[24:]


@pytest.mark.parametrize("frame, error, message", [
    (b"", tf.errors.InvalidArgumentError, "shorter than"),
    (b"garbage that is long enough....", tf.errors.InvalidArgumentError, "bad magic"),
    (header(0, 8, 0, version=9) + bytes(8), tf.errors.FailedPreconditionError, "version 9"),
    (header(0, 8, 0, kind=5) + bytes(8), tf.errors.InvalidArgumentError, "kind 5"),
    (header(0, 12, 0) + bytes(12), tf.errors.InvalidArgumentError, "header length"),
    (header(0, 8, 0) + bytes(4), tf.errors.InvalidArgumentError, "declares"),
    # a float32 [4] tensor declared, but the payload is 8 bytes: shape x itemsize must match
    (header(1, 16, 8) + struct.pack("<BBq", 1, 1, 4) + bytes([wire.T_NONE]) + bytes(5)
     + bytes(8), tf.errors.InvalidArgumentError, "payload"),
    (header(1, 16, 8) + struct.pack("<BBq", 14, 1, 2) + bytes([wire.T_NONE]) + bytes(5)
     + bytes(8), tf.errors.InvalidArgumentError, "dtype code 14"),
    (header(1, 16, 8) + struct.pack("<BBq", 1, 1, -2) + bytes([wire.T_NONE]) + bytes(5)
     + bytes(8), tf.errors.InvalidArgumentError, "negative dimension"),
    (header(0, 8, 0) + bytes([99]) + bytes(7), tf.errors.InvalidArgumentError, "tag 99"),
    (header(0, 8, 0) + bytes([wire.T_STR]) + struct.pack("<I", 1000) + bytes(3),
     tf.errors.InvalidArgumentError, "truncated"),
    (header(0, 8, 0) + bytes([wire.T_LIST]) + struct.pack("<I", 1 << 30) + bytes(3),
     tf.errors.InvalidArgumentError, "count"),
    (header(0, 8, 0) + bytes([wire.T_TENSOR]) + struct.pack("<I", 0) + bytes(3),
     tf.errors.InvalidArgumentError, "tensor index"),
    (header(0, 8, 0) + bytes([wire.T_STR]) + struct.pack("<I", 2) + b"\xff\xfe" + bytes(1),
     tf.errors.InvalidArgumentError, "UTF-8"),
    (header(0, 8, 0) + bytes([wire.T_NONE, 1]) + bytes(6),
     tf.errors.InvalidArgumentError, "trailing"),
    (header(0, 8, 0) + bytes([wire.T_INT]) + bytes(7), tf.errors.InvalidArgumentError,
     "truncated"),
    (header(0, 8, 0)[:-12] + struct.pack("<IQ", 1, 0) + bytes(8),
     tf.errors.InvalidArgumentError, "reserved"),
])
def test_malformed_envelopes_are_refused(frame: bytes, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        wire.decode(frame)


def test_deep_nesting_is_refused_not_a_recursion_error() -> None:
    deep = bytes([wire.T_LIST]) + struct.pack("<I", 1)
    raw = deep * (wire.MAX_DEPTH + 5) + bytes([wire.T_NONE])
    padded = raw + bytes(-len(raw) % 8)
    with pytest.raises(tf.errors.InvalidArgumentError, match="nested too deeply"):
        wire.decode(header(0, len(padded), 0) + padded)


def test_a_header_over_64_mib_streams_within_the_per_message_cap() -> None:
    envelope = wire.encode({"blob": bytes(80 << 20)})  # an 80 MiB header (TF has no 64 MiB cap)
    assert len(envelope.head) > 80 << 20
    assert len(wire.decode_stream(envelope.chunks()).body["blob"]) == 80 << 20
    with pytest.raises(tf.errors.ResourceExhaustedError, match="max_message_bytes"):
        wire.decode_stream(envelope.chunks(), max_message_bytes=64 << 20)


def test_nesting_as_deep_as_max_depth_round_trips() -> None:
    value: object = None
    for _ in range(wire.MAX_DEPTH):
        value = [value]
    envelope = wire.encode(value)
    assert wire.decode(envelope.frame()).body == value
    with pytest.raises(tf.errors.InvalidArgumentError, match="nested too deeply"):
        wire.encode([value])


def test_bool_tensors_must_hold_zero_or_one() -> None:
    frame = bytearray(wire.encode({"b": np.array([True, False, True])}).frame())
    frame[-8] = 7  # the first payload byte
    with pytest.raises(tf.errors.InvalidArgumentError, match="bool"):
        wire.decode(bytes(frame))


def test_a_stream_validates_its_table_before_allocating() -> None:
    # a 2**50-element float64 tensor whose bytes do not match the declared payload is refused
    # before anything is allocated; one over the per-message cap is ResourceExhausted naming it
    table = struct.pack("<BBq", 2, 1, 1 << 50) + bytes([wire.T_NONE]) + bytes(5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="payload"):
        wire.StreamDecoder(max_message_bytes=1 << 62).feed(header(1, 16, 1 << 40) + table)
    with pytest.raises(tf.errors.ResourceExhaustedError, match="max_message_bytes"):
        wire.StreamDecoder().feed(header(1, 16, 1 << 53) + table)


def test_a_stream_allocates_as_its_bytes_arrive_and_charges_its_connection() -> None:
    # 2**27 string elements (1 GiB of object pointers) declared, nothing sent: nothing is
    # allocated but the header; the charge grows only as the stream reaches each tensor
    count = 1 << 27
    strings = struct.pack("<BBqQ", wire.STRING_CODE, 1, count, 8 * count)
    body = bytes([wire.T_TENSOR]) + struct.pack("<I", 0)
    table = strings + body + bytes(-(len(strings) + len(body)) % 8)
    memory = wire.MemoryCap(1 << 40)
    decoder = wire.StreamDecoder(memory=memory, key="conn")
    decoder.feed(header(1, len(table), 8 * count) + table)
    assert decoder._tensors[0].dtype == np.uint8  # raw bytes only; no object array yet
    assert memory.used("conn") == len(table) + wire._TENSOR_BYTES + 16 * count  # (its entry)
    decoder.release()
    assert memory.used("conn") == 0
    small = wire.MemoryCap(3 << 19)
    envelope = wire.encode({"a": np.zeros(1 << 18, np.float32), "b": np.zeros(8, np.int8)})
    chunks = list(envelope.chunks(1 << 16))
    first = wire.StreamDecoder(memory=small, key="conn")
    for chunk in chunks[:-1]:
        first.feed(chunk)
    with pytest.raises(tf.errors.ResourceExhaustedError, match="max_session_bytes"):
        wire.decode_stream(chunks, memory=small, key="conn")  # the same connection: over it
    assert wire.decode_stream(chunks, memory=small, key="other").body["a"].shape == (1 << 18,)
    first.feed(chunks[-1])
    assert first.finish().body["b"].dtype == np.int8
    assert small.used("conn") == small.used("other") == 0


def test_truncated_and_overlong_streams_are_errors() -> None:
    chunks = list(wire.encode({"v": np.arange(100, dtype=np.int64)}).chunks(64))
    with pytest.raises(tf.errors.DataLossError, match="truncated"):
        wire.decode_stream(chunks[:-1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="more bytes"):
        wire.decode_stream([*chunks, b"x"])


def test_the_schema_is_documented_with_its_version() -> None:
    assert f"version {wire.VERSION}" in wire.__doc__
    for tag in ("None", "tensor", "DType", "TensorShape"):
        assert tag in wire.__doc__


class _PeakCap(wire.MemoryCap):
    """A real cap that also remembers the most it held."""

    def __init__(self) -> None:
        super().__init__(1 << 40)
        self.peak = 0

    def charge(self, key: object, n: int) -> None:
        super().charge(key, n)
        self.peak = max(self.peak, self.used(key))


N_OBJECTS = 2_000
HOSTILE_BODIES = {  # headers that decode to many small objects, each the worst of its kind
    "empty lists": [[] for _ in range(N_OBJECTS)],
    "empty dicts": [{} for _ in range(N_OBJECTS)],
    "one-key dicts": [{"": None} for _ in range(N_OBJECTS)],
    "nested lists": [[[[]]] for _ in range(N_OBJECTS)],
    "short strings": [f"{i % 100:02d}" for i in range(N_OBJECTS)],
    "ints": [1000 + i for i in range(N_OBJECTS)],
    "floats": [i + 0.5 for i in range(N_OBJECTS)],
    "shapes": [TensorShape(None)] * N_OBJECTS,
    "rank-32 shapes": [TensorShape([7] * 32)] * (N_OBJECTS // 10),
    "int-keyed dicts": {i: {} for i in range(N_OBJECTS)},
    "zero-size tensors": [np.zeros(0, np.float32)] * N_OBJECTS,
    "two-byte strings": np.array([b"%02d" % (i % 100) for i in range(20 * N_OBJECTS)], object),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_BODIES))
def test_what_a_header_decodes_to_is_charged_at_least_in_full(name: str) -> None:
    import tracemalloc

    frame = wire.encode(HOSTILE_BODIES[name]).frame()
    cap = _PeakCap()
    for decode in (lambda: wire.decode(frame, None, cap, "conn"),
                   lambda: wire.decode_stream([frame], memory=cap, key="conn")):
        tracemalloc.start()
        try:
            decoded = decode()
            built = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        del decoded
        assert cap.peak >= built, f"{name}: charged {cap.peak} for {built} bytes of objects"
        assert cap.used("conn") == 0


def test_a_header_decoding_over_a_cap_is_refused_naming_it() -> None:
    frame = wire.encode({"x": [[] for _ in range(100_000)]}).frame()  # ~6.4 MB of lists
    with pytest.raises(tf.errors.ResourceExhaustedError, match="max_message_bytes"):
        wire.decode(frame, 4 << 20)
    with pytest.raises(tf.errors.ResourceExhaustedError, match="max_message_bytes"):
        wire.decode_stream([frame], 4 << 20)
    cap = wire.MemoryCap(4 << 20)
    with pytest.raises(tf.errors.ResourceExhaustedError, match="max_session_bytes"):
        wire.decode(frame, None, cap, "conn")
    assert cap.used("conn") == 0
    assert len(wire.decode(frame, 64 << 20, wire.MemoryCap(64 << 20), "conn").body["x"]) == \
        100_000
