"""TensorShape: partial shapes, compatibility and merging."""

import pytest

import tensorweave as tf
from tensorweave.engine.tensor_shape import TensorShape, format_dims, unknown_shape


def test_partial_shapes():
    s = TensorShape([None, 3])
    assert s.ndims == 2 and s.as_list() == [None, 3] and s[1] == 3 and s[0] is None
    assert not s.is_fully_defined() and s.num_elements() is None
    assert str(s) == "(?, 3)" and format_dims(s) == "[?,3]"
    assert TensorShape([2, 3]).num_elements() == 6
    assert TensorShape(None).ndims is None and unknown_shape(2).as_list() == [None, None]
    assert TensorShape([2, 3])[1:] == TensorShape([3])


def test_compatibility_and_merge():
    assert TensorShape([None, 3]).is_compatible_with([5, 3])
    assert not TensorShape([None, 3]).is_compatible_with([5, 4])
    assert not TensorShape([3]).is_compatible_with([3, 1])
    assert TensorShape(None).is_compatible_with([1, 2, 3])
    assert TensorShape([None, 3]).merge_with([5, None]) == TensorShape([5, 3])
    with pytest.raises(ValueError, match="not compatible"):
        TensorShape([2]).merge_with([3])
    with pytest.raises(ValueError):
        TensorShape(None).as_list()
    with pytest.raises(ValueError):
        TensorShape([-2])


def test_dimensions_answer_tf1_value():
    import tensorweave as tw

    s = TensorShape([None, 3])
    assert s[1].value == 3 and int(s[1]) == 3 and s[1] * 2 == 6 and type(s[1] * 2) is int
    assert [d.value for d in TensorShape([4, 5])] == [4, 5] and s.dims[1].value == 3
    assert [type(d) for d in s.as_list()] == [type(None), int]  # as_list: plain ints, as TF
    assert tw.compat.dimension_value(s[1]) == 3 and tw.compat.dimension_value(None) is None
    assert tw.dimension_value(7) == 7 and tw.dimension_at_index(s, 1).value == 3
    assert tw.dimension_at_index(TensorShape(None), 0) is None
    x = tw.placeholder(tw.float32, [None, 5])
    assert x.get_shape()[1].value == 5 and x.shape[0] is None
    assert TensorShape([tw.Dimension(2), s[1]]) == TensorShape([2, 3])


def test_rank_assertions_follow_tf() -> None:
    s = TensorShape([2, None])
    s.assert_has_rank(2)
    TensorShape(None).assert_has_rank(5)  # an unknown rank is compatible with any
    with pytest.raises(ValueError, match="must have rank 0"):
        s.assert_has_rank(0)
    assert s.with_rank_at_least(1) is s and s.with_rank_at_most(2) is s
    with pytest.raises(ValueError, match="rank at least 3"):
        s.with_rank_at_least(3)
    with pytest.raises(ValueError, match="rank at most 1"):
        s.with_rank_at_most(1)
    s.assert_same_rank([5, 6])
    s.assert_same_rank(None)
    with pytest.raises(ValueError, match="same rank"):
        s.assert_same_rank([1])
    TensorShape([2, 3]).assert_is_fully_defined()
    with pytest.raises(ValueError, match="not fully defined"):
        s.assert_is_fully_defined()


def test_dims_is_a_list_as_tfs() -> None:
    # transpose_op_test and friends compare `shape.dims` with lists
    shape = tf.transpose(tf.placeholder(tf.float32, [4, None])).shape
    assert shape.dims == [None, 4] and isinstance(shape.dims, list)
    assert tf.TensorShape(None).dims is None
    dims = shape.dims
    dims.append(7)  # a copy: the shape itself does not change
    assert shape.as_list() == [None, 4]
