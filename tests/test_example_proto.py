"""tensorweave.formats.example_proto: protobuf classes whose bytes are TF's, with protobuf's
message API (presence, oneof, maps, type checks, DecodeError) and text format."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from google.protobuf import message, text_format

import tensorweave as tw
from tensorweave.formats.example_proto import (
    BytesList,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    SequenceExample,
)

# TF 2.21's SerializeToString(deterministic=True) of the messages `_example()` and `_sequence()`
# build, made with tf.train's classes by the same constructor calls (``t = tf.train``):
#   t.Example(features=t.Features(feature={
#       "label": t.Feature(int64_list=t.Int64List(value=[1, -1, 300])),
#       "score": t.Feature(float_list=t.FloatList(value=[0.5, -2.25])),
#       "text": t.Feature(bytes_list=t.BytesList(value=[b"hi", b""])), "none": t.Feature()}))
#   t.SequenceExample(
#       context=t.Features(feature={"id": t.Feature(int64_list=t.Int64List(value=[7]))}),
#       feature_lists=t.FeatureLists(feature_list={"tokens": t.FeatureList(feature=[
#           t.Feature(bytes_list=t.BytesList(value=[b"a"])),
#           t.Feature(float_list=t.FloatList(value=[1.0]))])}))
TF_EXAMPLE = bytes.fromhex(
    "0a4f0a1a0a056c6162656c12111a0f0a0d01ffffffffffffffffff01ac020a080a046e6f6e6512000a150a05"
    "73636f7265120c120a0a080000003f000010c00a100a047465787412080a060a0268690a00")
TF_SEQUENCE = bytes.fromhex(
    "0a0d0a0b0a02696412051a030a0107121d0a1b0a06746f6b656e7312110a050a030a01610a0812060a040000"
    "803f")


def _example() -> Example:
    return Example(features=Features(feature={
        "label": Feature(int64_list=Int64List(value=[1, -1, 300])),
        "score": Feature(float_list=FloatList(value=[0.5, -2.25])),
        "text": Feature(bytes_list=BytesList(value=[b"hi", b""])),
        "none": Feature(),
    }))


def _sequence() -> SequenceExample:
    return SequenceExample(
        context=Features(feature={"id": Feature(int64_list=Int64List(value=[7]))}),
        feature_lists=FeatureLists(feature_list={"tokens": FeatureList(feature=[
            Feature(bytes_list=BytesList(value=[b"a"])),
            Feature(float_list=FloatList(value=[1.0]))])}))


def ld(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2) with a one-byte length."""
    assert len(payload) < 128
    return bytes([number << 3 | 2, len(payload)]) + payload


def test_bytes_are_tfs() -> None:
    assert _example().SerializeToString(deterministic=True) == TF_EXAMPLE
    assert _sequence().SerializeToString(deterministic=True) == TF_SEQUENCE
    assert Example.FromString(TF_EXAMPLE) == _example()
    assert SequenceExample.FromString(TF_SEQUENCE) == _sequence()
    parsed = Example()
    assert parsed.ParseFromString(TF_EXAMPLE) == len(TF_EXAMPLE)
    assert list(parsed.features.feature["label"].int64_list.value) == [1, -1, 300]


def test_lists_are_packed() -> None:
    assert FloatList(value=[1.5, -2.0]).SerializeToString() == ld(1, struct.pack("<2f", 1.5,
                                                                                  -2.0))
    # -1 is ten bytes of two's complement
    assert Int64List(value=[1, 300, -1]).SerializeToString() == \
        ld(1, b"\x01\xac\x02" + b"\xff" * 9 + b"\x01")
    assert Int64List().SerializeToString() == b""


def test_presence_follows_protobuf() -> None:
    example = Example()
    assert example.SerializeToString() == b"" and not example.HasField("features")
    assert len(example.features.feature) == 0  # reading does not set it
    assert not example.HasField("features")
    example.features.feature["k"].float_list.value.append(2)
    assert example.HasField("features")
    assert example.features.feature["k"].WhichOneof("kind") == "float_list"
    # an empty but set submessage is written as an empty field
    assert Example(features=Features()).SerializeToString() == ld(1, b"")
    assert Feature(int64_list=Int64List()).SerializeToString() == ld(3, b"")


def test_oneof_switches_kind() -> None:
    feature = Feature(int64_list=Int64List(value=[1]))
    feature.bytes_list.value.append(b"z")
    assert feature.WhichOneof("kind") == "bytes_list"
    assert not feature.HasField("int64_list") and list(feature.int64_list.value) == []


def test_type_checks() -> None:
    with pytest.raises(TypeError):
        BytesList(value=["text"])
    with pytest.raises(TypeError):
        Int64List(value=[1.5])
    with pytest.raises(ValueError):
        Int64List(value=[1 << 63])
    with pytest.raises(ValueError):
        Int64List(values=[1])
    assert list(Int64List(value=np.arange(3)).value) == [0, 1, 2]  # numpy integers are ints
    assert FloatList(value=[0.1]).value[0] == float(np.float32(0.1))  # float fields are 32-bit
    with pytest.raises(AttributeError):
        Feature().int64_list = Int64List()  # type: ignore[misc]


def test_later_map_entry_wins_and_unpacked_lists_parse() -> None:
    unpacked = bytes([1 << 3 | 0, 5, 1 << 3 | 0, 6])  # two varint fields, not packed
    assert list(Int64List.FromString(unpacked).value) == [5, 6]
    first = ld(1, ld(1, b"k") + ld(2, ld(3, ld(1, b"\x01"))))
    second = ld(1, ld(1, b"k") + ld(2, ld(3, ld(1, b"\x02"))))
    features = Features.FromString(first + second)
    assert list(features.feature["k"].int64_list.value) == [2]


@pytest.mark.parametrize("data", [b"\x0a\x05ab", b"\x0a", b"\x0f\x00", b"\x0a\x02\x0a\xff"])
def test_malformed_bytes_are_decode_errors(data: bytes) -> None:
    with pytest.raises(message.DecodeError):
        Example.FromString(data)


def test_text_format() -> None:
    example = Example()
    example.features.feature["a"].bytes_list.value.append(b'q"\x01')
    text = ('features {\n  feature {\n    key: "a"\n    value {\n'
            '      bytes_list {\n        value: "q\\"\\001"\n      }\n'
            '    }\n  }\n}\n')
    assert str(example) == text
    assert text_format.Parse(text, Example()) == example


def test_exposed_as_tw_train() -> None:
    assert tw.train.Example is Example and tw.train.Features is Features
    assert tw.train.Feature is Feature and tw.train.Int64List is Int64List
    assert tw.train.SequenceExample is SequenceExample


def test_tf_example_pb2_paths_name_the_same_classes() -> None:
    from tensorweave.core.example import example_pb2, feature_pb2

    assert example_pb2.Example is Example and feature_pb2.Feature is Feature
    assert feature_pb2.Int64List(value=[1, 2]).SerializeToString() == b"\x0a\x02\x01\x02"
