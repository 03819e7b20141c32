"""parse_example / parse_single_example: values and dtypes against the Examples written,
defaults, VarLenFeature as SparseTensor, static shapes, and TF's construction and run-time
errors."""

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


def example(**features: object) -> bytes:
    """A serialized Example: ints -> int64_list, floats -> float_list, bytes -> bytes_list."""
    ex = tw.train.Example()
    for key, values in features.items():
        feature = ex.features.feature[key]
        first = values[0] if values else None  # type: ignore[index]
        if isinstance(first, bytes):
            feature.bytes_list.value.extend(values)  # type: ignore[arg-type]
        elif isinstance(first, float):
            feature.float_list.value.extend(values)  # type: ignore[arg-type]
        else:
            feature.int64_list.value.extend(values)  # type: ignore[arg-type]
    return ex.SerializeToString()


def run(fetches: object, feed: dict | None = None) -> object:
    with tw.Session() as s:
        return s.run(fetches, feed)


def test_parse_single_example_dense_values_dtypes_and_shapes() -> None:
    data = example(ids=[3, 4, 5, 6], score=[0.5], name=[b"ab"])
    parsed = tw.parse_single_example(data, {
        "ids": tw.io.FixedLenFeature([2, 2], tw.int64),
        "score": tw.io.FixedLenFeature([], tw.float32),
        "name": tw.io.FixedLenFeature([1], tw.string),
        "missing": tw.io.FixedLenFeature([2], tw.float32, default_value=[1.0, 2.0]),
        "label": tw.FixedLenFeature((), tw.int64, default_value=-1),
    })
    assert parsed["ids"].shape == tw.TensorShape([2, 2]) and parsed["ids"].dtype == tw.int64
    assert parsed["score"].shape == tw.TensorShape([]) and parsed["name"].dtype == tw.string
    got = run(parsed)
    np.testing.assert_array_equal(got["ids"], [[3, 4], [5, 6]])
    assert got["ids"].dtype == np.int64
    assert got["score"] == np.float32(0.5) and got["score"].dtype == np.float32
    assert list(got["name"]) == [b"ab"]
    np.testing.assert_array_equal(got["missing"], np.array([1, 2], np.float32))
    assert got["missing"].dtype == np.float32 and got["label"] == -1


def test_var_len_features_are_sparse_tensors() -> None:
    data = tw.placeholder(tw.string, [])
    parsed = tw.io.parse_single_example(data, {"v": tw.io.VarLenFeature(tw.int64),
                                              "w": tw.VarLenFeature(tw.string)})
    assert isinstance(parsed["v"], tw.SparseTensor)
    assert parsed["v"].indices.shape.as_list() == [None, 1]
    got = run(parsed, {data: example(v=[7, 8, 9])})
    np.testing.assert_array_equal(got["v"].indices, [[0], [1], [2]])
    np.testing.assert_array_equal(got["v"].values, [7, 8, 9])
    np.testing.assert_array_equal(got["v"].dense_shape, [3])
    assert got["w"].indices.shape == (0, 1) and list(got["w"].dense_shape) == [0]


def test_parse_example_batches() -> None:
    batch = [example(x=[1.0, 2.0], tags=[b"a"]), example(x=[3.0, 4.0]),
             example(x=[5.0, 6.0], tags=[b"b", b"c", b"d"])]
    parsed = tw.io.parse_example(batch, {"x": tw.io.FixedLenFeature([2], tw.float32),
                                         "tags": tw.io.VarLenFeature(tw.string),
                                         "k": tw.io.FixedLenFeature([], tw.int64,
                                                                    default_value=0)})
    assert parsed["x"].shape == tw.TensorShape([3, 2])
    assert parsed["tags"].indices.shape.as_list() == [None, 2]
    got = run(parsed)
    np.testing.assert_array_equal(got["x"], np.arange(1, 7, dtype=np.float32).reshape(3, 2))
    np.testing.assert_array_equal(got["tags"].indices, [[0, 0], [2, 0], [2, 1], [2, 2]])
    assert list(got["tags"].values) == [b"a", b"b", b"c", b"d"]
    np.testing.assert_array_equal(got["tags"].dense_shape, [3, 3])
    np.testing.assert_array_equal(got["k"], [0, 0, 0])
    empty = run(tw.parse_example(tw.constant([], dtype=tw.string),
                                 {"x": tw.io.FixedLenFeature([2], tw.float32)}))
    assert empty["x"].shape == (0, 2)


