"""`tensorweave.formats.summary_proto`: Summary and Event as protobuf messages, against bytes
made by TF's own classes (``tests/data/summary/make_tf_fixtures.py``)."""

from __future__ import annotations

import pathlib
import struct

import pytest
from google.protobuf import text_format
from google.protobuf.message import DecodeError

from tensorweave.formats.summary_proto import (
    Event,
    HistogramProto,
    LogMessage,
    SessionLog,
    Summary,
    TaggedRunMetadata,
    TensorProto,
)

DATA = pathlib.Path(__file__).parent / "data" / "summary"
DT_FLOAT = 1


def tf_bytes(name: str) -> bytes:
    return (DATA / f"{name}.pb").read_bytes()


def summary() -> Summary:
    """The Summary the fixture script builds with TF's classes, built the same way."""
    s = Summary()
    s.value.add(tag="loss", simple_value=0.5)
    s.value.add(tag="zero", simple_value=0.0, node_name="zero_node")
    histo = s.value.add(tag="w").histo
    histo.min, histo.max, histo.num, histo.sum, histo.sum_squares = -1.0, 2.0, 3.0, 1.5, 5.0
    histo.bucket_limit.extend([0.0, 2.5, 1.7976931348623157e308])
    histo.bucket.extend([1.0, 2.0, 0.0])
    image = s.value.add(tag="img/image").image
    image.height, image.width, image.colorspace = 2, 3, 4
    image.encoded_image_string = b"\x89PNG"
    audio = s.value.add(tag="snd/audio").audio
    audio.sample_rate, audio.num_channels, audio.length_frames = 16000.0, 2, 7
    audio.encoded_audio_string, audio.content_type = b"RIFF", "audio/wav"
    tensor = s.value.add(tag="t")
    tensor.metadata.plugin_data.plugin_name = "scalars"
    tensor.metadata.plugin_data.content = b"\x01"
    tensor.metadata.display_name = "T"
    tensor.tensor.CopyFrom(TensorProto(dtype=DT_FLOAT, float_val=[2.5]))
    return s


EVENTS = {
    "file_version": lambda: Event(wall_time=1.5, file_version="brain.Event:2"),
    "summary": lambda: Event(wall_time=2.0, step=7, summary=summary()),
    "graph_def": lambda: Event(wall_time=3.0, step=-1, graph_def=b"\x0a\x00"),
    "meta_graph_def": lambda: Event(wall_time=3.0, meta_graph_def=b"\x12\x00"),
    "log_message": lambda: Event(step=2, log_message=LogMessage(level=LogMessage.WARN,
                                                                message="careful")),
    "session_log": lambda: Event(step=3, session_log=SessionLog(
        status=SessionLog.CHECKPOINT, checkpoint_path="/tmp/m.ckpt", msg="m")),
    "tagged_run_metadata": lambda: Event(step=4, tagged_run_metadata=TaggedRunMetadata(
        tag="step4", run_metadata=b"\x0a\x00")),
}


def test_summary_bytes_are_tfs() -> None:
    assert summary().SerializeToString() == tf_bytes("summary")
    assert Summary.FromString(tf_bytes("summary")) == summary()


@pytest.mark.parametrize("what", sorted(EVENTS))
def test_event_bytes_are_tfs(what: str) -> None:
    event = EVENTS[what]()
    assert event.SerializeToString() == tf_bytes(f"event_{what}")
    back = Event.FromString(tf_bytes(f"event_{what}"))
    assert back == event and back.WhichOneof("what") == what


def test_summary_value_kinds_are_a_oneof() -> None:
    value = Summary.Value(tag="z", simple_value=0.0)
    # a oneof member is written even when 0.0
    assert value.SerializeToString() == b"\x0a\x01z\x15" + bytes(4)
    assert Summary.Value.FromString(b"\x0a\x01z\x15" + bytes(4)).HasField("simple_value")
    assert not Summary.Value.FromString(b"\x0a\x01z").HasField("simple_value")
    value.histo.num = 1.0  # setting another kind clears the first
    assert value.WhichOneof("value") == "histo" and not value.HasField("simple_value")


def test_histogram_doubles_are_packed_and_unpacked_ones_parse() -> None:
    histo = HistogramProto(bucket_limit=[0.0, 2.5], bucket=[1.0, 2.0])
    d = struct.Struct("<d").pack
    assert histo.SerializeToString() == b"\x32\x10" + d(0) + d(2.5) + b"\x3a\x10" + d(1) + d(2)
    assert list(HistogramProto.FromString(b"\x31" + d(4) + b"\x31" + d(5)).bucket_limit) == [4, 5]


def test_event_holds_a_summary_message_and_keeps_unknown_fields() -> None:
    event = Event.FromString(tf_bytes("event_summary"))
    assert [v.tag for v in event.summary.value][:2] == ["loss", "zero"]
    unknown = b"\x52\x03abc"  # field 10 (TF 2's source_metadata), not described here
    assert Event.FromString(b"\x10\x05" + unknown).SerializeToString() == b"\x10\x05" + unknown


@pytest.mark.parametrize("data", [b"\x0a\x05ab", b"\x09\x00", b"\x0b", b"\xff" * 11])
def test_malformed_bytes_raise_decode_error(data: bytes) -> None:
    with pytest.raises(DecodeError):
        Event.FromString(data)


def test_text_format_is_protobufs() -> None:
    text = text_format.MessageToString(EVENTS["log_message"]())
    assert text == 'step: 2\nlog_message {\n  level: WARN\n  message: "careful"\n}\n'
    assert text_format.Parse(text, Event()) == EVENTS["log_message"]()


def test_summary_is_mutable_like_tfs() -> None:
    summary = Summary()
    summary.ParseFromString(Summary(value=[Summary.Value(tag="a", simple_value=1.0)])
                            .SerializeToString())
    added = summary.value.add(tag="Precision @ 1", simple_value=0.5)
    added.simple_value = 0.75
    assert [(v.tag, v.simple_value) for v in Summary.FromString(summary.SerializeToString())
            .value] == [("a", 1.0), ("Precision @ 1", 0.75)]
    summary.ParseFromString(b"")
    assert list(summary.value) == []


def test_the_classes_are_tfs_public_names() -> None:
    import tensorweave as tw

    assert (tw.Event, tw.HistogramProto, tw.LogMessage, tw.SessionLog, tw.Summary) == (
        Event, HistogramProto, LogMessage, SessionLog, Summary)
    assert tw.SummaryMetadata.DESCRIPTOR.full_name == "tensorflow.SummaryMetadata"
    assert (tw.summary.Event, tw.summary.SessionLog, tw.summary.TaggedRunMetadata) == (
        Event, SessionLog, TaggedRunMetadata)
    assert tw.summary.SummaryDescription.DESCRIPTOR.full_name == "tensorflow.SummaryDescription"


def test_tf_pb2_paths_name_the_same_classes() -> None:
    from tensorweave.core.framework import summary_pb2
    from tensorweave.core.util import event_pb2

    assert (event_pb2.Event, event_pb2.SessionLog, event_pb2.LogMessage) == (
        Event, SessionLog, LogMessage)
    assert event_pb2.TaggedRunMetadata is TaggedRunMetadata
    assert (summary_pb2.Summary, summary_pb2.HistogramProto) == (Summary, HistogramProto)
    assert summary_pb2.SummaryMetadata.PluginData.DESCRIPTOR.full_name == \
        "tensorflow.SummaryMetadata.PluginData"
    # what TensorBoard-reading scripts do with them
    assert event_pb2.Event.FromString(tf_bytes("event_summary")).summary.value[0].tag == "loss"
