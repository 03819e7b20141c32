"""Serialized ``Summary`` and ``Event`` messages made by TF's own classes, for
``tests/test_summary_proto.py`` (tensorweave must build the same bytes and read them back).

Usage, with a Python that has TensorFlow: ``python tests/data/summary/make_tf_fixtures.py``.
Writes ``summary.pb`` (one value of each kind) and ``event_<what>.pb`` (one per payload of
``Event.what``) next to this script.
"""

from __future__ import annotations

import pathlib

from tensorflow.core.framework import summary_pb2, tensor_pb2, types_pb2
from tensorflow.core.util import event_pb2

HERE = pathlib.Path(__file__).parent


def summary() -> summary_pb2.Summary:
    s = summary_pb2.Summary()
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
    tensor.tensor.CopyFrom(tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[2.5]))
    return s


def events() -> dict[str, event_pb2.Event]:
    out = {
        "file_version": event_pb2.Event(wall_time=1.5, file_version="brain.Event:2"),
        "summary": event_pb2.Event(wall_time=2.0, step=7, summary=summary()),
        "graph_def": event_pb2.Event(wall_time=3.0, step=-1, graph_def=b"\x0a\x00"),
        "meta_graph_def": event_pb2.Event(wall_time=3.0, meta_graph_def=b"\x12\x00"),
        "log_message": event_pb2.Event(step=2, log_message=event_pb2.LogMessage(
            level=event_pb2.LogMessage.WARN, message="careful")),
        "session_log": event_pb2.Event(step=3, session_log=event_pb2.SessionLog(
            status=event_pb2.SessionLog.CHECKPOINT, checkpoint_path="/tmp/m.ckpt", msg="m")),
        "tagged_run_metadata": event_pb2.Event(
            step=4, tagged_run_metadata=event_pb2.TaggedRunMetadata(tag="step4",
                                                                    run_metadata=b"\x0a\x00")),
    }
    return out


def main() -> None:
    (HERE / "summary.pb").write_bytes(summary().SerializeToString())
    for what, event in events().items():
        (HERE / f"event_{what}.pb").write_bytes(event.SerializeToString())


if __name__ == "__main__":
    main()
