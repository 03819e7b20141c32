"""`get_optimizer_instance`: names, instances, callables, TF's errors."""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave.estimator.canned.optimizers import get_optimizer_instance


@pytest.mark.parametrize("name,cls", [
    ("Adagrad", tf.train.AdagradOptimizer), ("Adam", tf.train.AdamOptimizer),
    ("Ftrl", tf.train.FtrlOptimizer), ("RMSProp", tf.train.RMSPropOptimizer),
    ("SGD", tf.train.GradientDescentOptimizer)])
def test_names_build_their_optimizer_with_the_learning_rate(name: str, cls: type) -> None:
    opt = get_optimizer_instance(name, learning_rate=0.25)
    assert type(opt) is cls
    assert opt._hyper_args()["learning_rate"] == 0.25


def test_instances_and_callables_pass_through() -> None:
    opt = tf.train.GradientDescentOptimizer(0.1)
    assert get_optimizer_instance(opt) is opt
    assert get_optimizer_instance(lambda: opt, learning_rate=0.5) is opt


def test_bad_values_raise_tf_errors() -> None:
    with pytest.raises(ValueError, match="learning_rate must be specified"):
        get_optimizer_instance("Adam")
    with pytest.raises(ValueError, match=r"Unsupported optimizer name: Foo\. Supported names "
                                         r"are: \('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD'\)"):
        get_optimizer_instance("Foo", learning_rate=0.1)
    with pytest.raises(ValueError, match="The given object is not an Optimizer instance"):
        get_optimizer_instance(lambda: 3)
