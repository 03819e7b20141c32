"""The TensorList ops a loop's gradient records with: push and pop, lists as values (one list
pushed twice, popped twice), lists of lists, shapes, and TF's errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw

raw = tw.raw_ops


def _empty(dtype: tw.DType = tw.float32, shape: object = -1) -> tw.Tensor:
    return raw.EmptyTensorList(element_shape=shape, max_num_elements=-1, element_dtype=dtype)


def _pop(items: tw.Tensor, dtype: tw.DType = tw.float32,
         shape: object = -1) -> tuple[tw.Tensor, tw.Tensor]:
    return raw.TensorListPopBack(input_handle=items, element_shape=shape, element_dtype=dtype)


def test_pop_gives_back_what_was_pushed_last_first() -> None:
    items = raw.TensorListPushBack(input_handle=_empty(), tensor=[1.0, 2.0])
    items = raw.TensorListPushBack(input_handle=items, tensor=tw.constant([[3.0]]))
    rest, last = _pop(items)
    _, first = _pop(rest)
    assert items.dtype == tw.variant and items.shape == []
    with tw.Session() as sess:
        got_last, got_first = sess.run([last, first])
    np.testing.assert_array_equal(got_last, [[3.0]])
    np.testing.assert_array_equal(got_first, [1.0, 2.0])


def test_a_list_is_a_value_that_two_pushes_leave_as_it_was() -> None:
    base = raw.TensorListPushBack(input_handle=_empty(tw.int32), tensor=7)
    a = raw.TensorListPushBack(input_handle=base, tensor=1)
    b = raw.TensorListPushBack(input_handle=base, tensor=2)
    _, from_a = _pop(a, tw.int32)
    _, from_b = _pop(b, tw.int32)
    rest, from_base = _pop(base, tw.int32)
    with tw.Session() as sess:
        assert sess.run([from_a, from_b, from_base]) == [1, 2, 7]
        with pytest.raises(tw.errors.InvalidArgumentError, match="pop from an empty list"):
            sess.run(_pop(rest, tw.int32)[1])


def test_a_list_of_lists() -> None:
    inner = raw.TensorListPushBack(input_handle=_empty(), tensor=4.0)
    outer = raw.TensorListPushBack(input_handle=_empty(tw.variant), tensor=inner)
    _, got_inner = _pop(outer, tw.variant)
    _, value = _pop(got_inner)
    with tw.Session() as sess:
        assert sess.run(value) == 4.0


def test_the_popped_tensor_has_the_static_element_shape() -> None:
    items = raw.TensorListPushBack(input_handle=_empty(), tensor=tw.zeros([2, 3]))
    assert _pop(items, shape=[-1, 3])[1].shape.as_list() == [None, 3]
    assert _pop(items)[1].shape.ndims is None


def test_errors() -> None:
    with pytest.raises(ValueError, match="at most rank 1"):
        _empty(shape=[[2]])
    other_dtype = raw.TensorListPushBack(input_handle=_empty(), tensor=tw.constant(1))
    shaped = _empty(shape=[2])
    wrong = raw.TensorListPushBack(input_handle=shaped, tensor=[1.0, 2.0, 3.0])
    popped = _pop(raw.TensorListPushBack(input_handle=_empty(), tensor=[1.0]), shape=[2])[1]
    with tw.Session() as sess:
        with pytest.raises(tw.errors.InvalidArgumentError,
                           match="list elements float32 but tried to append int32"):
            sess.run(other_dtype)
        with pytest.raises(tw.errors.InvalidArgumentError, match="incompatible shape"):
            sess.run(wrong)
        with pytest.raises(tw.errors.InvalidArgumentError, match="Incompatible shapes"):
            sess.run(popped)
