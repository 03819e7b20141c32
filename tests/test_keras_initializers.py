"""tw.keras.initializers: Keras's lower-case names for the initializer classes."""

import numpy as np
import pytest

from tensorweave import keras
from tensorweave.keras import initializers, layers
from tests.keras_support import fresh_graph  # noqa: F401 - the fixture


def test_lower_case_names_are_the_classes():
    assert initializers.constant is initializers.Constant
    assert initializers.zeros is initializers.zero is initializers.Zeros
    assert initializers.ones is initializers.Ones
    assert initializers.uniform is initializers.random_uniform is initializers.RandomUniform
    assert initializers.normal is initializers.RandomNormal
    assert initializers.glorot_uniform is initializers.GlorotUniform


def test_dense_with_a_lower_case_constant_initializer():
    model = keras.Sequential([layers.Dense(3, input_shape=(2,),
                                           bias_initializer=keras.initializers.constant(2.0),
                                           kernel_initializer=initializers.zeros())])
    out = model.predict(np.ones((1, 2), np.float32))
    np.testing.assert_array_equal(out, [[2.0, 2.0, 2.0]])
    assert out.dtype == np.float32


def test_config_dicts_and_serialize():
    config = initializers.serialize(initializers.RandomNormal(stddev=2.0, seed=3))
    assert config["class_name"] == "RandomNormal" and config["config"]["stddev"] == 2.0
    restored = initializers.get(config)
    assert isinstance(restored, initializers.RandomNormal) and restored.stddev == 2.0
    model = keras.Sequential([layers.Dense(
        2, input_shape=(3,), kernel_initializer={"class_name": "Constant",
                                                 "config": {"value": 0.5}})])
    np.testing.assert_array_equal(model.get_weights()[0], np.full((3, 2), 0.5, np.float32))
    with pytest.raises(ValueError, match="Unknown initializer: Bogus"):
        initializers.get({"class_name": "Bogus", "config": {}})
