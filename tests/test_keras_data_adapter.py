"""tw.keras.data_adapter: dataset cardinality under TF's rules, dataset and generator batches
and the argument checks' errors."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.keras import data_adapter
from tensorweave.keras.data_adapter import INFINITE, UNKNOWN, cardinality
from tests.keras_support import fresh_graph  # noqa: F401 - the fixture

Dataset = tw.data.Dataset


def slices(n=10):
    return Dataset.from_tensor_slices(np.arange(n, dtype=np.float32))


@pytest.mark.parametrize("make, expect", [
    (lambda: slices(), 10),
    (lambda: Dataset.from_tensors(np.zeros(3)), 1),
    (lambda: Dataset.range(0, 10, 3), 4),
    (lambda: Dataset.range(5, 1, -1), 4),
    (lambda: slices().batch(4), 3),
    (lambda: slices().batch(4, drop_remainder=True), 2),
    (lambda: slices().map(lambda v: v * 2).shuffle(3).prefetch(1).cache(), 10),
    (lambda: slices().repeat(), INFINITE),
    (lambda: slices().repeat(3).batch(4), 8),
    (lambda: slices().repeat().take(7), 7),
    (lambda: slices().take(-1), 10),
    (lambda: slices().skip(4), 6),
    (lambda: slices().skip(-1), 0),
    (lambda: slices(0).repeat(), 0),
    (lambda: slices().filter(lambda v: v > 3), UNKNOWN),
    (lambda: slices().filter(lambda v: v > 3).repeat(), INFINITE),
    (lambda: slices().filter(lambda v: v > 3).take(3), UNKNOWN),
    (lambda: slices().repeat().skip(3), INFINITE),
    (lambda: Dataset.zip((slices(), slices(4))), 4),
    (lambda: Dataset.zip((slices(), slices().repeat())), 10),
    (lambda: Dataset.zip((slices(), slices().filter(lambda v: v > 1))), UNKNOWN),
    (lambda: slices(3).concatenate(slices(4)), 7),
    (lambda: slices(3).concatenate(slices().repeat()), INFINITE),
    (lambda: Dataset.from_generator(lambda: iter([1.0]), tw.float32), UNKNOWN),
    (lambda: slices().repeat(tw.placeholder(tw.int64, [])), UNKNOWN),
])
def test_cardinality_follows_tfs_rules(make, expect):
    assert cardinality(make()) == expect


def test_dataset_batches_restart_and_end_with_none():
    ds = Dataset.from_tensor_slices((np.arange(5, dtype=np.float32),
                                     np.arange(5, dtype=np.int64) * 10)).batch(2)
    batches = data_adapter.DatasetBatches(ds, tw.get_default_graph())
    batches.restart()
    got = [batches.next() for _ in range(4)]
    assert got[3] is None
    x, y, w = got[2]
    np.testing.assert_array_equal(x, [4.0])
    np.testing.assert_array_equal(y, [40])
    assert x.dtype == np.float32 and y.dtype == np.int64 and w is None
    batches.restart()
    np.testing.assert_array_equal(batches.next()[0], [0.0, 1.0])


def test_dataset_elements_unpack_as_tf():
    x = np.ones((4, 2), np.float32)
    three = Dataset.from_tensor_slices((x, x[:, 0], x[:, 1] * 3)).batch(4)
    features = Dataset.from_tensor_slices({"a": x}).batch(4)
    four = Dataset.from_tensor_slices((x, x, x, x)).batch(4)
    graph = tw.get_default_graph()
    for ds in (three, features, four):
        data_adapter.DatasetBatches(ds, graph)
    batches = data_adapter.DatasetBatches(three, graph)
    batches.restart()
    _, _, w = batches.next()
    np.testing.assert_array_equal(w, [3.0] * 4)
    batches = data_adapter.DatasetBatches(features, graph)
    batches.restart()
    x_only, y, w = batches.next()
    assert set(x_only) == {"a"} and y is None and w is None
    batches = data_adapter.DatasetBatches(four, graph)
    batches.restart()
    with pytest.raises(ValueError, match="list or tuple of 2 or 3 elements"):
        batches.next()


def test_generator_outputs_unpack_as_tf():
    x = np.zeros((2, 1))
    assert data_adapter.generator_batch(x)[0] is x
    assert data_adapter.generator_batch((x,))[1:] == (None, None)
    assert data_adapter.generator_batch((x, 1, 2)) == (x, 1, 2)
    with pytest.raises(ValueError, match="Output of generator should be a tuple of 1 or 2 or 3"):
        data_adapter.generator_batch((x, x, x, x))


def test_argument_checks_raise_tfs_errors():
    ds = slices().batch(2)
    with pytest.raises(ValueError, match="should not specify a target"):
        data_adapter.check_dataset_arguments(ds, np.zeros(3), None)
    with pytest.raises(ValueError, match="third element of your dataset"):
        data_adapter.check_dataset_arguments(ds, None, np.zeros(3))
    with pytest.raises(ValueError, match="`validation_split` argument is not supported"):
        data_adapter.check_dataset_arguments(ds, None, None, 0.2)
    with pytest.raises(ValueError, match="`batch_size` argument must not be specified"):
        data_adapter.check_batch_size(8, ds)
    with pytest.raises(ValueError, match="targets as the second element of the generator"):
        data_adapter.check_generator_arguments(np.zeros(3), None)
    with pytest.raises(ValueError, match="you cannot use `validation_split`"):
        data_adapter.check_generator_arguments(None, None, 0.5)
    with pytest.raises(ValueError, match="not iterators that have been manually generated"):
        data_adapter.check_not_iterator(ds.make_initializable_iterator())
    data_adapter.check_dataset_arguments(ds, None, None, 0.0)
    data_adapter.check_batch_size(None, ds)
