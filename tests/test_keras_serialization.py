"""tw.keras.serialization: constructor arguments as JSON values, and custom objects put back."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.keras import activations, constraints, regularizers
from tensorweave.keras.serialization import (
    resolve_custom_objects,
    serialize_arguments,
    serialize_value,
)


def test_values_become_json():
    assert serialize_value((1, [2.5, None], {"a": True}), "x") == [1, [2.5, None], {"a": True}]
    assert serialize_value(tw.float64, "dtype") == "float64"
    assert serialize_value(np.float32(0.5), "rate") == 0.5
    assert serialize_value(activations.relu, "activation") == "relu"
    assert serialize_value(regularizers.l2(0.5), "r") == {
        "class_name": "L1L2", "config": {"l1": 0.0, "l2": 0.5}}
    assert serialize_value(constraints.NonNeg(), "c") == {"class_name": "NonNeg", "config": {}}
    with pytest.raises(TypeError, match="Cannot serialize f: <object"):
        serialize_value(object(), "f")


def test_arguments_are_bound_to_their_names():
    def init(self, units, activation=None, **kwargs):
        pass

    assert serialize_arguments(init, (3,), {"activation": "relu", "input_shape": (4,)}) == {
        "units": 3, "activation": "relu", "input_shape": [4]}


def test_custom_objects_replace_their_names_but_not_class_names():
    marker = object()
    config = {"activation": "mine", "class_name": "mine", "nested": ["mine", "other"]}
    assert resolve_custom_objects(config, {"mine": marker}) == {
        "activation": marker, "class_name": "mine", "nested": [marker, "other"]}
