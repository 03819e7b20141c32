"""tensorweave.formats.example_proto: the wire format against bytes built by hand from the
.proto field numbers, protobuf's message API (presence, oneof, maps, type checks), parsing
and the fast feature reader."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.formats.example_proto import (
    BytesList,
    DecodeError,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    SequenceExample,
    example_features,
)


def ld(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2) with a one-byte length."""
    assert len(payload) < 128
    return bytes([number << 3 | 2, len(payload)]) + payload


def test_feature_lists_match_hand_encoding() -> None:
    assert BytesList(value=[b"ab", b""]).SerializeToString() == ld(1, b"ab") + ld(1, b"")
    assert FloatList(value=[1.5, -2.0]).SerializeToString() == ld(1, struct.pack("<2f", 1.5,
                                                                                  -2.0))
    # packed varints; -1 is ten bytes of two's complement
    assert Int64List(value=[1, 300, -1]).SerializeToString() == \
        ld(1, b"\x01\xac\x02" + b"\xff" * 9 + b"\x01")
    assert Int64List().SerializeToString() == b""


def test_example_matches_hand_encoding() -> None:
    example = Example(features=Features(feature={
        "b": Feature(int64_list=Int64List(value=[7])),
        "a": Feature(bytes_list=BytesList(value=[b"x"])),
        "c": Feature(float_list=FloatList(value=[0.5])),
    }))
    entry_a = ld(1, b"a") + ld(2, ld(1, ld(1, b"x")))          # Feature.bytes_list = 1
    entry_b = ld(1, b"b") + ld(2, ld(3, ld(1, b"\x07")))       # Feature.int64_list = 3
    entry_c = ld(1, b"c") + ld(2, ld(2, ld(1, struct.pack("<f", 0.5))))  # float_list = 2
    expected = ld(1, ld(1, entry_a) + ld(1, entry_b) + ld(1, entry_c))  # sorted map keys
    assert example.SerializeToString() == expected
    assert Example.FromString(expected) == example
    parsed = Example()
    assert parsed.ParseFromString(expected) == len(expected)
    assert parsed.features.feature["b"].int64_list.value == [7]


def test_presence_follows_protobuf() -> None:
    example = Example()
    assert example.SerializeToString() == b"" and not example.HasField("features")
    assert len(example.features.feature) == 0  # reading does not set it
    assert not example.HasField("features")
    example.features.feature["k"].float_list.value.append(2)
    assert example.HasField("features")
    assert example.features.feature["k"].WhichOneof("kind") == "float_list"
    assert example.features.feature["k"].float_list.value == [2.0]
    # an empty but set submessage is written as an empty field
    assert Example(features=Features()).SerializeToString() == ld(1, b"")
    assert Feature(int64_list=Int64List()).SerializeToString() == ld(3, b"")


def test_oneof_switches_kind() -> None:
    feature = Feature(int64_list=Int64List(value=[1]))
    assert feature.bytes_list.value == [] and feature.WhichOneof("kind") == "int64_list"
    feature.bytes_list.value.append(b"z")
    assert feature.WhichOneof("kind") == "bytes_list"
    assert not feature.HasField("int64_list") and feature.int64_list.value == []
    assert feature.HasField("kind")
    feature.ClearField("bytes_list")
    assert feature.WhichOneof("kind") is None and feature.SerializeToString() == b""


def test_type_checks_and_conversions() -> None:
    with pytest.raises(TypeError, match="has type str, but expected one of: bytes"):
        BytesList(value=["text"])
    with pytest.raises(TypeError, match="has type float, but expected one of: int"):
        Int64List(value=[1.5])
    with pytest.raises(ValueError, match="Value out of range"):
        Int64List(value=[1 << 63])
    with pytest.raises(TypeError):
        FloatList(value=["1"])
    with pytest.raises(ValueError, match='has no "values" field'):
        Int64List(values=[1])
    ints = Int64List(value=np.arange(3))  # numpy integers are integers
    assert ints.value == [0, 1, 2] and all(type(v) is int for v in ints.value)
    floats = FloatList(value=[0.1])
    assert floats.value[0] == float(np.float32(0.1))  # a float field holds a float32
    with pytest.raises(AttributeError):
        Feature().int64_list = Int64List()  # type: ignore[misc]