def test_fixed_len_sequence_features_are_padded_to_the_longest() -> None:
    batch = [example(a=[1, 2, 3, 4], s=[b"x"]), example(b=[0.5]),
             example(a=[5, 6], s=[b"y", b"z"], b=[1.0, 2.0, 3.0])]
    parsed = tw.io.parse_example(batch, {
        "a": tw.io.FixedLenSequenceFeature([2], tw.int64, allow_missing=True,
                                           default_value=-1),
        "b": tw.io.FixedLenSequenceFeature([], tw.float32, allow_missing=True),
        "s": tw.io.FixedLenSequenceFeature([1], tw.string, allow_missing=True)})
    assert parsed["a"].shape.as_list() == [3, None, 2] and parsed["a"].dtype == tw.int64
    assert parsed["b"].shape.as_list() == [3, None]
    got = run(parsed)
    np.testing.assert_array_equal(got["a"], [[[1, 2], [3, 4]], [[-1, -1], [-1, -1]],
                                             [[5, 6], [-1, -1]]])
    assert got["a"].dtype == np.int64
    np.testing.assert_array_equal(got["b"], np.array([[0, 0, 0], [0.5, 0, 0], [1, 2, 3]],
                                                     np.float32))
    assert got["b"].dtype == np.float32
    assert got["s"].tolist() == [[[b"x"], [b""]], [[b""], [b""]], [[b"y"], [b"z"]]]
    single = tw.parse_single_example(example(a=[1, 2, 3, 4]), {
        "a": tw.io.FixedLenSequenceFeature([2], tw.int64, allow_missing=True)})
    assert single["a"].shape.as_list() == [None, 2]
    np.testing.assert_array_equal(run(single)["a"], [[1, 2], [3, 4]])
    empty = tw.parse_single_example(example(), {
        "a": tw.io.FixedLenSequenceFeature([2], tw.int64, allow_missing=True)})
    assert run(empty)["a"].shape == (0, 2)


def test_fixed_len_sequence_feature_errors() -> None:
    batch = [example(a=[1, 2]), example(a=[1, 2, 3]), example(a=[1.0, 2.0])]
    spec = {"a": tw.io.FixedLenSequenceFeature([2], tw.int64, allow_missing=True)}
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"^Name: in1, Key: a, Index: 1\.  Number of int64 values is not a "
                             r"multiple of stride length\. Saw 3 values but output shape is: "
                             r"\[\?,2\]"):
        run(tw.parse_example(batch[:2], spec, example_names=["in0", "in1"]))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"^Name: <unknown>, Key: a, Index: 1\.  Data types don't match\. "
                             r"Expected type: int64"):
        run(tw.parse_example([batch[0], batch[2]], spec))
    with pytest.raises(ValueError, match="FixedLenSequenceFeature requires allow_missing to "
                                         "be True"):
        tw.parse_example(batch, {"a": tw.io.FixedLenSequenceFeature([2], tw.int64)})
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 0 elements"):
        tw.parse_example(batch, {"a": tw.io.FixedLenSequenceFeature(
            [2], tw.int64, allow_missing=True, default_value=[])})
    with pytest.raises(ValueError, match="dense_shapes\\[0\\] has unknown rank or unknown "
                                         "inner dimensions"):
        tw.raw_ops.ParseExample(serialized=[b""], names=[], sparse_keys=[], dense_keys=["a"],
                                dense_defaults=[tw.constant(0, tw.int64)], Nsparse=0, Ndense=1,
                                sparse_types=[], Tdense=[tw.int64],
                                dense_shapes=[[None, None]])


@pytest.mark.parametrize(("data", "features", "message"), [
    (example(a=[1]), {"b": tw.io.FixedLenFeature([], tw.int64)},
     r"^Name: <unknown>, Feature: b \(data type: int64\) is required but could not be found\."),
    (example(a=[1, 2, 3]), {"a": tw.io.FixedLenFeature([2], tw.int64)},
     r"^Name: <unknown>, Key: a, Index: 0\.  Number of int64 values != expected\.  "
     r"Values size: 3 but output shape: \[2\]"),
    (example(a=[1.0]), {"a": tw.io.FixedLenFeature([], tw.int64)},
     r"Key: a, Index: 0\.  Data types don't match\. Data type: float but expected type: "
     r"int64"),
    (example(a=[b"x"]), {"a": tw.io.VarLenFeature(tw.float32)},
     r"Key: a, Index: 0\.  Data types don't match\. Expected type: float, Actual type: "
     r"string"),
    (b"\x0a\x07garbage", {"a": tw.io.VarLenFeature(tw.float32)},
     r"^Could not parse example input, value: '"),
])
def test_run_time_errors_name_the_feature(data: bytes, features: dict, message: str) -> None:
    parsed = tw.parse_single_example(data, features, name="parse")
    with pytest.raises(errors.InvalidArgumentError, match=message) as info:
        run(parsed)
    assert "[[node parse/ParseSingleExample (op: ParseSingleExample)" in str(info.value)


