"""Summary ops (``tw.summary.scalar/histogram/merge/merge_all``) and their host kernels."""

from __future__ import annotations

import bisect
import sys

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.formats import png
from tensorweave.formats.summary_proto import Summary
from tensorweave.plugins.kernels.summary import DEFAULT_BUCKET_LIMITS, make_histogram


def run(tensor: tw.Tensor, feed: dict | None = None) -> Summary:
    with tw.Session() as sess:
        data = sess.run(tensor, feed)
    assert type(data) is bytes
    return Summary.FromString(data)


def test_scalar_tags_follow_name_scopes_and_families() -> None:
    x = tw.constant(3.5)
    a = tw.summary.scalar("loss", x)
    b = tw.summary.scalar("loss", x * 2)
    with tw.name_scope("train"):
        c = tw.summary.scalar("acc:1", tw.constant(7, tw.int64), family="fam")
    assert (a.op.name, b.op.name, c.op.name) == ("loss", "loss_1", "train/fam/acc_1")
    assert a.dtype == tw.string and a.shape.as_list() == []
    assert [(v.tag, v.simple_value) for v in run(a).value] == [("loss", 3.5)]
    assert [(v.tag, v.simple_value) for v in run(b).value] == [("loss_1", 7.0)]
    assert [(v.tag, v.simple_value) for v in run(c).value] == [("fam/train/fam/acc_1", 7.0)]
    assert tw.get_collection(tw.GraphKeys.SUMMARIES) == [a, b, c]


def test_scalar_value_is_stored_as_float32() -> None:
    value = run(tw.summary.scalar("p", tw.constant(0.1, tw.float64))).value[0].simple_value
    assert value == float(np.float32(0.1)) != 0.1


def test_collections_argument_replaces_the_default() -> None:
    s = tw.summary.scalar("x", 1.0, collections=["mine"])
    assert tw.get_collection("mine") == [s]
    assert tw.get_collection(tw.GraphKeys.SUMMARIES) == []
    assert tw.summary.merge_all() is None


def test_scalar_of_a_non_scalar_fails_at_run_time_as_in_tf() -> None:
    s = tw.summary.scalar("v", tw.constant([1.0, 2.0]))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"tags and values not the same shape: \[\] != \[2\]"):
        run(s)


def test_summary_of_strings_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        tw.summary.scalar("s", tw.constant("text"))


def tf_histogram(values: list[float]) -> tuple[list[float], list[float]]:
    """TF's histogram.cc, literally: Add each value, then EncodeToProto dropping zero runs."""
    limits = list(DEFAULT_BUCKET_LIMITS)
    counts = [0.0] * len(limits)
    for v in values:
        counts[min(bisect.bisect_right(limits, v), len(limits) - 1)] += 1
    out_limits, out_counts, i = [], [], 0
    while i < len(counts):
        end, count = limits[i], counts[i]
        i += 1
        if count <= 0:
            while i < len(counts) and counts[i] <= 0:
                end, count = limits[i], counts[i]
                i += 1
        out_limits.append(end)
        out_counts.append(count)
    return out_limits, out_counts


def test_default_bucket_limits_are_tfs() -> None:
    limits = DEFAULT_BUCKET_LIMITS
    half = (len(limits) - 1) // 2
    assert limits[half] == 0.0 and limits[half + 1] == 1e-12
    assert limits[-1] == sys.float_info.max and limits[0] == -sys.float_info.max
    assert np.all(np.diff(limits) > 0) and limits[-2] < 1e20 <= limits[-2] * 1.1
    np.testing.assert_allclose(limits[half + 2] / limits[half + 1], 1.1)


def test_histogram_matches_tfs_algorithm() -> None:
    values = np.random.default_rng(0).normal(size=200) * 10.0
    values[:5] = [0.0, 0.0, -1e-13, 1e25, 1e-12]
    histo = make_histogram(values)
    limits, counts = tf_histogram(values.tolist())
    assert list(histo.bucket_limit) == limits and list(histo.bucket) == counts
    assert (histo.min, histo.max, histo.num) == (values.min(), values.max(), 200.0)
    np.testing.assert_allclose([histo.sum, histo.sum_squares],
                               [values.sum(), (values ** 2).sum()])
    empty = make_histogram(np.array([]))
    assert (empty.min, empty.max) == (sys.float_info.max, -sys.float_info.max)
    assert list(empty.bucket) == [0.0] and list(empty.bucket_limit) == [sys.float_info.max]


def test_histogram_summary_op() -> None:
    values = tw.placeholder(tw.float32, [None])
    h = tw.summary.histogram("weights", values)
    assert h.op.type == "HistogramSummary" and h.op.get_attr("T") == tw.float32
    data = np.array([1.0, 2.0, 3.0, -1.0], np.float32)
    (value,) = run(h, {values: data}).value
    assert value.tag == "weights" and value.WhichOneof("value") == "histo"
    assert value.histo == make_histogram(data.astype(np.float64))
    for bad, word in ((np.nan, "Nan"), (np.inf, "Infinity")):
        with pytest.raises(errors.InvalidArgumentError,
                           match=f"{word} in summary histogram for: weights"):
            run(h, {values: [1.0, bad]})


