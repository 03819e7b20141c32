"""``tw.image`` box functions (`tensorweave.api.image_box_ops`): non-max suppression against
an explicit loop reference, thresholds, dtypes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors

RNG = np.random.default_rng(3)


def run(fetches, feed_dict=None):
    with tw.Session() as sess:
        return sess.run(fetches, feed_dict)


def np_iou(a, b):
    ya0, xa0, ya1, xa1 = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    yb0, xb0, yb1, xb1 = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    area_a, area_b = (ya1 - ya0) * (xa1 - xa0), (yb1 - yb0) * (xb1 - xb0)
    if area_a <= 0 or area_b <= 0:
        return 0.0
    inter = max(min(ya1, yb1) - max(ya0, yb0), 0) * max(min(xa1, xb1) - max(xa0, xb0), 0)
    return inter / (area_a + area_b - inter)


def np_nms(boxes, scores, max_out, iou, score_floor=-np.inf):
    order = sorted((i for i in range(len(scores)) if scores[i] > score_floor),
                   key=lambda i: (-scores[i], i))
    kept = []
    for i in order:
        if len(kept) == max_out:
            break
        if all(np_iou(boxes[i], boxes[j]) <= iou for j in kept):
            kept.append(i)
    return kept


def test_documented_example():
    # TF's non_max_suppression_v3 docstring example: clusters around y = 0, 10 and 100
    boxes = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                      [0, 10.1, 1, 11.1], [0, 100, 1, 101]], np.float32)
    scores = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], np.float32)
    got = tw.image.non_max_suppression(boxes, scores, 3, iou_threshold=0.5)
    assert got.dtype == tw.int32 and got.shape.as_list() == [None]
    np.testing.assert_array_equal(run(got), [3, 0, 5])


@pytest.mark.parametrize("iou,floor,max_out", [(0.5, -np.inf, 10), (0.3, 0.4, 5),
                                               (0.0, -np.inf, 20), (1.0, 0.2, 3)])
def test_random_boxes_match_loop_reference(iou, floor, max_out):
    corners = RNG.uniform(0, 10, (40, 2, 2))
    boxes = np.concatenate([corners[:, 0], corners[:, 0] + RNG.uniform(0, 4, (40, 2))], 1)
    boxes[::7] = boxes[::7][:, [2, 3, 0, 1]]  # flipped corners count the same
    boxes = boxes.astype(np.float32)
    scores = RNG.uniform(0, 1, 40).astype(np.float32)
    got = run(tw.image.non_max_suppression(boxes, scores, max_out, iou, floor))
    np.testing.assert_array_equal(got, np_nms(boxes, scores, max_out, iou, floor))


def test_float16_boxes_and_tensor_max_output():
    boxes = np.array([[0, 0, 1, 1], [0, 0, 1, 0.9], [2, 2, 3, 3]], np.float16)
    scores = np.array([0.5, 0.9, 0.1], np.float16)
    max_out = tw.placeholder(tw.int32, [])
    got = run(tw.image.non_max_suppression(boxes, scores, max_out), {max_out: 2})
    np.testing.assert_array_equal(got, [1, 2])


def test_errors():
    with pytest.raises(ValueError):
        tw.image.non_max_suppression(np.zeros((3, 3), np.float32), np.zeros(3, np.float32), 2)
    with pytest.raises(ValueError):
        tw.image.non_max_suppression(np.zeros((3, 4), np.float32), np.zeros(2, np.float32), 2)
    with pytest.raises(errors.InvalidArgumentError, match="iou_threshold"):
        run(tw.image.non_max_suppression(np.zeros((3, 4), np.float32),
                                         np.zeros(3, np.float32), 2, iou_threshold=1.5))


# -- draw_bounding_boxes ----------------------------------------------------------------------


def np_draw(images, boxes, table):
    out = images.copy()
    _, h, w, depth = images.shape
    for b in range(images.shape[0]):
        for i, (y0, x0, y1, x1) in enumerate(boxes[b]):
            top, bottom = int(y0 * (h - 1)), int(y1 * (h - 1))
            left, right = int(x0 * (w - 1)), int(x1 * (w - 1))
            if top > bottom or left > right or top >= h or bottom < 0 or left >= w \
                    or right < 0:
                continue
            color = table[i % len(table)][:depth]
            for y in range(h):
                for x in range(w):
                    on_row = y in (top, bottom) and max(left, 0) <= x <= min(right, w - 1)
                    on_col = x in (left, right) and max(top, 0) <= y <= min(bottom, h - 1)
                    if on_row or on_col:
                        out[b, y, x] = color
    return out


YELLOW_BLUE = [[1, 1, 0, 1], [0, 0, 1, 1]]


def test_draw_bounding_boxes_matches_loop_reference():
    images = RNG.uniform(0, 1, (2, 7, 9, 3)).astype(np.float32)
    boxes = np.array([[[0.1, 0.2, 0.8, 0.7], [-0.3, 0.5, 0.5, 1.4]],
                      [[0.6, 0.6, 0.2, 0.9], [1.2, 0.0, 1.5, 1.0]]], np.float32)
    got = tw.image.draw_bounding_boxes(images, boxes)
    assert got.shape.as_list() == [2, 7, 9, 3]
    np.testing.assert_array_equal(run(got), np_draw(images, boxes, YELLOW_BLUE))


def test_draw_bounding_boxes_colors_and_grey():
    images = np.zeros((1, 5, 5, 1), np.float16)
    boxes = np.array([[[0.0, 0.0, 1.0, 1.0]]], np.float16)
    got = run(tw.image.draw_bounding_boxes(images, boxes))
    assert got.dtype == np.float16
    assert got[0, 0, 2, 0] == 1 and got[0, 2, 2, 0] == 0  # grey boxes are white
    rgba = np.zeros((1, 4, 4, 4), np.float32)
    colors = [[0.1, 0.2, 0.3, 0.4]]
    got = run(tw.image.draw_bounding_boxes(rgba, [[[0.0, 0.0, 1.0, 1.0]]], colors=colors))
    np.testing.assert_allclose(got, np_draw(rgba, np.array([[[0, 0, 1, 1.0]]]), colors))
    with pytest.raises(errors.InvalidArgumentError, match="Channel depth"):
        run(tw.image.draw_bounding_boxes(np.zeros((1, 4, 4, 2), np.float32),
                                         [[[0.0, 0.0, 1.0, 1.0]]]))
    with pytest.raises(ValueError):
        tw.image.draw_bounding_boxes(np.zeros((1, 4, 4, 3), np.float32), [[0.0, 0.0, 1.0, 1.0]])


# -- sample_distorted_bounding_box ------------------------------------------------------------


def test_sample_distorted_bounding_box_meets_constraints_and_is_seeded():
    height, width = 120, 160
    box = np.array([[[0.2, 0.1, 0.6, 0.5]]], np.float32)
    begin, size, bboxes = tw.image.sample_distorted_bounding_box(
        [height, width, 3], box, seed=4, seed2=9, min_object_covered=0.5,
        aspect_ratio_range=[0.5, 2.0], area_range=[0.1, 0.9])
    assert begin.dtype == tw.int32 and bboxes.shape.as_list() == [1, 1, 4]
    with tw.Session() as sess:
        draws = [sess.run([begin, size, bboxes]) for _ in range(20)]
    with tw.Session() as sess:
        again = sess.run([begin, size, bboxes])
    np.testing.assert_array_equal(again[0], draws[0][0])
    obj = (int(0.1 * width), int(0.2 * height), int(0.5 * width), int(0.6 * height))
    for (y, x, _), (h, w, depth), bb in draws:
        assert depth == -1 and 0 <= y and y + h <= height and 0 <= x and x + w <= width
        area = h * w / (height * width)
        assert 0.1 <= area <= 0.9 and 0.5 <= w / h <= 2.0 + 1e-2
        inter = (max(0, min(x + w, obj[2]) - max(x, obj[0]))
                 * max(0, min(y + h, obj[3]) - max(y, obj[1])))
        assert inter / ((obj[2] - obj[0]) * (obj[3] - obj[1])) >= 0.5
        np.testing.assert_allclose(bb[0, 0], [y / height, x / width, (y + h) / height,
                                              (x + w) / width], rtol=1e-6)
    assert len({tuple(d[0]) for d in draws}) > 1


def test_sample_distorted_bounding_box_falls_back_and_errors():
    # no crop of at most 10% area can cover all of the whole-image box
    begin, size, _ = tw.image.sample_distorted_bounding_box(
        tw.constant([10, 20, 1], tw.int64), np.zeros((1, 0, 4), np.float32), seed=1,
        min_object_covered=1.0, area_range=[0.05, 0.1], use_image_if_no_bounding_boxes=True)
    got_begin, got_size = run([begin, size])
    assert got_begin.dtype == np.int64
    np.testing.assert_array_equal(got_begin, [0, 0, 0])
    np.testing.assert_array_equal(got_size, [10, 20, -1])
    no_boxes = tw.image.sample_distorted_bounding_box([10, 20, 1], np.zeros((1, 0, 4),
                                                                          np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="No bounding boxes"):
        run(no_boxes)
    outside = tw.image.sample_distorted_bounding_box([10, 20, 1], [[[0.0, 0.0, 1.5, 1.0]]])
    with pytest.raises(errors.InvalidArgumentError, match=r"\[0.0, 1.0\]"):
        run(outside)
    with pytest.raises(ValueError):
        tw.image.sample_distorted_bounding_box([10, 20], [[[0.0, 0.0, 1.0, 1.0]]])
