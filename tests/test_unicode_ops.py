"""tw.strings.unicode_* against Python's codecs and TF's documented examples."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors

WORDS = ["G\xf6\xf6dnight", "\U0001f60a"]
INP = [w.encode("utf8") for w in WORDS]


def run(x):
    with tw.Session() as s:
        out = s.run(x)
    return out.to_list() if hasattr(out, "to_list") else out


def test_decode_and_offsets_tf_example():
    assert run(tw.strings.unicode_decode(INP, "UTF-8")) == [[ord(c) for c in w] for w in WORDS]
    codes, offsets = tw.strings.unicode_decode_with_offsets(INP, "UTF-8")
    assert run(offsets) == [[0, 1, 3, 5, 6, 7, 8, 9, 10], [0]]
    assert run(codes)[1] == [128522]


def test_decode_ranks_and_encodings():
    scalar = run(tw.strings.unicode_decode("h\xe9".encode("utf-16-be"), "UTF-16-BE"))
    assert isinstance(scalar, np.ndarray) and scalar.dtype == np.int32
    assert scalar.tolist() == [104, 233]
    matrix = [[w.encode("utf-32-be") for w in WORDS]] * 2
    assert run(tw.strings.unicode_decode(matrix, "UTF-32-BE")) == \
        [[[ord(c) for c in w] for w in WORDS]] * 2
    rt = tw.ragged.constant([[INP[0]], [], [INP[1]]])
    assert run(tw.strings.unicode_decode(rt, "UTF-8")) == \
        [[[ord(c) for c in WORDS[0]]], [], [[128522]]]


def test_decode_errors():
    assert run(tw.strings.unicode_decode(b"a\xffb", "UTF-8")).tolist() == [97, 65533, 98]
    assert run(tw.strings.unicode_decode(b"a\xffb", "UTF-8", errors="ignore")).tolist() == \
        [97, 98]
    out = tw.strings.unicode_decode(b"a\x01", "UTF-8", replacement_char=63,
                                    replace_control_characters=True)
    assert run(out).tolist() == [97, 63]
    with pytest.raises(errors.InvalidArgumentError):
        run(tw.strings.unicode_decode([b"a\xff"], "UTF-8", errors="strict"))
    with pytest.raises(ValueError):
        tw.strings.unicode_decode([b"a"], "LATIN-9")


def test_encode_shapes_and_errors():
    rt = tw.ragged.constant([[71, 246, 246, 100, 110, 105, 103, 104, 116], [128522]])
    assert run(tw.strings.unicode_encode(rt, "UTF-8")).tolist() == INP
    assert run(tw.strings.unicode_encode([104, 105], "UTF-16-BE")) == "hi".encode("utf-16-be")
    dense = run(tw.strings.unicode_encode([[[104, 105]], [[106, 107]]], "UTF-8"))
    assert dense.shape == (2, 1) and dense.tolist() == [[b"hi"], [b"jk"]]
    bad = [104, 0xD800, 0x110000]
    assert run(tw.strings.unicode_encode(bad, "UTF-8")) == "h\ufffd\ufffd".encode()
    assert run(tw.strings.unicode_encode(bad, "UTF-8", errors="ignore")) == b"h"
    with pytest.raises(errors.InvalidArgumentError):
        run(tw.strings.unicode_encode(bad, "UTF-8", errors="strict"))
    with pytest.raises(ValueError):
        tw.strings.unicode_encode(5, "UTF-8")


def test_split_and_transcode():
    assert run(tw.strings.unicode_split(INP, "UTF-8")) == \
        [[c.encode() for c in w] for w in WORDS]
    out = run(tw.strings.unicode_transcode(INP, "UTF-8", "UTF-16-BE"))
    assert out.tolist() == [w.encode("utf-16-be") for w in WORDS]
