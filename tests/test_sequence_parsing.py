"""parse_single_sequence_example / parse_sequence_example: context and feature-list values
and dtypes against hand-built SequenceExamples, padding and lengths, sparse feature lists,
static shapes, TF's construction and run-time errors, and a TFRecord file of SequenceExamples
read through a dataset with padded_batch."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.train.local_cluster import LocalCluster


@pytest.fixture(autouse=True)
def fresh_graph():
    with tw.Graph().as_default() as g:
        yield g


def fill(feature: tw.train.Feature, values: list) -> None:
    """ints -> int64_list, floats -> float_list, bytes -> bytes_list; None: no kind set."""
    if values is None:
        return
    first = values[0] if values else 0
    if isinstance(first, bytes):
        feature.bytes_list.value.extend(values)
    elif isinstance(first, float):
        feature.float_list.value.extend(values)
    else:
        feature.int64_list.value.extend(values)


def sequence_example(context: dict | None = None, lists: dict | None = None) -> bytes:
    """A serialized SequenceExample: `lists` maps a key to its steps' values."""
    ex = tw.train.SequenceExample()
    for key, values in (context or {}).items():
        fill(ex.context.feature[key], values)
    for key, steps in (lists or {}).items():
        feature_list = ex.feature_lists.feature_list[key]
        for step in steps:
            fill(feature_list.feature.add(), step)
    return ex.SerializeToString()


def run(fetches: object, feed: dict | None = None) -> object:
    with tw.Session() as s:
        return s.run(fetches, feed)


CONTEXT = {"label": tw.io.FixedLenFeature([], tw.int64),
           "weights": tw.io.FixedLenFeature([2], tw.float32, default_value=[0.5, 1.5]),
           "tags": tw.io.VarLenFeature(tw.string)}
SEQUENCE = {"frames": tw.io.FixedLenSequenceFeature([2], tw.float32),
            "words": tw.io.FixedLenSequenceFeature([], tw.string, allow_missing=True),
            "ids": tw.io.VarLenFeature(tw.int64)}


def test_single_sequence_example_values_dtypes_and_shapes() -> None:
    data = sequence_example(
        {"label": [7], "tags": [b"a", b"b"]},
        {"frames": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "words": [[b"x"], [b"y"]],
         "ids": [[1, 2], [], [3], None]})
    context, sequence = tw.io.parse_single_sequence_example(data, CONTEXT, SEQUENCE)
    assert context["label"].shape == tw.TensorShape([])
    assert context["weights"].shape == tw.TensorShape([2])
    assert sequence["frames"].shape.as_list() == [None, 2]
    assert sequence["frames"].dtype == tw.float32 and sequence["words"].dtype == tw.string
    assert sequence["ids"].indices.shape.as_list() == [None, 2]
    assert sequence["ids"].dense_shape.shape.as_list() == [2]
    got_context, got = run((context, sequence))
    assert got_context["label"] == 7 and got_context["label"].dtype == np.int64
    np.testing.assert_array_equal(got_context["weights"], np.array([0.5, 1.5], np.float32))
    assert got_context["weights"].dtype == np.float32
    np.testing.assert_array_equal(got_context["tags"].indices, [[0], [1]])
    assert list(got_context["tags"].values) == [b"a", b"b"]
    np.testing.assert_array_equal(got["frames"],
                                  np.arange(1, 7, dtype=np.float32).reshape(3, 2))
    assert got["frames"].dtype == np.float32
    assert got["words"].tolist() == [b"x", b"y"]
    # steps with no values (and one with no kind set) still count as steps
    np.testing.assert_array_equal(got["ids"].indices, [[0, 0], [0, 1], [2, 0]])
    np.testing.assert_array_equal(got["ids"].values, np.array([1, 2, 3], np.int64))
    np.testing.assert_array_equal(got["ids"].dense_shape, [4, 2])


