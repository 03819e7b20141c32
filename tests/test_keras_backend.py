"""tw.keras.backend: sessions per graph with lazy variable initialization, learning phase,
unique layer names, numpy get/set of variables."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.keras import backend
from tests.keras_support import fresh_graph  # noqa: F401 - the fixture


def test_get_session_is_cached_and_initializes_new_variables():
    v = tw.Variable(np.arange(3, dtype=np.float32))
    session = backend.get_session()
    assert backend.get_session() is session
    np.testing.assert_array_equal(session.run(v), [0, 1, 2])
    w = tw.Variable(5.0)
    assert backend.get_session().run(w) == 5.0


def test_get_session_keeps_values_of_initialized_variables():
    v = tw.Variable(1.0)
    session = backend.get_session()
    session.run(v.assign(7.0))
    tw.Variable(2.0)  # a new variable must not re-initialize the old one
    assert backend.get_session().run(v) == 7.0


def test_set_session_is_used_for_its_graph():
    session = tw.Session()
    backend.set_session(session)
    assert backend.get_session() is session


def test_learning_phase_is_a_bool_placeholder_with_default_false():
    phase = backend.learning_phase()
    assert phase is backend.learning_phase()
    assert phase.dtype == tw.bool and phase.op.name == "keras_learning_phase"
    session = backend.get_session()
    assert session.run(phase) == np.bool_(False)
    assert session.run(phase, {phase: True}) == np.bool_(True)


def test_set_learning_phase_checks_its_value():
    backend.set_learning_phase(1)
    assert backend.learning_phase() == 1
    with pytest.raises(ValueError, match="0 or 1"):
        backend.set_learning_phase(2)


def test_unique_object_names_per_graph_and_clear_session_resets_them():
    names = [backend.unique_object_name("dense") for _ in range(3)]
    assert names == ["dense", "dense_1", "dense_2"]
    backend.clear_session()
    assert backend.unique_object_name("dense") == "dense"


def test_batch_get_and_set_value_round_trip_with_dtype_and_shape_check():
    v = tw.Variable(np.zeros((2, 2), np.float32))
    backend.set_value(v, [[1, 2], [3, 4]])
    value = backend.get_value(v)
    assert value.dtype == np.float32
    np.testing.assert_array_equal(value, [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="not compatible"):
        backend.set_value(v, np.zeros(3))


def test_floatx():
    assert backend.floatx() == "float32"
    with pytest.raises(ValueError, match="Unknown floatx"):
        backend.set_floatx("int8")


def test_explicit_layer_names_are_not_handed_out_again():
    from tensorweave.keras import layers

    assert layers.Dense(1, name="dense_1").name == "dense_1"
    assert [layers.Dense(1).name for _ in range(2)] == ["dense_2", "dense_3"]
    assert layers.Dense(1, name="dense_x").name == "dense_x"  # not of the dense_<n> form
    assert layers.Dense(1).name == "dense_4"


def test_unused_scope_name_skips_the_scopes_of_existing_variables():
    tw.Variable(1.0, name="block/w")
    tw.Variable(1.0, name="block_1/w")
    assert backend.unused_scope_name("block") == "block_2"
    assert backend.unused_scope_name("free") == "free"
