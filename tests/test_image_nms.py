"""tf.image.non_max_suppression_padded (V4) and non_max_suppression_with_scores (V5, soft-NMS):
TF's test cases, hard NMS agreement with V3, padding, shapes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors

# TF's image_ops_test "three clusters" boxes
BOXES = [[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9],
         [0, 10, 1, 11], [0, 10.1, 1, 11.1], [0, 100, 1, 101]]
SCORES = [0.9, 0.75, 0.6, 0.95, 0.5, 0.3]


def _run(fetches, feed=None):
    with tw.Session() as sess:
        return sess.run(fetches, feed)


def test_soft_nms_matches_tf() -> None:
    with tw.Graph().as_default():
        indices, scores = tw.image.non_max_suppression_with_scores(
            BOXES, SCORES, 6, iou_threshold=1.0, score_threshold=0.0, soft_nms_sigma=0.5)
        assert indices.dtype == tw.int32 and scores.dtype == tw.float32
        got_indices, got_scores = _run([indices, scores])
    assert got_indices.tolist() == [3, 0, 1, 5, 4, 2]
    np.testing.assert_allclose(got_scores, [0.95, 0.9, 0.384, 0.3, 0.256, 0.197], atol=1e-3)
    # the decay is TF's exp(-0.5 * iou**2 / sigma): box 1 against box 0 (IoU 0.9 / 1.1)
    iou = 0.9 / 1.1
    np.testing.assert_allclose(got_scores[2], 0.75 * np.exp(-iou**2), rtol=1e-5)


def test_hard_nms_with_scores_and_score_threshold() -> None:
    with tw.Graph().as_default():
        indices, scores = tw.image.non_max_suppression_with_scores(BOXES, SCORES, 3, 0.5)
        assert _run(indices).tolist() == [3, 0, 5]
        np.testing.assert_allclose(_run(scores), [0.95, 0.9, 0.3])
        high, _ = tw.image.non_max_suppression_with_scores(BOXES, SCORES, 6, 0.5,
                                                           score_threshold=0.4)
        assert _run(high).tolist() == [3, 0]


def test_sigma_zero_agrees_with_v3_on_random_boxes() -> None:
    rng = np.random.default_rng(0)
    corners = rng.random((40, 2, 2)).astype(np.float32)
    boxes = np.concatenate([corners.min(1), corners.max(1)], axis=1)
    scores = rng.permutation(40).astype(np.float32) / 40
    with tw.Graph().as_default():
        v3 = tw.image.non_max_suppression(boxes, scores, 15, 0.3)
        v5, v5_scores = tw.image.non_max_suppression_with_scores(boxes, scores, 15, 0.3)
        v4, valid = tw.image.non_max_suppression_padded(boxes, scores, 15, 0.3)
        a, b, c, s, n = _run([v3, v5, v4, v5_scores, valid])
    assert a.tolist() == b.tolist() == c.tolist() and n == len(a)
    np.testing.assert_array_equal(s, scores[a])


def test_padded_pads_with_zeros_and_counts_valid_outputs() -> None:
    with tw.Graph().as_default():
        indices, valid = tw.image.non_max_suppression_padded(
            BOXES, SCORES, 5, 0.5, pad_to_max_output_size=True)
        assert indices.shape.as_list() == [5] and valid.shape.as_list() == []
        got, count = _run([indices, valid])
        assert got.tolist() == [3, 0, 5, 0, 0] and count == 3
        unpadded, count = _run(tw.image.non_max_suppression_padded(BOXES, SCORES, 5, 0.5))
        assert unpadded.tolist() == [3, 0, 5] and count == 3
        size = tw.placeholder(tw.int32, [])
        dynamic, _ = tw.image.non_max_suppression_padded(BOXES, SCORES, size, 0.5,
                                                         pad_to_max_output_size=True)
        assert dynamic.shape.as_list() == [None]
        assert _run(dynamic, {size: 4}).tolist() == [3, 0, 5, 0]


def test_half_boxes_keep_their_dtype_in_scores() -> None:
    with tw.Graph().as_default():
        boxes = tw.constant(np.array(BOXES, np.float16))
        indices, scores = tw.image.non_max_suppression_with_scores(
            boxes, tw.constant(np.array(SCORES, np.float16)), 3)
        assert scores.dtype == tw.float16
        got_indices, got_scores = _run([indices, scores])
    assert got_indices.tolist() == [3, 0, 5] and got_scores.dtype == np.float16


def test_errors() -> None:
    with tw.Graph().as_default():
        with pytest.raises(ValueError):
            tw.image.non_max_suppression_with_scores([[0.0, 0, 1]], [1.0], 1)
        with pytest.raises(ValueError):
            tw.image.non_max_suppression_padded(BOXES, SCORES[:3], 1)
        with pytest.raises(errors.InvalidArgumentError, match="soft_nms_sigma must be"):
            _run(tw.image.non_max_suppression_with_scores(BOXES, SCORES, 3,
                                                          soft_nms_sigma=-1.0))
        with pytest.raises(errors.InvalidArgumentError, match=r"iou_threshold must be in \[0, 1\]"):
            _run(tw.image.non_max_suppression_padded(BOXES, SCORES, 3, iou_threshold=1.5))
        boxes = tw.placeholder(tw.float32)
        with pytest.raises(errors.InvalidArgumentError, match="boxes must have 4 columns"):
            _run(tw.image.non_max_suppression_with_scores(boxes, SCORES, 3),
                 {boxes: np.zeros((6, 3))})