def test_missing_allowed_lists_and_sparse_features_are_empty() -> None:
    data = tw.placeholder(tw.string, [])
    _, sequence = tw.parse_single_sequence_example(
        data, None, {"words": SEQUENCE["words"], "ids": SEQUENCE["ids"]}, example_name="e")
    got = run(sequence, {data: sequence_example({"unrelated": [1]})})
    assert got["words"].shape == (0,) and got["words"].dtype == object
    assert got["ids"].indices.shape == (0, 2)
    np.testing.assert_array_equal(got["ids"].dense_shape, [0, 0])


def test_concatenated_protos_merge_as_protobuf_does() -> None:
    # a later map entry replaces an earlier one, for feature lists as for context features
    data = (sequence_example({"label": [1]}, {"frames": [[1.0, 2.0]], "ids": [[1]]})
            + sequence_example({"label": [2]}, {"frames": [[3.0, 4.0], [5.0, 6.0]]}))
    context, sequence = tw.parse_single_sequence_example(data, CONTEXT, SEQUENCE)
    got_context, got = run((context, sequence))
    assert got_context["label"] == 2
    np.testing.assert_array_equal(got["frames"], [[3, 4], [5, 6]])
    np.testing.assert_array_equal(got["ids"].values, [1])


def test_batch_pads_dense_lists_and_reports_lengths() -> None:
    batch = [sequence_example({"label": [1]}, {"frames": [[1.0, 2.0]], "ids": [[5]]}),
             sequence_example({"label": [2], "weights": [9.0, 8.0], "tags": [b"t"]},
                              {"frames": [[3.0, 4.0], [5.0, 6.0], [7.0, 8.0]],
                               "words": [[b"p"], [b"q"]], "ids": [[], [6, 7, 8]]}),
             sequence_example({"label": [3]}, {"frames": []})]
    context, sequence, lengths = tw.io.parse_sequence_example(batch, CONTEXT, SEQUENCE)
    assert context["label"].shape == tw.TensorShape([3])
    assert context["weights"].shape == tw.TensorShape([3, 2])
    assert sequence["frames"].shape.as_list() == [3, None, 2]
    assert sequence["ids"].indices.shape.as_list() == [None, 3]
    assert sorted(lengths) == ["frames", "words"]
    assert lengths["frames"].shape == tw.TensorShape([3]) and lengths["frames"].dtype == tw.int64
    got_context, got, got_lengths = run((context, sequence, lengths))
    np.testing.assert_array_equal(got_context["label"], [1, 2, 3])
    np.testing.assert_array_equal(got_context["weights"],
                                  np.array([[0.5, 1.5], [9, 8], [0.5, 1.5]], np.float32))
    np.testing.assert_array_equal(got_context["tags"].indices, [[1, 0]])
    np.testing.assert_array_equal(got_context["tags"].dense_shape, [3, 1])
    frames = np.zeros((3, 3, 2), np.float32)
    frames[0, 0] = [1, 2]
    frames[1] = [[3, 4], [5, 6], [7, 8]]
    np.testing.assert_array_equal(got["frames"], frames)
    assert got["frames"].dtype == np.float32
    assert got["words"].tolist() == [[b"", b""], [b"p", b"q"], [b"", b""]]
    np.testing.assert_array_equal(got_lengths["frames"], [1, 3, 0])
    np.testing.assert_array_equal(got_lengths["words"], [0, 2, 0])
    assert got_lengths["frames"].dtype == np.int64
    np.testing.assert_array_equal(got["ids"].indices,
                                  [[0, 0, 0], [1, 1, 0], [1, 1, 1], [1, 1, 2]])
    np.testing.assert_array_equal(got["ids"].values, [5, 6, 7, 8])
    np.testing.assert_array_equal(got["ids"].dense_shape, [3, 2, 3])


