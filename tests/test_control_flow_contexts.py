"""The ``cond_context``/``while_context`` collections in meta graphs: written as TF's
``CondContextDef``/``WhileContextDef``, read back into `CondContext`/`WhileContext`, both ways
with TF (``tests/data/control_flow_contexts``, made by its ``make_tf_cond_meta.py``; the
tensorweave -> TF direction runs TF when ``TENSORWEAVE_TF_PYTHON`` names a Python with it)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

import tensorweave as tf
from tensorweave.api.control_flow_contexts import CondContext, WhileContext
from tensorweave.core.protobuf.control_flow_pb2 import CondContextDef, WhileContextDef
from tensorweave.python.framework import ops

DATA = pathlib.Path(__file__).parent / "data" / "control_flow_contexts"
TF_PYTHON = os.environ.get("TENSORWEAVE_TF_PYTHON")


def build() -> dict[str, tf.Tensor]:
    x = tf.placeholder(tf.float32, [], name="x")
    w = tf.constant(5.0, name="w")
    y = tf.cond(x > 0, lambda: x * w, lambda: x - 1.0, name="pick")
    i, s = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + x),
                         [tf.constant(0, name="i0"), tf.constant(0.0, name="s0")],
                         maximum_iterations=5, back_prop=False, name="loop")
    return {"x": x, "y": y, "i": i, "s": s}


def test_export_writes_tf_context_defs_for_the_functional_ops() -> None:
    t = build()
    meta = tf.train.export_meta_graph()
    conds = [CondContextDef.FromString(b)
             for b in meta.collection_def["cond_context"].bytes_list.value]
    assert [(c.context_name, c.pred_name, c.pivot_name, c.branch) for c in conds] == [
        ("pick/cond_text", "Greater:0", "pick/If", 1),
        ("pick/cond_text_1", "Greater:0", "pick/If", 0)]
    assert t["y"].op.name == "pick/If"
    assert sorted(conds[0].values_def.values) == ["Greater:0", "w:0", "x:0"]
    assert dict(conds[0].values_def.external_values) == {
        "Greater:0": "Greater:0", "w:0": "w:0", "x:0": "x:0"}
    (loop,) = [WhileContextDef.FromString(b)
               for b in meta.collection_def["while_context"].bytes_list.value]
    assert (loop.context_name, loop.parallel_iterations, loop.back_prop, loop.swap_memory) == (
        "loop/while_context", 10, False, False)
    assert (loop.pivot_name, loop.pivot_for_pred_name, loop.pivot_for_body_name) == (
        "loop/While",) * 3
    assert list(loop.loop_enter_names) == ["loop/iteration_counter:0", "i0:0", "s0:0"]
    assert list(loop.loop_exit_names) == ["loop/While:0", "loop/While:1", "loop/While:2"]
    assert loop.maximum_iterations_name == "loop/maximum_iterations:0"
    assert sorted(loop.values_def.values) == ["loop/maximum_iterations:0", "x:0"]


def test_contexts_round_trip_through_a_meta_graph() -> None:
    build()
    meta = tf.train.export_meta_graph()
    with tf.Graph().as_default() as graph:
        tf.train.import_meta_graph(meta, import_scope="imported")
        then, other = tf.get_collection(tf.GraphKeys.COND_CONTEXT)
        (loop,) = tf.get_collection(tf.GraphKeys.WHILE_CONTEXT)
    assert isinstance(then, CondContext) and isinstance(loop, WhileContext)
    assert (then.name, then.branch, other.name, other.branch) == (
        "imported/pick/cond_text", 1, "imported/pick/cond_text_1", 0)
    assert then.pred is graph.get_tensor_by_name("imported/Greater:0")
    assert then.pivot is graph.get_operation_by_name("imported/pick/If")
    assert then.external_values["imported/w:0"] is graph.get_tensor_by_name("imported/w:0")
    assert loop.pivot is graph.get_operation_by_name("imported/loop/While")
    assert [t.name for t in loop.loop_exits] == [
        "imported/loop/While:0", "imported/loop/While:1", "imported/loop/While:2"]
    assert loop.maximum_iterations is graph.get_tensor_by_name(
        "imported/loop/maximum_iterations:0")
    assert (loop.back_prop, loop.parallel_iterations) == (False, 10)
    # and they are written again as they were read
    again = tf.train.export_meta_graph(graph=graph)
    assert [CondContextDef.FromString(b).context_name
            for b in again.collection_def["cond_context"].bytes_list.value] == [
        "imported/pick/cond_text", "imported/pick/cond_text_1"]


def test_a_context_built_inside_a_function_body_is_not_exported() -> None:
    x = tf.placeholder(tf.float32, [])
    tf.cond(x > 0, lambda: tf.cond(x > 1, lambda: x, lambda: -x), lambda: x)
    names = [CondContextDef.FromString(b).context_name for b in
             tf.train.export_meta_graph().collection_def["cond_context"].bytes_list.value]
    assert names == ["cond/cond_text", "cond/cond_text_1"]


def test_a_tf_made_meta_graph_with_cond_contexts_imports() -> None:
    reference = json.loads((DATA / "tf_cond.json").read_text())
    with tf.Graph().as_default() as graph:
        tf.train.import_meta_graph(str(DATA / "tf_cond.meta"))
        contexts = tf.get_collection(tf.GraphKeys.COND_CONTEXT)
        got = [{"name": c.name, "pred": c.pred.name, "pivot": c.pivot.name, "branch": c.branch,
                "values": sorted(c.values),
                "external_values": {k: v.name for k, v in sorted(c.external_values.items())}}
               for c in contexts]
        assert got == reference["contexts"]
        assert [(c.name, c.branch, c.pivot.name) for c in contexts[0].nested] == [
            ("outer/inner/cond_text", 1, "outer/inner/switch_t:0"),
            ("outer/inner/cond_text_1", 0, "outer/inner/switch_f:0")]
        assert contexts[1].nested == ()
        with tf.Session() as sess:
            assert sess.run("z:0", {"x:0": 1.5}) == reference["fetched"]["z:0"]
            # TF1's Switch has no kernel here: the error names the node
            with pytest.raises(tf.errors.InvalidArgumentError, match="outer/Switch"):
                sess.run("outer/Merge:0", {"x:0": 1.5})
    assert graph.get_operation_by_name("outer/Merge").outputs[1].dtype == tf.int32


def test_a_bad_context_item_is_a_value_error() -> None:
    meta = tf.train.export_meta_graph()
    meta.collection_def["cond_context"].bytes_list.value.append(b"\xff\xff")
    with tf.Graph().as_default(), pytest.raises(ValueError, match="cond_context.*CondContextDef"):
        tf.train.import_meta_graph(meta)


def test_a_registered_proto_function_carries_a_users_collection() -> None:
    def to_proto(item: str, export_scope: str | None = None) -> CondContextDef:
        return CondContextDef(context_name=item)

    def from_proto(proto: CondContextDef, import_scope: str | None = None) -> str:
        return f"read {proto.context_name}"

    ops.register_proto_function("my_items", proto_type=CondContextDef, to_proto=to_proto,
                                from_proto=from_proto)
    tf.add_to_collection("my_items", "a")
    meta = tf.train.export_meta_graph()
    assert meta.collection_def["my_items"].bytes_list.value == [
        CondContextDef(context_name="a").SerializeToString()]
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        assert tf.get_collection("my_items") == ["read a"]


def test_merge_and_switch_infer_tfs_shapes() -> None:
    a = tf.placeholder(tf.float32, [2, None, 3])
    b = tf.placeholder(tf.float32, [2, 4, 5])
    merged = tf.raw_ops.Merge(inputs=[a, b])
    assert merged[0].shape.as_list() == [2, None, None] and merged[1].shape.as_list() == []
    assert tf.raw_ops.Merge(inputs=[a, tf.placeholder(tf.float32)])[0].shape.ndims is None
    false, true = tf.raw_ops.Switch(data=a, pred=tf.placeholder(tf.bool, []))
    assert false.shape.as_list() == true.shape.as_list() == [2, None, 3]
    with pytest.raises(ValueError, match="rank 0"):
        tf.raw_ops.Switch(data=a, pred=tf.placeholder(tf.bool, [2]))


TF_SCRIPT = """
import json, sys
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
tf.train.import_meta_graph(sys.argv[1])
print(json.dumps({
    "cond": [[c.name, c.pred.name, c.pivot.name, c.branch,
              sorted((k, v.name) for k, v in c._external_values.items())]
             for c in tf.get_collection("cond_context")],
    "while": [[c.name, c.back_prop, c.pivot.name, [t.name for t in c.loop_enters],
               [t.name for t in c.loop_exits], c.maximum_iterations.name]
              for c in tf.get_collection("while_context")]}))
"""


@pytest.mark.skipif(not TF_PYTHON, reason="TENSORWEAVE_TF_PYTHON does not name a Python with "
                                          "TensorFlow, so TF cannot import the meta graph")
def test_tf_imports_tensorweaves_contexts(tmp_path) -> None:
    build()
    tf.train.export_meta_graph(str(tmp_path / "tw.meta"))
    done = subprocess.run([TF_PYTHON, "-c", TF_SCRIPT, str(tmp_path / "tw.meta")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    external = [["Greater:0", "Greater:0"], ["w:0", "w:0"], ["x:0", "x:0"]]
    assert got["cond"] == [["pick/cond_text", "Greater:0", "pick/If", 1, external],
                           ["pick/cond_text_1", "Greater:0", "pick/If", 0, external]]
    assert got["while"] == [["loop/while_context", False, "loop/While",
                             ["loop/iteration_counter:0", "i0:0", "s0:0"],
                             ["loop/While:0", "loop/While:1", "loop/While:2"],
                             "loop/maximum_iterations:0"]]