def test_dict_init_copy_merge_and_equality() -> None:
    a = Example(features={"feature": {"x": {"int64_list": {"value": [1, 2]}}}})
    b = Example()
    b.features.feature["x"].int64_list.value.extend([1, 2])
    assert a == b and a != Example()
    c = Example()
    c.CopyFrom(a)
    c.features.feature["x"].int64_list.value.append(3)
    assert a.features.feature["x"].int64_list.value == [1, 2]  # a copy, not a view
    c.MergeFrom(a)  # a map entry is replaced, as protobuf merges maps
    assert c.features.feature["x"].int64_list.value == [1, 2]
    ints = Int64List(value=[3])
    ints.MergeFrom(Int64List(value=[1, 2]))  # repeated fields append
    assert ints.value == [3, 1, 2]
    with pytest.raises(TypeError):
        c.MergeFrom(Features())


def test_parsing_accepts_unpacked_and_last_map_entry_wins() -> None:
    unpacked = bytes([1 << 3 | 0, 5, 1 << 3 | 0, 6])  # two varint fields, not packed
    assert Int64List.FromString(unpacked).value == [5, 6]
    floats = bytes([1 << 3 | 5]) + struct.pack("<f", 2.5)
    assert FloatList.FromString(floats).value == [2.5]
    first = ld(1, ld(1, b"k") + ld(2, ld(3, ld(1, b"\x01"))))
    second = ld(1, ld(1, b"k") + ld(2, ld(3, ld(1, b"\x02"))))
    unknown = bytes([9 << 3 | 0, 1])  # field 9 is skipped
    features = Features.FromString(first + unknown + second)
    assert features.feature["k"].int64_list.value == [2]


@pytest.mark.parametrize("data", [b"\x0a\x05ab", b"\x0a", b"\x0f\x00", b"\x0a\x02\x0a\xff"])
def test_malformed_bytes_are_decode_errors(data: bytes) -> None:
    with pytest.raises(DecodeError):
        Example.FromString(data)
    assert issubclass(DecodeError, ValueError)


def test_sequence_example_and_repeated_messages() -> None:
    seq = SequenceExample(context=Features(feature={"len": Feature(
        int64_list=Int64List(value=[2]))}))
    steps = seq.feature_lists.feature_list["tokens"].feature
    steps.add(bytes_list=BytesList(value=[b"hi"]))
    steps.append(Feature(bytes_list=BytesList(value=[b"yo"])))
    assert isinstance(seq.feature_lists, FeatureLists)
    assert isinstance(seq.feature_lists.feature_list["tokens"], FeatureList)
    data = seq.SerializeToString()
    back = SequenceExample.FromString(data)
    assert back == seq
    assert [f.bytes_list.value[0] for f in back.feature_lists.feature_list["tokens"].feature] \
        == [b"hi", b"yo"]
    assert data.startswith(ld(1, SequenceExample(context=seq.context).SerializeToString()[2:]))


def test_text_format() -> None:
    example = Example()
    example.features.feature["a"].bytes_list.value.append(b'q"\x01')
    assert str(example) == ('features {\n  feature {\n    key: "a"\n    value {\n'
                            '      bytes_list {\n        value: "q\\"\\001"\n      }\n'
                            '    }\n  }\n}\n')


def test_fast_feature_reader() -> None:
    example = Example(features=Features(feature={
        "i": Feature(int64_list=Int64List(value=[-3, 4])),
        "f": Feature(float_list=FloatList(value=[0.25])),
        "s": Feature(bytes_list=BytesList(value=[b"x", b"y"])),
        "none": Feature(),
    }))
    got = example_features(example.SerializeToString())
    assert got == {b"i": ("int64", [-3, 4]), b"f": ("float", [0.25]),
                   b"s": ("bytes", [b"x", b"y"]), b"none": (None, [])}
    with pytest.raises(DecodeError):
        example_features(b"\x0a\x09")


def test_exposed_as_tw_train() -> None:
    assert tw.train.Example is Example and tw.train.Features is Features
    assert tw.train.Feature is Feature and tw.train.Int64List is Int64List
    assert tw.train.SequenceExample is SequenceExample
