"""`tw.contrib.framework`: lazy access through ``tw.contrib``, the global step, variable lookup
by scope and suffix, variables to restore, model variables, and `arg_scope`."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tw

framework = tw.contrib.framework


def test_contrib_is_imported_on_first_use() -> None:
    code = ("import sys, tensorweave as tf\n"
            "assert 'tensorweave.contrib.layers' not in sys.modules\n"
            "from tensorweave.contrib import rnn\n"
            "assert tf.contrib.layers.fully_connected and tf.contrib.framework.arg_scope\n"
            "assert tf.contrib.rnn is rnn and tf.contrib.seq2seq.sequence_loss\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tw.contrib.nope  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tw.nope  # noqa: B018


def test_global_step() -> None:
    assert framework.get_global_step() is None
    step = framework.get_or_create_global_step()
    assert step.name == "global_step:0" and step.dtype == tw.int64
    assert framework.get_or_create_global_step() is step
    assert framework.get_global_step() is step
    assert step not in tw.trainable_variables()
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        assert sess.run(step) == 0
    with pytest.raises(ValueError, match="already exists"):
        framework.create_global_step()


def make_variables() -> None:
    with tw.variable_scope("a"):
        tw.get_variable("w", [2])
        tw.get_variable("b", [2])
        framework.model_variable("m", [3])
    with tw.variable_scope("ab"):
        tw.get_variable("w", [1])
    with tw.variable_scope("c"):
        framework.variable("w", [1], collections=["extra"])


def test_get_variables_by_scope_and_suffix() -> None:
    make_variables()
    names = lambda vs: [v.name for v in vs]  # noqa: E731
    assert names(framework.get_variables("a/")) == ["a/w:0", "a/b:0", "a/m:0"]
    # a scope is a prefix match, as TF's
    assert names(framework.get_variables("a")) == ["a/w:0", "a/b:0", "a/m:0", "ab/w:0"]
    assert names(framework.get_variables(suffix="w")) == ["a/w:0", "ab/w:0"]
    assert names(framework.get_variables_by_name("w", scope="a")) == ["a/w:0", "ab/w:0"]
    assert names(framework.get_variables("c", collection="extra")) == ["c/w:0"]
    assert framework.get_variables("c") == []  # given collections replace the global one
    assert names(framework.get_model_variables()) == ["a/m:0"]
    assert names(framework.get_trainable_variables("ab")) == ["ab/w:0"]
    with tw.variable_scope("a", reuse=True) as scope:
        assert names(framework.get_variables(scope)) == names(framework.get_variables("a"))
    assert framework.get_unique_variable("a/b").name == "a/b:0"
    with pytest.raises(ValueError, match="Couldn't find variable zz"):
        framework.get_unique_variable("zz")


def test_variable_collections_and_device() -> None:
    with tw.device("/cpu:0"):
        plain = framework.variable("v", [2], initializer=tw.ones_initializer())
    model = framework.model_variable("m", [2], device="/cpu:0", trainable=False)
    assert plain in tw.global_variables() and plain in tw.trainable_variables()
    assert plain not in tw.get_collection(tw.GraphKeys.MODEL_VARIABLES)
    assert model in tw.get_collection(tw.GraphKeys.MODEL_VARIABLES)
    assert model in tw.global_variables() and model not in tw.trainable_variables()
    assert "CPU:0" in model.device.upper()
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(plain), [1.0, 1.0])


def test_get_variables_to_restore() -> None:
    make_variables()
    names = lambda vs: [v.name for v in vs]  # noqa: E731
    everything = names(tw.global_variables())
    assert names(framework.get_variables_to_restore()) == everything
    assert names(framework.get_variables_to_restore(include=["a/"], exclude=["a/b"])) == [
        "a/w:0", "a/m:0"]
    assert names(framework.get_variables_to_restore(exclude=["a/"])) == ["ab/w:0"]
    with pytest.raises(TypeError, match="include is provided but is not a list"):
        framework.get_variables_to_restore(include="a")
    with pytest.raises(TypeError, match="exclude is provided but is not a list"):
        framework.get_variables_to_restore(exclude="a")


@framework.add_arg_scope
def scoped(a: int, b: int = 1, c: int = 2) -> tuple[int, int, int]:
    return a, b, c


def plain(a: int) -> int:
    return a


def test_arg_scope_defaults_nesting_and_reuse() -> None:
    assert framework.has_arg_scope(scoped) and not framework.has_arg_scope(plain)
    assert framework.arg_scoped_arguments(scoped) == ["a", "b", "c"]
    with framework.arg_scope([scoped], b=10) as outer:
        assert scoped(0) == (0, 10, 2)
        assert scoped(0, b=5) == (0, 5, 2)
        with framework.arg_scope([scoped], c=20):
            assert scoped(0) == (0, 10, 20)
        assert scoped(0) == (0, 10, 2)
    assert scoped(0) == (0, 1, 2)
    with framework.arg_scope(outer):
        assert scoped(0) == (0, 10, 2)
    assert framework.current_arg_scope() == {}


def test_arg_scope_errors() -> None:
    with pytest.raises(ValueError, match="not decorated with @add_arg_scope"):
        with framework.arg_scope([plain], a=1):
            pass
    with pytest.raises(TypeError, match="list/tuple or reused scope"):
        with framework.arg_scope(scoped, b=1):
            pass
    with pytest.raises(ValueError, match="kwargs must be empty"):
        with framework.arg_scope({}, b=1):
            pass


def test_smart_cond_is_exported_and_folds_a_known_predicate():
    x = tw.constant(2.0)
    out = tw.contrib.framework.smart_cond(tw.constant(True), lambda: x * 3.0, lambda: x)
    assert out.op.type == "Mul"  # chosen at construction: no If op
    assert tw.contrib.framework.smart_constant_value(1) is True
    with tw.Session() as sess:
        assert sess.run(out) == 6.0


def test_checkpoint_helpers_are_reexported(tmp_path) -> None:
    from tensorweave.contrib import variables_assign

    v = framework.variable("v", initializer=np.arange(4, dtype=np.float32))
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        path = tw.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    assert framework.assign_from_checkpoint is variables_assign.assign_from_checkpoint
    assert framework.assign_from_values_fn is variables_assign.assign_from_values_fn
    assert framework.init_from_checkpoint is tw.train.init_from_checkpoint
    assert framework.list_variables(str(tmp_path)) == [("v", [4])]
    np.testing.assert_array_equal(framework.load_variable(path, "v"), np.arange(4))
    assert framework.load_checkpoint(path).has_tensor("v")
    assign_op, feeds = framework.assign_from_values({"v": np.full(4, 2, np.float32)})
    with tw.Session() as sess:
        sess.run(assign_op, feeds)
        np.testing.assert_array_equal(sess.run(v), np.full(4, 2, np.float32))
        framework.assign_from_checkpoint_fn(path, [v])(sess)
        np.testing.assert_array_equal(sess.run(v), np.arange(4, dtype=np.float32))
    with pytest.raises(AttributeError, match="no attribute 'assign_nope'"):
        framework.assign_nope  # noqa: B018
