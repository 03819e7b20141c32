"""`warm_start_from`: a new model starts from another model's checkpoint, once."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tests.estimator_support import (
    closed_writer_cache,  # noqa: F401 - autouse fixture
    data,
    eval_input_fn,
    linear_model_fn,
    train_input_fn,
)


def make(model_dir: Any, warm_start_from: Any = None) -> tf.estimator.Estimator:
    return tf.estimator.Estimator(linear_model_fn, model_dir=str(model_dir), params={"lr": 0.1},
                                  config=tf.estimator.RunConfig(log_step_count_steps=None),
                                  warm_start_from=warm_start_from)


def test_warm_start_from_a_directory_initializes_the_trainable_variables(
        tmp_path: Any) -> None:
    source = make(tmp_path / "source")
    source.train(train_input_fn(), steps=10)
    warm = make(tmp_path / "warm", warm_start_from=str(tmp_path / "source"))
    x, y = data()
    # Evaluated before any training: the weights are the source's, the global step is not.
    results = warm.evaluate(eval_input_fn(batch_size=64))
    pred = x @ source.get_variable_value("w") + source.get_variable_value("b")
    np.testing.assert_allclose(results["loss"], np.mean(np.square(pred - y)), rtol=1e-5)
    assert results["global_step"] == 0
    warm.train(train_input_fn(), steps=1)
    assert warm.get_variable_value("global_step") == 1
    np.testing.assert_allclose(warm.get_variable_value("b"), source.get_variable_value("b"),
                               atol=0.2)


def test_warm_start_settings_select_and_rename_variables(tmp_path: Any) -> None:
    source = make(tmp_path / "source")
    source.train(train_input_fn(), steps=10)
    only_b = tf.estimator.WarmStartSettings(str(tmp_path / "source"), vars_to_warm_start="b")
    warm = make(tmp_path / "warm", warm_start_from=only_b)
    x, y = data()
    results = warm.evaluate(eval_input_fn(batch_size=64))
    pred = np.zeros_like(y) + source.get_variable_value("b")  # w stays at zero
    np.testing.assert_allclose(results["loss"], np.mean(np.square(pred - y)), rtol=1e-5)
    renamed = tf.estimator.WarmStartSettings(str(tmp_path / "source"), vars_to_warm_start="b",
                                             var_name_to_prev_var_name={"b": "missing"})
    with pytest.raises(ValueError, match="Tensor missing is not found in"):
        make(tmp_path / "other", warm_start_from=renamed).evaluate(eval_input_fn())


def test_warm_start_argument_errors(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="`ckpt_to_initialize_from` MUST be set"):
        tf.estimator.WarmStartSettings("")
    with pytest.raises(ValueError, match="warm_start_from must be a string or a "
                                         "WarmStartSettings"):
        make(tmp_path, warm_start_from=3)