def test_scalar_features_batch_in_a_dataset() -> None:
    # the outputs of one Example's scalar features are arrays (a 0-d string one too), which
    # Dataset.batch stacks
    records = [example(t=[b"ab"], n=[1]), example(t=[b"c"], n=[2])]
    dataset = tw.data.Dataset.from_tensor_slices(records).map(
        lambda r: tw.parse_single_example(r, {"t": tw.io.FixedLenFeature([], tw.string),
                                              "n": tw.io.FixedLenFeature([], tw.int64)}))
    got = run(tw.data.make_one_shot_iterator(dataset.batch(2)).get_next())
    assert list(got["t"]) == [b"ab", b"c"] and list(got["n"]) == [1, 2]


def test_merged_bytes_parse_as_protobuf_merges_them() -> None:
    # two Examples back to back are one merged Example: the later entry of a key wins, and an
    # unknown field (9, varint) is skipped; TF 2.21 gives a=2, b=5 for both parsers
    data = example(a=[1], b=[5]) + example(a=[2]) + b"\x48\x01"
    parsed = tw.parse_example([data], {"a": tw.io.FixedLenFeature([], tw.int64),
                                       "b": tw.io.FixedLenFeature([], tw.int64)})
    single = tw.parse_single_example(data, {"a": tw.io.VarLenFeature(tw.int64)})
    got, got_single = run((parsed, single))
    assert list(got["a"]) == [2] and list(got["b"]) == [5]
    assert list(got_single["a"].values) == [2]


def test_batch_errors_name_the_example() -> None:
    batch = [example(a=[1]), example(b=[2])]
    parsed = tw.parse_example(batch, {"a": tw.io.FixedLenFeature([], tw.int64)},
                              example_names=["first", "second"])
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"^Name: second, Feature: a \(data type: int64\) is required"):
        run(parsed)


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="Missing: features was"):
        tw.parse_single_example(b"", {})
    with pytest.raises(ValueError, match="First dimension of shape for feature a unknown. "
                                         "Consider using FixedLenSequenceFeature."):
        tw.parse_single_example(b"", {"a": tw.io.FixedLenFeature([None], tw.int64)})
    with pytest.raises(ValueError, match="All dimensions of shape for feature a need to be"):
        tw.parse_single_example(b"", {"a": tw.io.FixedLenFeature([1, None], tw.int64)})
    with pytest.raises(TypeError, match="Unsupported dtype int32 for feature a"):
        tw.parse_single_example(b"", {"a": tw.io.FixedLenFeature([], tw.int32)})
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 1 elements to shape"):
        tw.parse_single_example(b"", {"a": tw.io.FixedLenFeature([3], tw.int64,
                                                                  default_value=1)})
    with pytest.raises(ValueError, match="Invalid feature a"):
        tw.parse_single_example(b"", {"a": (tw.int64,)})
    with pytest.raises(ValueError, match="must be a scalar"):
        tw.parse_single_example([b"", b""], {"a": tw.io.VarLenFeature(tw.int64)})
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
        tw.parse_example(b"", {"a": tw.io.VarLenFeature(tw.int64)})
    assert tw.io.FixedLenFeature([1], tw.int64) == tw.io.FixedLenFeature([1], tw.int64, None)
    assert tw.raw_ops.ParseExample is not None and tw.raw_ops.ParseSingleExample is not None


def test_parses_on_a_remote_task() -> None:
    with LocalCluster({"worker": 1}) as cluster:
        with tw.device("/job:worker/task:0/cpu:0"):
            parsed = tw.parse_single_example(example(a=[1, 2], s=[b"z"]), {
                "a": tw.io.FixedLenFeature([2], tw.int64),
                "s": tw.io.VarLenFeature(tw.string)})
        with tw.Session(cluster.target("worker", 0)) as sess:
            got = sess.run(parsed)
    np.testing.assert_array_equal(got["a"], [1, 2])
    assert list(got["s"].values) == [b"z"]