def test_empty_batch() -> None:
    context, sequence, lengths = tw.parse_sequence_example(
        tw.constant([], dtype=tw.string), CONTEXT, SEQUENCE)
    got_context, got, got_lengths = run((context, sequence, lengths))
    assert got_context["weights"].shape == (0, 2) and got["frames"].shape == (0, 0, 2)
    assert got_lengths["frames"].shape == (0,)
    np.testing.assert_array_equal(got["ids"].dense_shape, [0, 0, 0])


@pytest.mark.parametrize(("data", "message"), [
    (sequence_example({}, {"frames": [[1.0, 2.0]]}),
     r"^Name: <unknown>, Feature: label \(data type: int64\) is required but could not be "
     r"found\."),
    (sequence_example({"label": [1, 2]}, {"frames": []}),
     r"^Name: <unknown>, Key: label, Index: 0\.  Number of int64 values != expected\.  "
     r"Values size: 2 but output shape: \[\]"),
    (sequence_example({"label": [1.0]}, {"frames": []}),
     r"Key: label, Index: 0\.  Data types don't match\. Data type: float but expected type: "
     r"int64"),
    (sequence_example({"label": [1]}),
     r"^Name: <unknown>, Feature list 'frames' is required but could not be found\.  Did you "
     r"mean to include it in feature_list_dense_missing_assumed_empty or "
     r"feature_list_dense_defaults\?"),
    (sequence_example({"label": [1]}, {"frames": [[1.0, 2.0], [3.0]]}),
     r"^Name: <unknown>, Key: frames, Index: 1\.  Number of values != expected\.  values "
     r"size: 1 but output shape: \[2\]"),
    (sequence_example({"label": [1]}, {"frames": [[1.0, 2.0], [3, 4]]}),
     r"^Name: <unknown>, Feature list: frames, Index: 1\.  Data types don't match\. Expected "
     r"type: float"),
    (sequence_example({"label": [1]}, {"frames": [], "ids": [[1], [b"s"]]}),
     r"^Name: <unknown>, Feature list: ids, Index: 1\.  Data types don't match\. Expected "
     r"type: int64"),
    (b"\x12\x07garbage", r"^Invalid protocol message input, example id: <unknown>"),
])
def test_run_time_errors_name_the_feature(data: bytes, message: str) -> None:
    context, sequence = tw.parse_single_sequence_example(data, CONTEXT, SEQUENCE, name="seq")
    with pytest.raises(errors.InvalidArgumentError, match=message) as info:
        run((context, sequence))
    assert "[[node seq/ParseSingleSequenceExample (op: ParseSingleSequenceExample)" in \
        str(info.value)


def test_errors_name_the_example() -> None:
    data = sequence_example({"label": [1]})
    _, sequence = tw.parse_single_sequence_example(data, None, SEQUENCE, example_name="mine")
    with pytest.raises(errors.InvalidArgumentError, match=r"^Name: mine, Feature list 'frames'"):
        run(sequence)
    batch = [sequence_example({"label": [1]}, {"frames": []}),
             sequence_example({"label": [2]}, {"frames": [[1.0]]})]
    _, sequence, _ = tw.parse_sequence_example(batch, CONTEXT, SEQUENCE,
                                               example_names=["first", "second"])
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"^Name: second, Key: frames, Index: 0\.  Number of values"):
        run(sequence)
    _, sequence, _ = tw.parse_sequence_example(batch, CONTEXT, SEQUENCE, example_names=["one"])
    with pytest.raises(errors.InvalidArgumentError, match="example_names must be empty or"):
        run(sequence)


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="Missing features."):
        tw.parse_single_sequence_example(b"", {}, None)
    with pytest.raises(ValueError, match="Unsupported FixedLenFeature"):
        tw.parse_single_sequence_example(b"", None, {"a": tw.io.FixedLenFeature([], tw.int64)})
    with pytest.raises(ValueError, match="Unsupported FixedLenSequenceFeature"):
        tw.parse_sequence_example([b""], {"a": tw.io.FixedLenSequenceFeature([], tw.int64)})
    with pytest.raises(ValueError, match=r"Value feature_list.dense_defaults\[a\] must be None"):
        tw.parse_single_sequence_example(b"", None, {"a": tw.io.FixedLenSequenceFeature(
            [], tw.int64, allow_missing=True, default_value=0)})
    with pytest.raises(ValueError, match="All dimensions of shape for feature a need to be"):
        tw.parse_single_sequence_example(b"", None, {
            "a": tw.io.FixedLenSequenceFeature([None], tw.int64)})
    with pytest.raises(TypeError, match="Unsupported dtype int32 for feature a"):
        tw.parse_single_sequence_example(b"", None, {
            "a": tw.io.FixedLenSequenceFeature([], tw.int32)})
    with pytest.raises(ValueError, match="Input serialized must be a scalar"):
        tw.parse_single_sequence_example([b""], None, {"a": tw.io.VarLenFeature(tw.int64)})
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
        tw.parse_sequence_example(b"", None, {"a": tw.io.VarLenFeature(tw.int64)})
    feature = tw.io.FixedLenSequenceFeature([2], tw.float32)
    assert feature.allow_missing is False and feature.default_value is None
    assert tw.FixedLenSequenceFeature is tw.io.FixedLenSequenceFeature
    assert tw.parse_single_sequence_example is tw.io.parse_single_sequence_example
    assert tw.parse_sequence_example is tw.io.parse_sequence_example
    assert tw.raw_ops.ParseSingleSequenceExample is not None
    assert tw.raw_ops.ParseSequenceExample is not None


