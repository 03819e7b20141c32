"""Cut JPEG files without ``try_recover_truncated``: the rows TF keeps
(``tensorweave.formats.jpeg_cut``) and the pixels ``DecodeJpeg`` gives with
``acceptable_fraction``, against TF 2.21 (``data/jpeg/tf_cuts.npz``, made by
``make_tf_cut_fixtures.py``: every file cut at every length inside its scan).

The fixture was checked whole once (99 135 cuts, each equal); the suite checks the cuts where
TF's row count changes and their neighbours, the last 24 lengths of each file (where the end
marker goes and the bit reader's look-ahead meets the end), and every 40th length."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.formats import jpeg
from tensorweave.formats.jpeg_cut import rows_read

DATA = Path(__file__).parent / "data" / "jpeg"
CUTS = np.load(DATA / "tf_cuts.npz")
TF = np.load(DATA / "tf.npz")
# the fixture's variants: rows_read's and decode's options for each
VARIANTS = {"": ({}, {}), "_nofancy": ({"fancy_upsampling": False}, {"fancy_upsampling": False}),
            "_ratio2": ({"ratio": 2}, {"ratio": 2}), "_ratio4": ({"ratio": 4}, {"ratio": 4}),
            "_ratio8": ({"ratio": 8}, {"ratio": 8}), "_ch1": ({"grey": True}, {"channels": 1})}


def _split(key: str) -> tuple[str, str]:
    for variant in sorted(VARIANTS, key=len, reverse=True):
        if variant and key.endswith(variant):
            return key[:-len(variant)], variant
    return key, ""


def _data(name: str) -> bytes:
    return (DATA / f"{name}.jpg").read_bytes()


def _checked_cuts(table: np.ndarray) -> np.ndarray:
    rows = table[:, 1]
    changes = np.flatnonzero(rows[1:] != rows[:-1])
    picked = {*changes, *(changes + 1), *range(max(0, len(table) - 24), len(table)),
              *range(0, len(table), 40)}
    return table[sorted(picked)]


def _tf_full(name: str, variant: str) -> np.ndarray:
    key = name + variant
    return TF[key] if key in TF else TF[name]  # _ch1 is left out where equal to the default


@pytest.mark.parametrize("key", sorted(CUTS.files))
def test_rows_read_are_tfs(key: str) -> None:
    name, variant = _split(key)
    data = _data(name)
    options = VARIANTS[variant][0]
    table = CUTS[key]
    for cut, rows in _checked_cuts(table[table[:, 0] < len(data)]):  # the last: no cut
        got = rows_read(data[:cut], **options)
        assert (-1 if got is None else got) == rows, f"{key} cut at {cut} of {len(data)}"


def test_the_fixture_covers_each_rule() -> None:
    rows = {key: set(CUTS[key][:, 1].tolist()) for key in CUTS.files}
    assert rows["c420_q75_96x128"] >= {-1, 0, 14, 30, 46, 62, 78}  # 16k - 2: context rows
    assert rows["c420_q75_96x128_nofancy"] >= {0, 16, 32, 48, 64, 80}
    assert rows["c420_q75_96x128_ch1"] >= {0, 16, 32, 48, 64, 80}  # Y alone: no context
    assert rows["c422_q75_21x35"] >= {0, 8, 16} and rows["grey_q75_23x37"] >= {0, 8, 16}
    assert rows["c420_prog_q75_37x53"] == {-1, 37}  # refused until the file is whole
    assert rows["c420_restart_40x56"] >= {0, 14, 30}


@pytest.mark.parametrize("key", [k for k in sorted(CUTS.files) if "prog" not in k])
def test_decode_keeps_tfs_rows_and_blacks_out_the_rest(key: str) -> None:
    name, variant = _split(key)
    data, full = _data(name), _tf_full(name, variant)
    options = VARIANTS[variant][1]
    table = CUTS[key]
    cuts = table[(table[:, 1] > 0) & (table[:, 0] < len(data))]
    for cut, rows in cuts[:: max(1, len(cuts) // 6)]:
        got = jpeg.decode(data[:cut], acceptable_fraction=0.0, **options)
        np.testing.assert_array_equal(got[:rows], full[:rows], err_msg=f"{key} at {cut}")
        assert not got[rows:].any()


def test_acceptable_fraction_is_tfs_threshold() -> None:
    name = "c420_q75_96x128"
    data = _data(name)
    cut, rows = next((c, r) for c, r in CUTS[name] if r == 46)
    assert jpeg.decode(data[:cut], acceptable_fraction=46 / 96).shape == (96, 128, 3)
    with pytest.raises(errors.InvalidArgumentError, match="46 of 96 rows"):
        jpeg.decode(data[:cut], acceptable_fraction=47 / 96)
    with pytest.raises(errors.InvalidArgumentError, match="Premature end"):
        jpeg.decode(data[:cut])  # acceptable_fraction 1: every cut file is refused
    refused = next(c for c, r in CUTS[name] if r == -1 and c > cut)
    with pytest.raises(errors.InvalidArgumentError, match="0 of 96"):
        jpeg.decode(data[:refused], acceptable_fraction=0.0)  # libjpeg fails outright


def test_decode_jpeg_op_honours_acceptable_fraction() -> None:
    name = "c444_q75_19x29"
    data = _data(name)
    cut, rows = next((c, r) for c, r in CUTS[name] if r == 8)
    with tw.Graph().as_default():
        half = tw.image.decode_jpeg(data[:cut], acceptable_fraction=0.4)
        whole = tw.image.decode_jpeg(data[:cut])
        with tw.Session() as sess:
            got = sess.run(half)
            with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data"):
                sess.run(whole)
    np.testing.assert_array_equal(got[:rows], TF[name][:rows])
    assert not got[rows:].any()


RECOVERED = np.load(DATA / "tf_recover.npz")
RECOVER_FAILURES = set(RECOVERED["failures"].tolist())
DECODE_OPTIONS = {variant: options for variant, (_, options) in VARIANTS.items()}


@pytest.mark.parametrize("key", sorted({k.rsplit("_at", 1)[0] for k in RECOVERED.files
                                        if "_at" in k} | {k.rsplit("_at", 1)[0]
                                                          for k in RECOVER_FAILURES}))
def test_recovered_pixels_are_tfs(key: str) -> None:
    """``try_recover_truncated``: the bytes TF's source hands libjpeg again after the cut
    (``jpeg_cut.recovered_scan``) give TF's pixels, before and after the cut."""
    name, variant = _split(key)
    data = _data(name)
    cuts = sorted(int(k.rsplit("_at", 1)[1]) for k in [*RECOVERED.files, *RECOVER_FAILURES]
                  if k.rsplit("_at", 1)[0] == key)
    for cut in cuts:
        want = f"{key}_at{cut}"
        if want in RECOVER_FAILURES:
            with pytest.raises(errors.InvalidArgumentError):
                jpeg.decode(data[:cut], recover_truncated=True, **DECODE_OPTIONS[variant])
            continue
        got = jpeg.decode(data[:cut], recover_truncated=True, **DECODE_OPTIONS[variant])
        np.testing.assert_array_equal(got, RECOVERED[want], err_msg=want)


def test_recovery_refuses_where_libjpeg_meets_an_unknown_marker() -> None:
    # the bytes read again after this cut hold 0xff 0xf8, which libjpeg's marker reader
    # refuses once the rows are decoded; TF 2.21 refuses the file
    assert "cmyk_q75_13x21_at604" in RECOVER_FAILURES
    with pytest.raises(errors.InvalidArgumentError, match="marker 0xf8"):
        jpeg.decode(_data("cmyk_q75_13x21")[:604], recover_truncated=True)
