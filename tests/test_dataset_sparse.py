"""tf.data with `SparseTensor` components: from_tensor_slices / from_tensors of sparse tensors,
map functions returning them (parse_single_example with VarLenFeature from a TFRecord file),
batching of ragged sparse rows (dense shape = the batch's largest), unbatch,
dense_to_sparse_batch, pass-through transformations, iterator types and classes, sparse
features through an Estimator input_fn, and TF's errors for what is not supported."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.engine.distributed import messages
from tensorweave.plugins.grpc import wire
from tensorweave.plugins.kernels.dataset import check_description


@pytest.fixture(autouse=True)
def fresh_graph():
    with tw.Graph().as_default() as g:
        yield g


def elements(dataset: tw.data.Dataset) -> list:
    nxt = dataset.make_one_shot_iterator().get_next()
    out = []
    with tw.Session() as s:
        while True:
            try:
                out.append(s.run(nxt))
            except errors.OutOfRangeError:
                return out


def to_dense(value: tw.SparseTensorValue) -> np.ndarray:
    dense = np.zeros(value.dense_shape, dtype=value.values.dtype)
    for index, v in zip(value.indices, value.values):
        dense[tuple(index)] = v
    return dense


def assert_sparse(got: tw.SparseTensorValue, dense: np.ndarray) -> None:
    assert got.indices.dtype == np.int64 and got.dense_shape.dtype == np.int64
    assert got.values.dtype == dense.dtype
    np.testing.assert_array_equal(got.dense_shape, dense.shape)
    np.testing.assert_array_equal(to_dense(got), dense)


DENSE = np.array([[1, 0, 2, 0], [0, 0, 0, 0], [0, 3, 0, 4]], dtype=np.int32)


def sparse_of(dense: np.ndarray) -> tw.SparseTensor:
    idx = np.argwhere(dense != 0)
    return tw.SparseTensor(idx, dense[tuple(idx.T)], dense.shape)


def test_from_tensor_slices_gives_sparse_rows_with_types_shapes_classes() -> None:
    dataset = tw.data.Dataset.from_tensor_slices((sparse_of(DENSE), np.arange(3)))
    assert dataset.output_types == (tw.int32, tw.int64)
    assert dataset.output_shapes == (tw.TensorShape([4]), tw.TensorShape([]))
    assert dataset.output_classes == (tw.SparseTensor, tw.Tensor)
    assert tw.data.get_output_classes(dataset) == (tw.SparseTensor, tw.Tensor)
    got = elements(dataset)
    assert len(got) == 3
    for i, (row, label) in enumerate(got):
        assert isinstance(row, tw.SparseTensorValue)
        assert_sparse(row, DENSE[i])
        assert label == i


def test_from_tensors_and_sparse_tensor_value() -> None:
    value = tw.SparseTensorValue([[0, 1], [1, 0]], np.array([5.0, 6.0], np.float32), [2, 3])
    dataset = tw.data.Dataset.from_tensors(value)
    assert dataset.output_classes is tw.SparseTensor
    assert dataset.output_shapes == tw.TensorShape([2, 3])
    (got,) = elements(dataset)
    assert_sparse(got, np.array([[0, 5, 0], [6, 0, 0]], np.float32))


def test_batch_of_ragged_sparse_rows_takes_the_largest_dense_shape() -> None:
    def ragged(x: tw.Tensor) -> tw.SparseTensor:  # row x: [0, 1, .., x-1], dense shape [x]
        return tw.SparseTensor(tw.reshape(tw.range(x), [-1, 1]), tw.range(x) * 10,
                               tw.reshape(x, [1]))

    dataset = tw.data.Dataset.range(5).map(ragged).batch(3)
    assert dataset.output_classes is tw.SparseTensor
    assert dataset.output_shapes.as_list() == [None, None]
    first, second = elements(dataset)
    assert_sparse(first, np.array([[0, 0], [0, 0], [0, 10]], np.int64))
    assert_sparse(second, np.array([[0, 10, 20, 0], [0, 10, 20, 30]], np.int64))


def test_batch_with_drop_remainder_knows_the_batch_dim_and_mixes_dense() -> None:
    dataset = tw.data.Dataset.from_tensor_slices(
        {"sp": sparse_of(DENSE), "x": np.arange(3.0)}).batch(2, drop_remainder=True)
    assert dataset.output_shapes == {"sp": tw.TensorShape([2, 4]), "x": tw.TensorShape([2])}
    (got,) = elements(dataset)
    assert_sparse(got["sp"], DENSE[:2])
    np.testing.assert_array_equal(got["x"], [0.0, 1.0])


def test_filter_shuffle_repeat_take_cache_pass_sparse_through() -> None:
    dataset = (tw.data.Dataset.from_tensor_slices(sparse_of(DENSE))
               .filter(lambda sp: tw.size(sp.values) > 0)
               .cache().repeat(2).shuffle(4, seed=3).take(3))
    got = elements(dataset)
    assert len(got) == 3
    rows = {tuple(to_dense(g)) for g in got}
    assert rows <= {tuple(DENSE[0]), tuple(DENSE[2])}


def test_unbatch_of_batched_sparse_and_zip_concatenate() -> None:
    sparse = tw.data.Dataset.from_tensor_slices(sparse_of(DENSE))
    dataset = tw.data.Dataset.zip((sparse.batch(2).unbatch(), tw.data.Dataset.range(3)))
    dataset = dataset.concatenate(dataset)
    assert dataset.output_classes == (tw.SparseTensor, tw.Tensor)
    assert dataset.output_shapes[0] == tw.TensorShape([4])
    got = elements(dataset)
    assert len(got) == 6
    for i, (row, n) in enumerate(got):
        assert_sparse(row, DENSE[i % 3])
        assert n == i % 3
    batched = tw.data.Dataset.from_tensor_slices(sparse_of(DENSE)).batch(3)
    assert elements(batched.apply(tw.data.experimental.unbatch()))[2].values.tolist() == [3, 4]


def test_map_takes_and_gives_sparse_tensors() -> None:
    def double(sp: tw.SparseTensor) -> tuple:
        return tw.SparseTensor(sp.indices, sp.values * 2, sp.dense_shape), tw.size(sp.values)

    got = elements(tw.data.Dataset.from_tensor_slices(sparse_of(DENSE)).map(double))
    for i, (row, count) in enumerate(got):
        assert_sparse(row, DENSE[i] * 2)
        assert count == np.count_nonzero(DENSE[i])


def write_examples(path: Path, rows: list[list[bytes]]) -> str:
    with tw.python_io.TFRecordWriter(str(path)) as writer:
        for i, words in enumerate(rows):
            ex = tw.train.Example()
            ex.features.feature["words"].bytes_list.value.extend(words)
            ex.features.feature["label"].int64_list.value.append(i)
            writer.write(ex.SerializeToString())
    return str(path)


ROWS = [[b"a", b"b"], [b"c"], [], [b"d", b"e", b"f"], [b"g"]]


def test_parse_single_example_var_len_feature_batched_from_a_tfrecord_file(
        tmp_path: Path) -> None:
    path = write_examples(tmp_path / "words.tfrecord", ROWS)
    features = {"words": tw.io.VarLenFeature(tw.string),
                "label": tw.io.FixedLenFeature([], tw.int64)}
    dataset = tw.data.TFRecordDataset(path).map(
        lambda record: tw.io.parse_single_example(record, features)).batch(2)
    assert dataset.output_classes == {"words": tw.SparseTensor, "label": tw.Tensor}
    assert dataset.output_types == {"words": tw.string, "label": tw.int64}
    assert dataset.output_shapes["words"].as_list() == [None, None]
    got = elements(dataset)
    assert [b["label"].tolist() for b in got] == [[0, 1], [2, 3], [4]]
    for b, start in zip(got, (0, 2, 4)):
        rows = ROWS[start:start + 2]
        words = b["words"]
        np.testing.assert_array_equal(words.dense_shape, [len(rows), max(map(len, rows))])
        want = [[i, j] for i, r in enumerate(rows) for j in range(len(r))]
        np.testing.assert_array_equal(words.indices.reshape(-1, 2), np.array(want).reshape(-1, 2))
        assert list(words.values) == [w for r in rows for w in r]


def test_dense_to_sparse_batch() -> None:
    dataset = tw.data.Dataset.from_generator(
        lambda: iter([[1, 2], [3], [4, 5, 6]]), tw.int64, [None])
    fixed = dataset.apply(tw.data.experimental.dense_to_sparse_batch(2, [5]))
    assert fixed.output_classes is tw.SparseTensor
    assert fixed.output_shapes.as_list() == [None, 5]
    first, second = elements(fixed)
    assert_sparse(first, np.array([[1, 2, 0, 0, 0], [3, 0, 0, 0, 0]]))
    assert_sparse(second, np.array([[4, 5, 6, 0, 0]]))
    widest = elements(dataset.apply(tw.data.experimental.dense_to_sparse_batch(3, [None])))
    assert_sparse(widest[0], np.array([[1, 2, 0], [3, 0, 0], [4, 5, 6]]))
    with pytest.raises(errors.DataLossError, match=r"Input element had shape \(3\) that is "
                                                    r"larger than the row shape \(2\)"):
        elements(dataset.apply(tw.data.experimental.dense_to_sparse_batch(3, [2])))
    with pytest.raises(TypeError, match="single component"):
        tw.data.Dataset.range(3).map(lambda x: (x, x)).apply(
            tw.data.experimental.dense_to_sparse_batch(2, [1]))


def test_reinitializable_iterator_with_sparse_classes() -> None:
    dataset = tw.data.Dataset.from_tensor_slices(sparse_of(DENSE))
    it = tw.data.Iterator.from_structure(tw.int32, tw.TensorShape([4]),
                                         output_classes=tw.SparseTensor)
    assert it.output_classes is tw.SparseTensor and it.output_types == tw.int32
    nxt = it.get_next()
    assert isinstance(nxt, tw.SparseTensor) and nxt.get_shape() == tw.TensorShape([4])
    init = it.make_initializer(dataset)
    with tw.Session() as s:
        s.run(init)
        assert_sparse(s.run(nxt), DENSE[0])
    with pytest.raises(TypeError, match="Expected output classes"):
        it.make_initializer(tw.data.Dataset.from_tensor_slices(DENSE))
    with pytest.raises(TypeError, match="output_classes must be"):
        tw.data.Iterator.from_structure(tw.int32, output_classes=int)


def test_unsupported_combinations_fail_with_tf_errors() -> None:
    sparse = tw.data.Dataset.from_tensor_slices(sparse_of(DENSE))
    with pytest.raises(TypeError, match="Batching of padded sparse tensors is not currently "
                                        "supported"):
        sparse.padded_batch(2, [4])
    with pytest.raises(ValueError, match="only supported for rank >= 1"):
        tw.data.Dataset.from_tensor_slices(tw.SparseTensor(np.zeros((0, 0), np.int64), [], []))
    rank_one = tw.SparseTensor([[0], [2]], [1, 2], [3])
    with pytest.raises(errors.InvalidArgumentError, match="Rank of input SparseTensor should "
                                                          "be > 1, but saw rank: 1"):
        elements(tw.data.Dataset.from_tensor_slices(rank_one))
    mixed = tw.data.Dataset.range(2).map(lambda x: tw.SparseTensor(
        tw.zeros(tw.stack([x, x + 1]), tw.int64), tw.zeros([x], tw.int64),
        tw.ones([x + 1], tw.int64))).batch(2)
    with pytest.raises(errors.InvalidArgumentError, match=r"Inconsistent shape across "
                       r"SparseTensors: rank prior to SparseTensor\[1\] was: 1 but rank of "
                       r"SparseTensor\[1\] is: 2"):
        elements(mixed)
    with pytest.raises(TypeError, match="different classes"):
        sparse.concatenate(tw.data.Dataset.from_tensor_slices(DENSE))


def test_description_schema_checks_sparse_positions() -> None:
    good = {"kind": "tensor_slices", "components": [0, 1, 2, 3], "sparse": [1]}
    check_description(good, 4, set())
    for bad in ({**good, "sparse": []}, {**good, "sparse": [2]}, {**good, "sparse": [1, 0]},
                {**good, "sparse": "1"}, {"kind": "range", "args": [0, 1, 2], "sparse": [0]}):
        with pytest.raises(ValueError, match="Malformed dataset description"):
            check_description(bad, 4, set())


def test_a_sparse_pipeline_description_travels_over_the_wire() -> None:
    dataset = tw.data.Dataset.from_tensor_slices(sparse_of(DENSE)).map(
        lambda sp: (sp, tw.size(sp.values))).batch(2)
    init = dataset.make_initializable_iterator().initializer
    node = init._engine_node_def
    known = {t.op.name: t.op._engine_node_def for t in init.inputs}
    (back,) = messages.graph_from_wire(wire.decode(wire.encode(
        messages.graph_to_wire([node])).frame()).body, "test", known=known)
    assert back.attr["dataset"] == node.attr["dataset"]
    assert node.attr["dataset"]["input"]["sparse"] == [0]
    assert node.attr["dataset"]["input"]["input"]["sparse"] == [0]


def test_estimator_input_fn_with_sparse_feature_trains_linear_classifier(
        tmp_path: Path) -> None:
    rows = [[b"red"], [b"blue", b"red"], [b"green"], [b"blue"]] * 4
    labels = [int(b"red" in r) for r in rows]
    path = write_examples(tmp_path / "colors.tfrecord", rows)
    features = {"words": tw.io.VarLenFeature(tw.string),
                "label": tw.io.FixedLenFeature([], tw.int64)}

    def input_fn() -> tw.data.Dataset:
        def parse(record: tw.Tensor) -> tuple:
            parsed = tw.io.parse_single_example(record, features)
            return {"color": parsed["words"]}, tw.gather(labels, parsed["label"])

        return tw.data.TFRecordDataset(path).map(parse).repeat(20).batch(8)

    color = tw.feature_column.categorical_column_with_vocabulary_list(
        "color", ["red", "blue", "green"])
    est = tw.estimator.LinearClassifier([tw.feature_column.indicator_column(color)],
                                        model_dir=str(tmp_path / "model"))
    est.train(input_fn, steps=40)
    metrics = est.evaluate(lambda: input_fn().take(2), steps=2)
    assert metrics["accuracy"] == 1.0
    probabilities = [p["probabilities"][1] for p in est.predict(lambda: input_fn().take(1))]
    assert len(probabilities) == 8
    assert all((p > 0.5) == bool(y) for p, y in zip(probabilities, labels[:8]))