def test_tfrecord_dataset_of_sequence_examples_with_padded_batch(tmp_path) -> None:
    path = str(tmp_path / "sequences.tfrecord")
    lengths = [2, 4, 1, 3]
    with tw.io.TFRecordWriter(path) as writer:
        for i, n in enumerate(lengths):
            writer.write(sequence_example({"label": [i]},
                                          {"tokens": [[10 * i + t] for t in range(n)]}))

    def parse(record: tw.Tensor) -> dict:
        context, sequence = tw.io.parse_single_sequence_example(
            record, {"label": tw.io.FixedLenFeature([], tw.int64)},
            {"tokens": tw.io.FixedLenSequenceFeature([], tw.int64)})
        return {"label": context["label"], "tokens": sequence["tokens"]}

    dataset = tw.data.TFRecordDataset(path).map(parse).padded_batch(
        2, padded_shapes={"label": [], "tokens": [None]})
    batch = tw.data.make_one_shot_iterator(dataset).get_next()
    got = []
    with tw.Session() as sess:
        for _ in range(2):
            got.append(sess.run(batch))
        with pytest.raises(errors.OutOfRangeError):
            sess.run(batch)
    for b, part in enumerate(got):
        expected = np.zeros((2, max(lengths[2 * b:2 * b + 2])), np.int64)
        for row, i in enumerate((2 * b, 2 * b + 1)):
            expected[row, :lengths[i]] = [10 * i + t for t in range(lengths[i])]
        np.testing.assert_array_equal(part["tokens"], expected)
        np.testing.assert_array_equal(part["label"], [2 * b, 2 * b + 1])
        assert part["tokens"].dtype == np.int64


def test_parses_on_a_remote_task() -> None:
    batch = [sequence_example({"label": [4]}, {"frames": [[1.0, 2.0]], "ids": [[3]]})]
    with LocalCluster({"worker": 1}) as cluster:
        with tw.device("/job:worker/task:0/cpu:0"):
            parsed = tw.parse_sequence_example(batch, CONTEXT, SEQUENCE)
        with tw.Session(cluster.target("worker", 0)) as sess:
            context, sequence, lengths = sess.run(parsed)
    np.testing.assert_array_equal(context["label"], [4])
    np.testing.assert_array_equal(sequence["frames"], [[[1.0, 2.0]]])
    np.testing.assert_array_equal(lengths["words"], [0])
    np.testing.assert_array_equal(sequence["ids"].indices, [[0, 0, 0]])