def test_merge_keeps_every_value_in_order() -> None:
    a = tw.summary.scalar("a", 1.0)
    h = tw.summary.histogram("h", [1.0, 2.0])
    b = tw.summary.scalar("b", 2.0)
    merged = tw.summary.merge_all()
    assert merged.op.name == "Merge/MergeSummary" and merged.op.type == "MergeSummary"
    assert [v.tag for v in run(merged).value] == ["a", "h", "b"]
    named = tw.summary.merge([a, b], collections=["merged"], name="pair")
    # (TF names the op inside the scope it opens with the same name)
    assert named.op.name == "pair/pair" and tw.get_collection("merged") == [named]
    assert [v.tag for v in run(named).value] == ["a", "b"]
    assert [v.tag for v in run(tw.summary.merge_all(scope="h")).value] == ["h"]
    assert run(tw.summary.merge([named, h])).value[2].histo is not None


def test_merge_refuses_duplicate_tags_and_garbage() -> None:
    a = tw.summary.scalar("a", 1.0)
    with pytest.raises(errors.InvalidArgumentError, match="Duplicate tag a found"):
        run(tw.summary.merge([a, a]))
    with pytest.raises(errors.InvalidArgumentError, match="Could not parse"):
        run(tw.summary.merge([a, tw.constant(b"\x0a\x05ab")]))
    with pytest.raises(TypeError):
        tw.summary.merge([tw.constant(1.0)])


def test_summaries_run_on_the_host_even_under_a_gpu_scope() -> None:
    from tensorweave.engine.plugin_manager import get_registries

    kernels = get_registries().kernels
    for op in ("ScalarSummary", "HistogramSummary", "MergeSummary"):
        assert kernels.lookup(op, "CPU", tw.float32 if op != "MergeSummary" else None)
        assert kernels.lookup(op, "GPU", tw.float32) is None
    config = tw.ConfigProto(allow_soft_placement=True)
    with tw.device("/gpu:0"):
        s = tw.summary.scalar("x", tw.constant(2.0))
    with tw.Session(config=config) as sess:
        assert Summary.FromString(sess.run(s)).value[0].simple_value == 2.0


def _png_pixels(value: object) -> np.ndarray:
    """The pixels of an image summary value, checked against its stated size."""
    image = png.decode(value.image.encoded_image_string)
    assert image.shape == (value.image.height, value.image.width, value.image.colorspace)
    return image


def test_image_summary_tags_sizes_and_uint8_pixels() -> None:
    images = np.random.RandomState(0).randint(0, 256, (3, 2, 4, 3)).astype(np.uint8)
    many = run(tw.summary.image("pics", images, max_outputs=2))
    one = run(tw.summary.image("pic", images[:1, ..., :1], max_outputs=1))
    assert [v.tag for v in many.value] == ["pics/image/0", "pics/image/1"]
    assert [v.tag for v in one.value] == ["pic/image"]
    assert (many.value[0].image.height, many.value[0].image.width,
            many.value[0].image.colorspace) == (2, 4, 3)
    np.testing.assert_array_equal(_png_pixels(many.value[1]), images[1])
    np.testing.assert_array_equal(_png_pixels(one.value[0]), images[0, ..., :1])
    assert tw.get_collection(tw.GraphKeys.SUMMARIES)[-1].op.type == "ImageSummary"


def test_image_summary_maps_floats_as_tf() -> None:
    positive = np.array([[[0.0], [0.5]], [[1.0], [2.0]]], np.float32)[None]
    mixed = np.array([[[-2.0], [1.0]], [[0.0], [0.5]]], np.float32)[None]
    bad = np.array([[[0.5, 1.0, 0.0], [np.nan, 0.2, 0.1]]], np.float64)[None]
    got = [_png_pixels(run(tw.summary.image(n, x)).value[0])
           for n, x in (("p", positive), ("m", mixed), ("b", bad))]
    # nonnegative: scaled so the max is 255; mixed: 0 -> 128, largest magnitude -> 1 or 255
    np.testing.assert_array_equal(got[0][..., 0], (positive[0, ..., 0] * 127.5).astype(np.uint8))
    np.testing.assert_array_equal(got[1][..., 0],
                                  (mixed[0, ..., 0] * 63.5 + 128).astype(np.uint8))
    # a pixel with a nonfinite channel takes bad_color (red); the rest scale by 255 / max
    np.testing.assert_array_equal(got[2][0], [[127, 255, 0], [255, 0, 0]])


def test_image_summary_bad_shape_fails_at_run_time() -> None:
    summary = tw.summary.image("x", tw.placeholder(tw.float32))
    with pytest.raises(errors.InvalidArgumentError, match="4-D with last dim 1, 3, or 4"):
        run(summary, {summary.op.inputs[1]: np.zeros((1, 2, 2, 2), np.float32)})
    with pytest.raises(errors.InvalidArgumentError, match="4-D"):
        run(summary, {summary.op.inputs[1]: np.zeros((2, 2, 3), np.float32)})


def test_histogram_of_integers_takes_the_values_dtype() -> None:
    summary = tw.summary.histogram("ints", tw.constant([1, 2, 2], tw.int32))
    assert summary.op.get_attr("T") == tw.int32
    histo = run(summary).value[0].histo
    assert (histo.num, histo.sum, histo.min, histo.max) == (3.0, 5.0, 1.0, 2.0)
