"""tw.keras.training_utils.standardize_weights: sample and class weights merged as TF 1.15
merges them, for sparse, one-hot and temporal targets, and its errors."""

import numpy as np
import pytest

from tensorweave.keras.training_utils import standardize_weights, weights_for_output

CLASS_WEIGHT = {0: 1.0, 1: 3.0, 2: 0.5}


def test_nothing_given_is_none():
    assert standardize_weights(np.zeros((4, 1))) is None
    assert standardize_weights(np.zeros((4, 1)), class_weight="auto") is None


@pytest.mark.parametrize("y", [
    np.array([2, 0, 1, 1]),                                  # labels
    np.array([[2.0], [0.0], [1.0], [1.0]], np.float32),      # sparse targets as the model feeds
    np.eye(3, dtype=np.float32)[[2, 0, 1, 1]],               # one-hot rows: their argmax
])
def test_class_weight_by_class(y):
    np.testing.assert_array_equal(standardize_weights(y, class_weight=CLASS_WEIGHT),
                                  [0.5, 1.0, 3.0, 3.0])


def test_class_and_sample_weights_multiply():
    got = standardize_weights(np.array([[0], [1]]), np.array([2.0, 4.0]), CLASS_WEIGHT)
    np.testing.assert_array_equal(got, [2.0, 12.0])


def test_class_weight_missing_a_class():
    with pytest.raises(ValueError, match=r"The classes \{2\} exist in the data but not in "
                                         "`class_weight`"):
        standardize_weights(np.array([0, 2]), class_weight={0: 1.0, 1: 2.0})


def test_class_weight_refuses_3d_targets():
    with pytest.raises(ValueError, match="`class_weight` not supported for 3\\+ dimensional"):
        standardize_weights(np.zeros((2, 3, 4)), class_weight=CLASS_WEIGHT)


def test_temporal_weights():
    w = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(standardize_weights(np.zeros((2, 3, 4)), w,
                                                      sample_weight_mode="temporal"), w)
    with pytest.raises(ValueError, match="you should pass a 2D sample_weight array"):
        standardize_weights(np.zeros((2, 3, 4)), np.ones(2), sample_weight_mode="temporal")
    with pytest.raises(ValueError, match="restricted to outputs that are at least 3D"):
        standardize_weights(np.zeros((2, 3)), w, sample_weight_mode="temporal")
    with pytest.raises(ValueError, match='specify sample_weight_mode="temporal" in compile'):
        standardize_weights(np.zeros((2, 3, 4)), w)
    with pytest.raises(ValueError, match="should be None or \"temporal\". Found: bogus"):
        standardize_weights(np.zeros((2, 3, 4)), w, sample_weight_mode="bogus")


def test_sample_weight_length_must_match():
    with pytest.raises(ValueError, match=r"shape \(3,\) for an input with shape \(2, 1\)\. "
                                         "sample_weight cannot be broadcast"):
        standardize_weights(np.zeros((2, 1)), np.ones(3))


def test_weights_for_output_accepts_lists_and_dicts_by_name():
    assert weights_for_output([CLASS_WEIGHT], "dense", "class_weight") is CLASS_WEIGHT
    assert weights_for_output({"dense": CLASS_WEIGHT}, "dense", "class_weight") is CLASS_WEIGHT
    assert weights_for_output(CLASS_WEIGHT, "dense", "class_weight") is CLASS_WEIGHT
    with pytest.raises(ValueError, match="Provided `sample_weight` was a list of 2 elements, "
                                         "but the model has 1 outputs"):
        weights_for_output([1.0, 2.0], "dense", "sample_weight")
