"""``input_layer`` (columns sorted by name, widths, variable names, cols_to_vars, a model
trained through it), ``linear_model`` (weights x features + bias against numpy, variable names)
and ``make_parse_example_spec``; TF's errors for bad column lists."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw

fc = tw.feature_column

PRICE = fc.numeric_column("price")
SIZE = fc.numeric_column("size", shape=(2,))
COLOR = fc.categorical_column_with_vocabulary_list("color", ["R", "G", "B"])
FEATURES = {
    "price": np.array([1.0, 20.0, 300.0], np.float32),
    "size": np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32),
    "color": np.array([["R"], ["B"], ["G"]]),
}


def run(*fetches: object) -> list:
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        return sess.run(list(fetches))


def test_input_layer_concatenates_columns_sorted_by_name() -> None:
    bucketized = fc.bucketized_column(PRICE, [10.0, 100.0])
    columns = [SIZE, fc.indicator_column(COLOR), bucketized, PRICE]
    out = fc.input_layer(FEATURES, columns)
    assert out.shape.as_list() == [3, 9]
    # color_indicator (3), price (1), price_bucketized (3), size (2)
    expected = np.array([[1, 0, 0, 1, 1, 0, 0, 1, 2],
                         [0, 0, 1, 20, 0, 1, 0, 3, 4],
                         [0, 1, 0, 300, 0, 0, 1, 5, 6]], np.float32)
    np.testing.assert_array_equal(run(out)[0], expected)


def test_input_layer_variable_names_and_cols_to_vars() -> None:
    embedded = fc.embedding_column(COLOR, 4)
    cols_to_vars: dict = {}
    cols_to_output: dict = {}
    out = fc.input_layer(FEATURES, [PRICE, embedded], cols_to_vars=cols_to_vars,
                         cols_to_output_tensors=cols_to_output)
    (variable,) = tw.global_variables()
    assert variable.name == "input_layer/color_embedding/embedding_weights:0"
    assert variable.shape.as_list() == [3, 4]
    assert tw.get_collection(tw.GraphKeys.MODEL_VARIABLES) == [variable]
    assert cols_to_vars == {PRICE: [], embedded: [variable]}
    assert out.shape.as_list() == [3, 5]
    value, table, price_out = run(out, variable, cols_to_output[PRICE])
    np.testing.assert_allclose(value[:, :4], table[[0, 2, 1]])
    np.testing.assert_array_equal(price_out, [[1.0], [20.0], [300.0]])
    fc.input_layer(FEATURES, [embedded], weight_collections=["mine"], trainable=False)
    second = tw.get_collection("mine")
    assert [v.name for v in second] == ["input_layer_1/color_embedding/embedding_weights:0"]
    assert second[0] not in tw.trainable_variables()


def test_model_trained_through_input_layer_lowers_its_loss() -> None:
    rng = np.random.default_rng(3)
    colors = rng.choice(["R", "G", "B"], size=(64, 1))
    x = rng.standard_normal(64).astype(np.float32)
    target = (x * 2.0 + (colors[:, 0] == "G") * 3.0).astype(np.float32).reshape(-1, 1)
    features = {"x": x, "color": colors}
    net = fc.input_layer(features, [fc.numeric_column("x"), fc.embedding_column(COLOR, 2)])
    prediction = tw.layers.dense(tw.layers.dense(net, 8, activation=tw.nn.relu), 1)
    loss = tw.reduce_mean(tw.square(prediction - target))
    train = tw.train.AdamOptimizer(0.05).minimize(loss)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(150):
            sess.run(train)
        last = sess.run(loss)
    assert last < first * 0.1


def test_linear_model_is_weights_times_features_plus_bias() -> None:
    bucketized = fc.bucketized_column(PRICE, [10.0, 100.0])
    cols_to_vars: dict = {}
    out = fc.linear_model(FEATURES, [SIZE, COLOR, bucketized], units=2,
                          cols_to_vars=cols_to_vars)
    names = sorted(v.name for v in tw.global_variables())
    assert names == ["linear_model/bias_weights:0", "linear_model/color/weights:0",
                     "linear_model/price_bucketized/weights:0", "linear_model/size/weights:0"]
    assert set(cols_to_vars) == {SIZE, COLOR, bucketized, "bias"}
    rng = np.random.default_rng(5)
    values = {}
    assigns = []
    for key, (variable,) in cols_to_vars.items():
        values[key] = rng.standard_normal(variable.shape.as_list()).astype(np.float32)
        assigns.append(tw.assign(variable, values[key]))
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        assert np.all(sess.run(out) == 0)  # all weights start at zero
        sess.run(assigns)
        got = sess.run(out)
    color_ids = [0, 2, 1]
    bucket_ids = [0, 1, 2]
    expected = (FEATURES["size"] @ values[SIZE] + values[COLOR][color_ids]
                + values[bucketized][bucket_ids] + values["bias"])
    np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_linear_model_sparse_combiner(combiner: str) -> None:
    tags = fc.categorical_column_with_identity("tags", 4)
    features = {"tags": np.array([[0, 2, 3], [1, -1, -1]], np.int64)}
    cols_to_vars: dict = {}
    out = fc.linear_model(features, [tags], sparse_combiner=combiner, cols_to_vars=cols_to_vars)
    weights = np.array([[1.0], [2.0], [4.0], [8.0]], np.float32)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        sess.run(tw.assign(cols_to_vars[tags][0], weights))
        got = sess.run(out)
    scale = {"sum": 1.0, "mean": 1 / 3, "sqrtn": 1 / np.sqrt(3)}[combiner]
    np.testing.assert_allclose(got, [[13.0 * scale], [2.0]], rtol=1e-6)


def test_bad_column_lists_raise_tf_errors() -> None:
    with pytest.raises(ValueError, match="Items of feature_columns must be a _DenseColumn"):
        fc.input_layer(FEATURES, [COLOR])
    with pytest.raises(ValueError, match="feature_columns must not be empty"):
        fc.input_layer(FEATURES, [])
    with pytest.raises(ValueError, match="Expected feature_columns to be iterable, found dict"):
        fc.input_layer(FEATURES, {"a": PRICE})
    with pytest.raises(ValueError, match="Items of feature_columns must be a _FeatureColumn"):
        fc.linear_model(FEATURES, ["price"])
    with pytest.raises(ValueError, match="Duplicate feature column name found"):
        fc.input_layer(FEATURES, [PRICE, fc.numeric_column("price", shape=3)])
    features = dict(FEATURES, size=np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match=r"Batch size \(first dimension\) of each feature must "
                                         r"be same. Batch size of columns \(price, size\)"):
        fc.input_layer(features, [PRICE, SIZE])


def test_make_parse_example_spec_merges_columns() -> None:
    spec = fc.make_parse_example_spec([fc.bucketized_column(PRICE, [1.0]), PRICE,
                                       fc.embedding_column(COLOR, 2)])
    assert spec == {"price": tw.io.FixedLenFeature((1,), tw.float32, None),
                    "color": tw.io.VarLenFeature(tw.string)}
    with pytest.raises(ValueError, match="feature_columns contain different parse_spec for "
                                         "key price"):
        fc.make_parse_example_spec([PRICE, fc.numeric_column("price", shape=2)])
    with pytest.raises(ValueError, match="All feature_columns must be _FeatureColumn"):
        fc.make_parse_example_spec(["price"])


def test_input_layer_over_parse_example_with_the_columns_spec() -> None:
    columns = [PRICE, fc.indicator_column(COLOR)]
    examples = [
        tw.train.Example(features={"feature": {
            "price": {"float_list": {"value": [2.5]}},
            "color": {"bytes_list": {"value": [b"G", b"B"]}}}}),
        tw.train.Example(features={"feature": {
            "price": {"float_list": {"value": [-1.0]}}}}),
    ]
    serialized = [e.SerializeToString() for e in examples]
    features = tw.parse_example(serialized, fc.make_parse_example_spec(columns))
    out = fc.input_layer(features, columns)
    np.testing.assert_array_equal(run(out)[0], [[0, 1, 1, 2.5], [0, 0, 0, -1.0]])
