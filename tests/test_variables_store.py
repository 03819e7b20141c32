"""Variable slots: reads of uninitialized variables fail, stored arrays become read-only."""

from __future__ import annotations

import numpy as np
import pytest

from tensorweave.engine import errors
from tensorweave.engine.runtime.variables_store import VariableRef, deref


def test_uninitialized_read_names_the_variable() -> None:
    ref = VariableRef("layer1/weights")
    with pytest.raises(errors.FailedPreconditionError) as info:
        ref.read()
    assert str(info.value) == "Attempting to use uninitialized value layer1/weights"
    assert info.value.error_code == errors.FAILED_PRECONDITION


def test_store_then_read_returns_the_same_array() -> None:
    ref = VariableRef("v")
    value = np.arange(3, dtype=np.float32)
    assert ref.store(value) is value
    assert ref.read() is value


def test_store_makes_the_array_read_only() -> None:
    ref = VariableRef("v")
    value = np.zeros(4, dtype=np.int32)
    ref.store(value)
    assert not value.flags.writeable
    with pytest.raises(ValueError):
        ref.read()[0] = 1
    assert ref.read().tolist() == [0, 0, 0, 0]


def test_store_leaves_views_alone() -> None:
    # a view does not own its data: flipping its flag would not protect the base anyway
    base = np.zeros(4)
    view = base[1:]
    VariableRef("v").store(view)
    assert view.flags.writeable
    assert base.flags.writeable


def test_store_replaces_without_mutating_the_old_value() -> None:
    ref = VariableRef("v")
    old = np.array([1.0, 2.0])
    ref.store(old)
    read_before = ref.read()
    ref.store(np.array([5.0, 6.0]))
    assert read_before.tolist() == [1.0, 2.0]
    assert ref.read().tolist() == [5.0, 6.0]


def test_store_accepts_non_arrays() -> None:
    ref = VariableRef("v")
    assert ref.store(3.5) == 3.5
    assert ref.read() == 3.5


def test_deref_reads_refs() -> None:
    ref = VariableRef("v")
    value = np.ones(2)
    ref.store(value)
    assert deref(ref) is value


def test_deref_of_uninitialized_ref_raises() -> None:
    with pytest.raises(errors.FailedPreconditionError, match="uninitialized value w"):
        deref(VariableRef("w"))


@pytest.mark.parametrize("value", [np.ones(2), 3, None, "text"])
def test_deref_passes_non_refs_through(value) -> None:
    assert deref(value) is value


def test_updatable_is_the_stored_array_only_while_nothing_else_holds_it() -> None:
    ref = VariableRef("table")
    ref.store(np.zeros((4, 2), np.float32))
    out = ref.updatable()
    assert out is ref.value and out.flags.writeable  # sole holder: updated in place
    out[1] = 5.0
    ref.store(out)
    held = ref.read()  # a reader keeps the value: the next update must not change it
    copy = ref.updatable()
    assert copy is not held and copy.flags.writeable and not held.flags.writeable
    copy[2] = 7.0
    ref.store(copy)
    np.testing.assert_array_equal(held[2], [0.0, 0.0])
    np.testing.assert_array_equal(ref.read()[1:3], [[5.0, 5.0], [7.0, 7.0]])


def test_a_view_is_copied_for_an_update() -> None:
    ref = VariableRef("v")
    base = np.arange(6.0)
    ref.store(base[2:])
    out = ref.updatable()
    assert out is not ref.value and out.base is None
