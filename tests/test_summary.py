"""`tw.summary.FileWriter` and a TF1-style training script that writes summaries."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
from google.protobuf.message import DecodeError

import tensorweave as tw
from tensorweave.formats.event_file import read_events
from tensorweave.formats.summary_proto import Event, Summary


def event_files(logdir: Path) -> list[Path]:
    return sorted(logdir.glob("events.out.tfevents.*"))


def test_writer_starts_with_the_file_version_event(tmp_path: Path) -> None:
    before = time.time()
    writer = tw.summary.FileWriter(str(tmp_path / "new" / "dir"), filename_suffix=".x")
    assert writer.get_logdir() == str(tmp_path / "new" / "dir")
    writer.close()
    (path,) = event_files(tmp_path / "new" / "dir")
    assert path.name.endswith(".x") and writer.event_file_path == str(path)
    (first,) = read_events(str(path))
    assert first.file_version == "brain.Event:2" and first.step == 0
    assert before <= first.wall_time <= time.time()


def test_add_summary_bytes_and_objects_with_steps(tmp_path: Path) -> None:
    summary = Summary(value=[Summary.Value(tag="a", simple_value=1.5)])
    with tw.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_summary(summary.SerializeToString(), 3)
        writer.add_summary(summary)
        writer.add_event(Event(wall_time=5.0, step=9))
        with pytest.raises(TypeError, match="serialized Summary"):
            writer.add_summary(1.5)
        with pytest.raises(DecodeError):  # as TF's: the bytes are parsed as a Summary
            writer.add_summary(b"\xff")
    events = read_events(str(event_files(tmp_path)[0]))
    assert [e.step for e in events] == [0, 3, 0, 9]
    assert events[1].summary == summary == events[2].summary
    assert events[3] == Event(wall_time=5.0, step=9)
    writer.add_summary(summary, 4)  # ignored after close, as in TF
    assert len(read_events(str(event_files(tmp_path)[0]))) == 4


def test_flush_rules(tmp_path: Path) -> None:
    writer = tw.summary.FileWriter(str(tmp_path), max_queue=3, flush_secs=3600)
    path = writer.event_file_path
    writer.add_event(Event(step=1))
    assert len(read_events(path)) <= 2  # may still sit in the file buffer
    writer.add_event(Event(step=2))  # the third record: the queue is full, so it is flushed
    assert [e.step for e in read_events(path)] == [0, 1, 2]
    writer.add_event(Event(step=3))
    writer.flush()
    assert [e.step for e in read_events(path)] == [0, 1, 2, 3]
    writer.close()


def test_periodic_flush(tmp_path: Path) -> None:
    writer = tw.summary.FileWriter(str(tmp_path), max_queue=100, flush_secs=0.05)
    writer.add_event(Event(step=1))
    deadline = time.time() + 5
    while len(read_events(writer.event_file_path)) < 2 and time.time() < deadline:
        time.sleep(0.02)
    assert [e.step for e in read_events(writer.event_file_path)] == [0, 1]
    writer.close()


def test_reopen_starts_a_new_file(tmp_path: Path) -> None:
    writer = tw.summary.FileWriter(str(tmp_path), filename_suffix=".a")
    first = writer.event_file_path
    writer.add_event(Event(step=5))
    writer.reopen()  # no-op while open
    writer.close()
    writer.reopen()  # (likely within the same second: the new name gets a serial number)
    writer.add_event(Event(step=7))
    writer.close()
    assert writer.event_file_path != first and writer.event_file_path.endswith(".a")
    assert [e.step for e in read_events(writer.event_file_path)] == [0, 7]
    assert [e.step for e in read_events(first)] == [0, 5]


def test_two_writers_in_one_second_do_not_clobber(tmp_path: Path) -> None:
    writers = [tw.summary.FileWriter(str(tmp_path)) for _ in range(3)]
    for step, writer in enumerate(writers):
        writer.add_event(Event(step=step + 1))
        writer.close()
    assert len(event_files(tmp_path)) == 3
    assert [read_events(w.event_file_path)[1].step for w in writers] == [1, 2, 3]


def test_session_argument_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotImplementedError):
        tw.summary.FileWriter(str(tmp_path), session=object())


def test_tf1_training_script_writes_scalars_histograms_and_graph(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    features = rng.normal(size=(64, 3)).astype(np.float32)
    targets = features @ np.array([1.0, -2.0, 0.5], np.float32)

    x = tw.placeholder(tw.float32, [None, 3], name="x")
    y = tw.placeholder(tw.float32, [None], name="y")
    w = tw.Variable(tw.zeros([3]), name="w")
    loss = tw.reduce_mean(tw.square(tw.reduce_sum(x * w, 1) - y))
    train_op = tw.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tw.name_scope("metrics"):
        tw.summary.scalar("loss", loss)
    tw.summary.histogram("weights", w)
    merged = tw.summary.merge_all()

    losses, weights = {}, {}
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        writer = tw.summary.FileWriter(str(tmp_path), sess.graph)
        for step in range(12):
            if step % 4 == 0:
                summary, losses[step], weights[step] = sess.run(
                    [merged, loss, w], {x: features, y: targets})
                writer.add_summary(summary, step)
            sess.run(train_op, {x: features, y: targets})
        writer.close()

    (path,) = event_files(tmp_path)
    events = read_events(str(path))
    assert events[0].file_version == "brain.Event:2"
    assert events[1].graph_def and b"GradientDescent" in events[1].graph_def
    written = [(e.step, e.summary) for e in events if e.HasField("summary")]
    assert [step for step, _ in written] == [0, 4, 8]
    for step, summary in written:
        scalar, histo = summary.value
        assert scalar.tag == "metrics/loss" and histo.tag == "weights"
        assert scalar.simple_value == pytest.approx(losses[step], rel=1e-6)
        assert histo.histo.num == 3
        assert (histo.histo.min, histo.histo.max) == pytest.approx(
            (weights[step].min(), weights[step].max()))
    assert written[-1][1].value[0].simple_value < written[0][1].value[0].simple_value
    assert os.path.getsize(path) > 0


def test_add_run_metadata_writes_tf_tagged_run_metadata(tmp_path: Path) -> None:
    a = tw.placeholder(tw.float32, [2], name="a")
    total = tw.reduce_sum(tw.square(a), name="total")
    options = tw.RunOptions(trace_level=tw.RunOptions.FULL_TRACE, output_partition_graphs=True)
    metadata = tw.RunMetadata()
    with tw.Session() as sess:
        assert sess.run(total, {a: [1.0, 2.0]}, options=options, run_metadata=metadata) == 5.0
    writer = tw.summary.FileWriter(str(tmp_path))
    writer.add_run_metadata(metadata, "step001", global_step=7)
    with pytest.raises(ValueError, match="already used"):
        writer.add_run_metadata(metadata, "step001")
    writer.close()

    (path,) = event_files(tmp_path)
    (event,) = [e for e in tw.train.summary_iterator(path) if e.HasField("tagged_run_metadata")]
    assert event.step == 7 and event.tagged_run_metadata.tag == "step001"
    written = tw.RunMetadata.FromString(event.tagged_run_metadata.run_metadata)
    assert written == metadata
    (device_stats,) = written.step_stats.dev_stats
    assert device_stats.device == metadata.step_stats.dev_stats[0].device
    assert "total" in {ns.node_name for ns in device_stats.node_stats}
    assert len(written.partition_graphs) == len(metadata.partition_graphs)
    assert "total" in {node.name for g in written.partition_graphs for node in g.node}


def test_a_writer_with_a_graph_records_its_full_graph_def_and_meta_graph(tmp_path: Path) -> None:
    from tensorweave.formats.meta_graph_proto import MetaGraphDef

    graph = tw.Graph()
    with graph.as_default():
        x = tw.placeholder(tw.float32, [None, 3], name="x")
        tw.reduce_sum(tw.nn.relu(x), axis=1, name="y")
        tw.add_to_collection("outputs", graph.get_tensor_by_name("y:0"))
    writer = tw.summary.FileWriter(str(tmp_path), graph=graph)
    writer.close()
    events = read_events(str(event_files(tmp_path)[0]))
    graph_event, meta_event = events[1], events[2]
    nodes = {n.name: n for n in tw.GraphDef.FromString(graph_event.graph_def).node}
    assert set(nodes) >= {"x", "y", "Relu"}
    assert nodes["x"].attr["dtype"].type == tw.float32.as_datatype_enum  # attrs are written ...
    shapes = nodes["y"].attr["_output_shapes"].list.shape  # ... and shapes
    assert [[d.size for d in s.dim] for s in shapes] == [[-1]]
    meta = MetaGraphDef.FromString(meta_event.meta_graph_def)
    assert {n.name for n in meta.graph_def.node} == set(nodes)
    assert meta.collection_def["outputs"].node_list.value == ["y:0"]
    assert graph_event.WhichOneof("what") == "graph_def"
    assert meta_event.WhichOneof("what") == "meta_graph_def"


def test_add_graph_of_a_graph_def_writes_it_as_it_is(tmp_path: Path) -> None:
    graph = tw.Graph()
    with graph.as_default():
        tw.constant([1.0, 2.0], name="c")
    graph_def = graph.as_graph_def()
    with tw.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_graph(None, global_step=4, graph_def=graph_def)
    (event,) = [e for e in read_events(str(event_files(tmp_path)[0])) if e.graph_def]
    assert event.step == 4 and event.graph_def == graph_def.SerializeToString()
