"""The hand-written protobuf encoding of Summary, HistogramProto, Event and GraphDef, against
bytes computed by hand from the field numbers of TF's protos."""

from __future__ import annotations

import struct

import pytest

from tensorweave.engine.proto.wire import fields, varint
from tensorweave.formats.summary_proto import (
    Event,
    HistogramProto,
    Summary,
    SummaryValue,
)


def d(x: float) -> bytes:
    return struct.pack("<d", x)


def test_varints_including_negative_int64() -> None:
    assert varint(0) == b"\x00" and varint(1) == b"\x01" and varint(127) == b"\x7f"
    assert varint(300) == b"\xac\x02"
    assert varint(-1) == b"\xff" * 9 + b"\x01"  # ten bytes, as protobuf writes int64 -1


def test_scalar_summary_bytes() -> None:
    value = b"\x0a\x04loss" + b"\x15" + struct.pack("<f", 0.5)  # tag=1 (len), simple_value=2 (f32)
    expected = b"\x0a" + bytes([len(value)]) + value  # Summary.value = 1 (len)
    summary = Summary((SummaryValue("loss", 0.5),))
    assert summary.SerializeToString() == expected
    assert Summary.FromString(expected) == summary


def test_zero_simple_value_is_still_written() -> None:
    # simple_value is a oneof member: 0.0 is set, not absent
    assert SummaryValue("z", 0.0).SerializeToString() == b"\x0a\x01z\x15" + bytes(4)
    assert SummaryValue.FromString(b"\x0a\x01z\x15" + bytes(4)).simple_value == 0.0
    assert SummaryValue.FromString(b"\x0a\x01z").simple_value is None


def test_histogram_bytes_pack_the_repeated_doubles() -> None:
    histo = HistogramProto(min=-1, max=2, num=3, sum=1.5, sum_squares=5.0,
                           bucket_limit=(0.0, 2.5), bucket=(1.0, 2.0))
    expected = (b"\x09" + d(-1) + b"\x11" + d(2) + b"\x19" + d(3) + b"\x21" + d(1.5)
                + b"\x29" + d(5) + b"\x32\x10" + d(0) + d(2.5) + b"\x3a\x10" + d(1) + d(2))
    assert histo.SerializeToString() == expected
    assert HistogramProto.FromString(expected) == histo
    value = SummaryValue("w", histo=histo)
    assert value.SerializeToString() == b"\x0a\x01w\x2a" + varint(len(expected)) + expected
    # unpacked repeated doubles parse too (protobuf accepts both)
    assert HistogramProto.FromString(b"\x31" + d(4) + b"\x31" + d(5)).bucket_limit == (4, 5)


def test_defaults_are_not_written() -> None:
    assert HistogramProto().SerializeToString() == b""
    assert Event().SerializeToString() == b""


def test_event_bytes() -> None:
    event = Event(wall_time=1.5, step=-1, file_version="brain.Event:2")
    expected = b"\x09" + d(1.5) + b"\x10" + varint(-1) + b"\x1a\x0dbrain.Event:2"
    assert event.SerializeToString() == expected
    assert Event.FromString(expected) == event
    summary = Summary((SummaryValue("a", 1.0),)).SerializeToString()
    with_summary = Event(wall_time=2.0, step=7, summary=summary)
    assert with_summary.SerializeToString() == (b"\x09" + d(2.0) + b"\x10\x07\x2a"
                                                + bytes([len(summary)]) + summary)
    assert Event.FromString(with_summary.SerializeToString()) == with_summary


def test_unknown_fields_are_skipped() -> None:
    # log_message = 6 (len), a fixed32 field 9 and a varint field 10 on a Value
    data = b"\x32\x02hi" + b"\x10\x05"
    assert Event.FromString(data) == Event(step=5)
    assert SummaryValue.FromString(b"\x4d" + bytes(4) + b"\x50\x01\x0a\x01t").tag == "t"


@pytest.mark.parametrize("data", [b"\x0a\x05ab", b"\x09\x00", b"\x0b", b"\xff" * 11,
                                  b"\x00\x01"])
def test_malformed_bytes_raise_value_error(data: bytes) -> None:
    with pytest.raises(ValueError, match="Malformed protocol buffer"):
        list(fields(data))


def test_event_graph_and_meta_graph_fields_are_4_and_9() -> None:
    event = Event(wall_time=1.5, step=3, graph_def=b"g", meta_graph_def=b"mg")
    data = event.SerializeToString()
    assert data.endswith(b"\x22\x01g\x4a\x02mg")  # field 4 and field 9, length-delimited
    assert Event.FromString(data) == event


def test_image_value_round_trips_with_field_4() -> None:
    image = Summary.Image(height=2, width=3, colorspace=4, encoded_image_string=b"png")
    value = SummaryValue("img/image", image=image)
    data = value.SerializeToString()
    assert data == b"\x0a\x09img/image" + b"\x22\x0b" + b"\x08\x02\x10\x03\x18\x04\x22\x03png"
    assert SummaryValue.FromString(data) == value


def test_summary_is_mutable_like_a_protobuf_message() -> None:
    serialized = Summary([SummaryValue("a", 1.0)]).SerializeToString()
    summary = Summary()
    summary.ParseFromString(serialized)
    added = summary.value.add(tag="Precision @ 1", simple_value=0.5)
    added.simple_value = 0.75
    assert [(v.tag, v.simple_value) for v in Summary.FromString(summary.SerializeToString())
            .value] == [("a", 1.0), ("Precision @ 1", 0.75)]
    summary.ParseFromString(b"")
    assert summary.value == []


def test_summary_value_node_name_is_field_7_and_round_trips() -> None:
    s = Summary()
    s.value.add(simple_value=3.0, node_name="episode_reward", tag="r")
    data = s.SerializeToString()
    inner = b"\x0a\x01r" + b"\x15" + struct.pack("<f", 3.0) + b"\x3a\x0eepisode_reward"
    assert data == b"\x0a" + bytes([len(inner)]) + inner
    back = Summary.FromString(data).value[0]
    assert (back.tag, back.simple_value, back.node_name) == ("r", 3.0, "episode_reward")
    # the default empty node name is not written (proto3)
    assert SummaryValue("t", 1.0).SerializeToString() == b"\x0a\x01t\x15" + struct.pack("<f", 1.0)
