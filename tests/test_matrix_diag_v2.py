"""TF 1.15's banded tf.linalg.diag / diag_part / set_diag (MatrixDiagV2, MatrixDiagPartV2,
MatrixSetDiagV2): TF's documented examples, a numpy reference, gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors

# TF's documentation input, shape (2, 3, 4)
DOC_INPUT = np.array([[[1, 2, 3, 4], [5, 6, 7, 8], [9, 8, 7, 6]],
                      [[5, 4, 3, 2], [1, 2, 3, 4], [5, 6, 7, 8]]])


def _run(t, feed=None):
    with tw.Session() as sess:
        return sess.run(t, feed)


def _ref_part(x: np.ndarray, lower: int, upper: int, pad=0) -> np.ndarray:
    """TF 1.15's formula: diagonal[..., m, n] = x[..., n + max(-d, 0), n + max(d, 0)] with
    d = upper - m, else pad."""
    rows, cols = x.shape[-2:]
    width = min(rows + min(upper, 0), cols + min(-lower, 0))
    out = np.full((*x.shape[:-2], upper - lower + 1, width), pad, x.dtype)
    for m in range(upper - lower + 1):
        d = upper - m
        for n in range(width):
            r, c = n + max(-d, 0), n + max(d, 0)
            if r < rows and c < cols:
                out[..., m, n] = x[..., r, c]
    return out[..., 0, :] if lower == upper else out


def test_diag_part_matches_tf_docs() -> None:
    with tw.Graph().as_default():
        assert _run(tw.linalg.diag_part(DOC_INPUT)).tolist() == [[1, 6, 7], [5, 2, 7]]
        assert _run(tw.matrix_diag_part(DOC_INPUT, k=1)).tolist() == [[2, 7, 6], [4, 3, 8]]
        band = tw.linalg.diag_part(DOC_INPUT, k=(1, 3), padding_value=9)
        assert band.shape.as_list() == [2, 3, 3] and band.op.type == "MatrixDiagPartV2"
        assert _run(band).tolist() == [[[4, 9, 9], [3, 8, 9], [2, 7, 6]],
                                       [[2, 9, 9], [3, 4, 9], [4, 3, 8]]]
        got = _run(tw.linalg.diag_part(DOC_INPUT, k=(-1, 2)))
        assert got.tolist() == [[[3, 8, 0], [2, 7, 6], [1, 6, 7], [5, 8, 0]],
                                [[3, 4, 0], [4, 3, 8], [5, 2, 7], [1, 6, 0]]]


@pytest.mark.parametrize("shape, band", [((4, 4), (-3, 3)), ((2, 3, 5), (-2, 1)),
                                         ((5, 3), (-4, -1)), ((3, 6), (2, 5)), ((2, 4), (0, 0))])
def test_round_trips_against_the_reference(shape, band) -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape).astype(np.float32)
    rows, cols = shape[-2:]
    mask = np.zeros((rows, cols), bool)
    for d in range(band[0], band[1] + 1):
        mask |= np.eye(rows, cols, d, dtype=bool)
    with tw.Graph().as_default():
        part = tw.linalg.diag_part(x, k=band, padding_value=-7.0)
        rebuilt = tw.linalg.diag(part, k=band, num_rows=rows, num_cols=cols,
                                 padding_value=5.0)
        cleared = tw.linalg.set_diag(x, tw.zeros_like(part), k=band)
        got_part, got_rebuilt, got_cleared = _run([part, rebuilt, cleared])
    assert part.shape.as_list() == list(got_part.shape)
    np.testing.assert_array_equal(got_part, _ref_part(x, *band, pad=-7.0))
    np.testing.assert_array_equal(got_rebuilt, np.where(mask, x, 5.0))
    np.testing.assert_array_equal(got_cleared, np.where(mask, 0.0, x))
    assert got_rebuilt.dtype == np.float32


def test_diag_infers_the_smallest_matrix() -> None:
    with tw.Graph().as_default():
        single = tw.linalg.diag([1, 2], k=1)
        assert single.shape.as_list() == [3, 3]
        assert _run(single).tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
        rows = tw.linalg.diag([[1, 2], [3, 4]], k=-1, num_cols=2)
        assert rows.shape.as_list() == [2, 3, 2]
        assert _run(rows).tolist() == [[[0, 0], [1, 0], [0, 2]], [[0, 0], [3, 0], [0, 4]]]
        # a tridiagonal band; 1.15 packs every diagonal from the left (later TFs align the
        # subdiagonals right: [0, 4, 5])
        tri = tw.linalg.diag(np.array([[[8, 9, 0], [1, 2, 3], [4, 5, 0]]]), k=(-1, 1))
        assert _run(tri).tolist() == [[[1, 8, 0], [4, 2, 9], [0, 5, 3]]]
        # the defaults still build the V1 op
        assert tw.linalg.diag([1, 2]).op.type == "MatrixDiag"


@pytest.mark.parametrize("build", [
    lambda x: tw.linalg.diag_part(x, k=(-1, 2)),
    lambda x: tw.linalg.diag(x[:, :2, :], k=(-1, 0), num_rows=5),
    lambda x: tw.linalg.set_diag(x * 2.0, tw.ones([2, 2, 3], tw.float64), k=(0, 1)),
    lambda x: tw.linalg.set_diag(tw.ones([2, 3, 4], tw.float64), x[:, :2, :3] * 3.0, k=(1, 2)),
])
def test_gradients(build) -> None:
    x_value = np.random.default_rng(2).normal(size=(2, 3, 4))
    with tw.Graph().as_default():
        x = tw.constant(x_value)
        y = build(x)
        with tw.Session():
            err = tw.test.compute_gradient_error(x, [2, 3, 4], y, y.shape.as_list(),
                                                 x_init_value=x_value)
    assert err < 1e-6


def test_errors() -> None:
    with tw.Graph().as_default():
        with pytest.raises(ValueError, match="must not be larger"):
            tw.linalg.diag_part(DOC_INPUT, k=(2, 1))
        with pytest.raises(ValueError, match="number of diagonals"):
            tw.linalg.diag(DOC_INPUT, k=(0, 1))
        with pytest.raises(ValueError, match="scalar or vector"):
            tw.linalg.diag_part(DOC_INPUT, k=[1, 2, 3])
        k = tw.placeholder(tw.int32)
        with pytest.raises(errors.InvalidArgumentError, match="lower_diag_index is out of bound"):
            _run(tw.linalg.diag_part(DOC_INPUT, k=k), {k: [-3, 0]})
        with pytest.raises(errors.InvalidArgumentError, match="number of rows is too small"):
            _run(tw.linalg.diag([1, 2, 3], k=1, num_rows=2, num_cols=k), {k: 4})
        with pytest.raises(errors.InvalidArgumentError, match="diagonal must have shape"):
            _run(tw.linalg.set_diag(DOC_INPUT, np.zeros((2, 2, 2), np.int64), k=k), {k: [0, 1]})
