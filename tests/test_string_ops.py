"""Dense string ops (`tw.strings`, `tw.string_join`, `tw.substr`, `tw.reduce_join`, ...)
against Python references and TF's documented results."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.engine.plugin_manager import get_registries

WORDS = ["hello", "  Wörld\t", "", "ünï cödé", "abc\n"]


def _run(fetches: Any, feed: dict | None = None) -> Any:
    with tw.Session() as sess:
        return sess.run(fetches, feed)


def _bytes(values: list[str]) -> list[bytes]:
    return [v.encode() for v in values]


# --- StringJoin ------------------------------------------------------------------------------

def test_string_join_broadcasts_scalars_and_joins_with_the_separator() -> None:
    a = tw.constant([["a", "b"], ["c", "d"]])
    out = tw.strings.join([a, "-", tw.constant([["1", "2"], ["3", "4"]])], separator="|")
    assert out.dtype == tw.string and out.shape.as_list() == [2, 2]
    assert out.op.type == "StringJoin" and out.op.get_attr("N") == 3
    assert _run(out).tolist() == [[b"a|-|1", b"b|-|2"], [b"c|-|3", b"d|-|4"]]
    scalar = tw.string_join(["x", "y"])
    assert scalar.shape.as_list() == [] and _run(scalar) == b"xy"


def test_string_join_refuses_mismatched_shapes_and_non_strings() -> None:
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        tw.strings.join([tw.constant(["a", "b"]), tw.constant(["a", "b", "c"])])
    with pytest.raises(ValueError, match="Shapes must be equal rank"):
        tw.strings.join([tw.constant(["a"]), tw.constant([["a"]])])
    with pytest.raises(TypeError):
        tw.strings.join([tw.constant(["a"]), tw.constant([1])])
    p, q = tw.placeholder(tw.string), tw.placeholder(tw.string, [None])
    out = tw.strings.join([p, q], name="joined")
    assert out.shape.as_list() == [None]  # p's unknown rank may be a scalar
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Input shapes do not match: \[2\] vs. \[3\]") as info:
        _run(out, {p: ["a", "b"], q: ["a", "b", "c"]})
    assert info.value.op.name == "joined"


# --- StringLength, upper/lower, strip --------------------------------------------------------

def test_string_length_counts_bytes_or_utf8_characters() -> None:
    words = tw.constant(WORDS)
    byte_len = tw.strings.length(words)
    char_len = tw.strings.length(words, unit="UTF8_CHAR")
    assert byte_len.dtype == char_len.dtype == tw.int32
    got_bytes, got_chars = _run([byte_len, char_len])
    assert got_bytes.dtype == np.int32 and got_bytes.tolist() == [len(w.encode()) for w in WORDS]
    assert got_chars.tolist() == [len(w) for w in WORDS]
    with pytest.raises(ValueError, match="Attr 'unit'"):
        tw.strings.length(words, unit="UTF16_CHAR")


def test_upper_lower_are_ascii_only_unless_utf8_and_strip_takes_ascii_space() -> None:
    words = tw.constant(WORDS)
    outs = [tw.strings.upper(words), tw.strings.lower(words),
            tw.strings.upper(words, encoding="utf-8"), tw.strings.strip(words),
            tw.string_strip(words)]
    upper, lower, utf8_upper, stripped, stripped_alias = _run(outs)
    raw = _bytes(WORDS)
    assert upper.tolist() == [w.upper() for w in raw]  # bytes.upper: ASCII letters only
    assert b"\xc3\xb6" in upper.tolist()[1]  # the ö is left alone
    assert lower.tolist() == [w.lower() for w in raw]
    assert utf8_upper.tolist() == _bytes([w.upper() for w in WORDS])
    assert stripped.tolist() == stripped_alias.tolist() == [w.strip() for w in raw]
    bad = tw.strings.upper(words, encoding="latin-1")
    with pytest.raises(errors.InvalidArgumentError, match="only utf-8"):
        _run(bad)


# --- Substr ----------------------------------------------------------------------------------

def test_substr_in_bytes_with_negative_pos_and_len() -> None:
    words = tw.constant(["Hello", "World!"])
    outs = [tw.substr(words, 1, 3), tw.strings.substr(words, -3, 2),
            tw.substr(words, 2, -1), tw.substr(words, [0, 5], [2, 9]),
            tw.substr(words, tw.constant(5, tw.int64), tw.constant(1, tw.int64))]
    assert all(o.shape.as_list() == [2] for o in outs)
    got = [v.tolist() for v in _run(outs)]
    assert got == [[b"ell", b"orl"], [b"ll", b"ld"], [b"llo", b"rld!"], [b"He", b"!"],
                   [b"", b"!"]]


def test_substr_in_utf8_characters() -> None:
    text = ["ünï cödé", "añb"]
    outs = [tw.strings.substr(text, 1, 3, unit="UTF8_CHAR"),
            tw.strings.substr(text, -2, 5, unit="UTF8_CHAR"),
            tw.strings.substr(text, 0, -1, unit="UTF8_CHAR")]
    got = [v.tolist() for v in _run(outs)]
    assert got == [_bytes([t[1:4] for t in text]), _bytes([t[-2:] for t in text]), [b"", b""]]
    with pytest.raises(errors.InvalidArgumentError, match="pos 4 out of range for string at "
                                                          "index 1"):
        _run(tw.strings.substr(text, 4, 1, unit="UTF8_CHAR"))


def test_substr_broadcasts_pos_and_len_over_the_input() -> None:
    words = tw.constant([["abcd", "efgh"], ["ijkl", "mnop"]])
    out = tw.substr(words, [0, 2], [1, 2])
    assert out.shape.as_list() == [2, 2]
    assert _run(out).tolist() == [[b"a", b"gh"], [b"i", b"op"]]
    with pytest.raises(ValueError, match="pos and len shapes must match"):
        tw.substr(words, [0, 1], [1])
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.substr(words, [0, 1, 2], [1, 1, 1])
    with pytest.raises(TypeError):
        tw.substr(words, 0.5, 1.0)
    with pytest.raises(TypeError):
        tw.substr(tw.constant([1, 2]), 0, 1)


def test_substr_out_of_range_is_tf_error_naming_the_node() -> None:
    p = tw.placeholder(tw.string, [None])
    out = tw.substr(p, 4, 1, name="cut")
    assert _run(out, {p: ["abcd"]}).tolist() == [b""]  # pos == length is allowed
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"pos 4 out of range for string b'abc' at index 1") as info:
        _run(out, {p: ["abcd", "abc"]})
    assert info.value.op.name == "cut" and info.value.op.type == "Substr"
    with pytest.raises(errors.InvalidArgumentError, match="pos -5 out of range"):
        _run(tw.substr(p, -5, 1), {p: ["abcd"]})


# --- regexes ---------------------------------------------------------------------------------

def test_regex_replace_global_first_and_groups() -> None:
    text = tw.constant(["aaa bbb", "abab", "none"])
    static = tw.regex_replace(text, "(a)(b)?", r"<\2\1\0>")
    first = tw.strings.regex_replace(text, "a", "X", replace_global=False)
    dynamic = tw.strings.regex_replace(text, tw.constant("b+"), tw.constant("B"))
    assert static.op.type == "StaticRegexReplace" and dynamic.op.type == "RegexReplace"
    got = [v.tolist() for v in _run([static, first, dynamic])]
    assert got[0] == [b"<aa><aa><aa> bbb", b"<baab><baab>", b"none"]
    assert got[1] == [b"Xaa bbb", b"Xbab", b"none"]
    assert got[2] == [b"aaa B", b"aBaB", b"none"]


def test_regex_replace_follows_re2_on_empty_matches_escapes_and_unicode() -> None:
    text = tw.constant(["abxd", "é1ü22", "a\\b"])
    outs = [tw.regex_replace(text, "x*", "-"),  # RE2 skips the empty match right after "x"
            tw.regex_replace(text, r"\d", "#"),
            tw.regex_replace(text, ".", "."),  # one match per UTF-8 character
            tw.regex_replace(text, r"\\", r"\\\\"),
            tw.regex_replace(text, "b", r"\9")]  # a group the pattern lacks: no change
    got = [v.tolist() for v in _run(outs)]
    assert got[0][0] == b"-a-b-d-"
    assert got[1][1] == "é#ü##".encode()
    assert got[2] == [b"....", b".....", b"..."]
    assert got[3][2] == b"a\\\\b"
    assert got[4] == _bytes(["abxd", "é1ü22", "a\\b"])


def test_regex_full_match_and_pattern_errors() -> None:
    text = tw.constant(["abc", "ab1", ""])
    outs = [tw.strings.regex_full_match(text, "[a-z]*"),
            tw.strings.regex_full_match(text, tw.constant("ab.?"))]
    assert outs[0].dtype == tw.bool and outs[1].op.type == "RegexFullMatch"
    got = [v.tolist() for v in _run(outs)]
    assert got == [[True, False, True], [True, True, False]]
    with pytest.raises(ValueError, match="Shape must be rank 0"):
        tw.strings.regex_full_match(text, tw.constant(["a", "b", "c"]))
    with pytest.raises(ValueError, match="Shape must be rank 0"):
        tw.strings.regex_replace(text, "a", tw.constant(["x"]))
    p = tw.placeholder(tw.string, [])
    with pytest.raises(errors.InvalidArgumentError, match=r"Invalid pattern: a\(, error"):
        _run(tw.strings.regex_replace(text, p, "x"), {p: "a("})
    with pytest.raises(errors.InvalidArgumentError, match=r"Invalid pattern: \[, error"):
        _run(tw.strings.regex_full_match(text, "["))


# --- numbers ---------------------------------------------------------------------------------

def test_string_to_number_parses_as_tf() -> None:
    floats = tw.string_to_number(["1.5", " -2e3 ", "0x1F", "INF", ".5", "+7"])
    doubles = tw.strings.to_number(["0.1", "1e300"], out_type=tw.float64)
    ints = tw.strings.to_number([" 42", "-2147483648", "007"], out_type=tw.int32)
    longs = tw.strings.to_number(["9223372036854775807"], out_type="int64")
    assert [o.dtype for o in (floats, doubles, ints, longs)] == [
        tw.float32, tw.float64, tw.int32, tw.int64]
    got = _run([floats, doubles, ints, longs])
    assert got[0].dtype == np.float32
    assert got[0].tolist() == [1.5, -2000.0, 31.0, float("inf"), 0.5, 7.0]
    assert got[1].tolist() == [0.1, 1e300]
    assert got[2].dtype == np.int32 and got[2].tolist() == [42, -2147483648, 7]
    assert got[3].tolist() == [2**63 - 1]
    with pytest.raises(TypeError):
        tw.strings.to_number(["1"], out_type=tw.uint8)


@pytest.mark.parametrize("text, out_type", [
    ("abc", tw.float32), ("1.5", tw.int32), ("+1", tw.int32), ("2147483648", tw.int32),
    ("1e", tw.float32), ("infinity", tw.float64), ("1" * 32, tw.float32), ("", tw.float32),
    ("1_000", tw.int64),
])
def test_string_to_number_refuses_what_tf_refuses(text: str, out_type: tw.DType) -> None:
    p = tw.placeholder(tw.string, [None])
    out = tw.strings.to_number(p, out_type=out_type, name="num")
    with pytest.raises(errors.InvalidArgumentError,
                       match="StringToNumberOp could not correctly convert string") as info:
        _run(out, {p: ["1", text]})
    assert info.value.op.name == "num"


def test_as_string_formats_as_printf() -> None:
    ints = tw.constant([3, -12], tw.int64)
    floats = tw.constant([1.5, 1234.5678, -0.000125])
    outs = [tw.as_string(ints), tw.as_string(ints, width=5, fill="0"),
            tw.strings.as_string(ints, width=4, fill="-"), tw.as_string(floats),
            tw.as_string(floats, precision=2), tw.as_string(floats, scientific=True),
            tw.as_string(floats, shortest=True), tw.as_string(tw.constant([True, False])),
            tw.as_string(tw.constant(7, tw.int8), width=3)]
    got = [np.asarray(v).tolist() for v in _run(outs)]
    assert got[0] == [b"3", b"-12"]
    assert got[1] == [b"00003", b"-0012"]
    assert got[2] == [b"3   ", b"-12 "]
    assert got[3] == [b"1.500000", b"1234.567749", b"-0.000125"]  # float32 values, as C's
    assert got[4] == [b"1.50", b"1234.57", b"-0.00"]
    assert got[5] == [b"1.500000e+00", b"1.234568e+03", b"-1.250000e-04"]
    assert got[6] == [b"1.5", b"1234.57", b"-0.000125"]
    assert got[7] == [b"true", b"false"]
    assert got[8] == b"  7"


def test_as_string_refuses_bad_attrs_and_dtypes() -> None:
    ints, floats = tw.constant([1]), tw.constant([1.0])
    for out, message in [(tw.as_string(ints, precision=2), "precision not supported"),
                         (tw.as_string(ints, scientific=True), "scientific and shortest"),
                         (tw.as_string(floats, scientific=True, shortest=True),
                          "Cannot select both"),
                         (tw.as_string(floats, fill="ab"), "one or fewer characters"),
                         (tw.as_string(floats, fill="x"), "Fill argument not supported")]:
        with pytest.raises(errors.InvalidArgumentError, match=message):
            _run(out)
    with pytest.raises(TypeError):
        tw.as_string(tw.constant(["a"]))
    with pytest.raises(TypeError):
        tw.as_string(tw.constant([1], tw.uint8))  # not in TF1's list


# --- ReduceJoin ------------------------------------------------------------------------------

def test_reduce_join_matches_tf_documentation() -> None:
    a = [["a", "b"], ["c", "d"]]
    cases = {
        (0,): [b"ac", b"bd"], (1,): [b"ab", b"cd"], (-2,): [b"ac", b"bd"],
        (-1,): [b"ab", b"cd"], ((0, 1),): b"acbd", ((1, 0),): b"abcd",
        ((),): [[b"a", b"b"], [b"c", b"d"]],
    }
    outs = {k: tw.reduce_join(a, *k) for k in cases}
    outs["all"] = tw.strings.reduce_join(a)
    outs["keep0"] = tw.reduce_join(a, 0, keep_dims=True)
    outs["keep1"] = tw.reduce_join(a, 1, keepdims=True)
    outs["sep"] = tw.reduce_join(a, 0, separator=".")
    assert outs["all"].shape.as_list() == [] and outs["keep0"].shape.as_list() == [1, 2]
    got = _run(outs)
    for key, want in cases.items():
        assert np.asarray(got[key]).tolist() == want, key
    assert got["all"] == b"abcd"
    assert got["keep0"].tolist() == [[b"ac", b"bd"]]
    assert got["keep1"].tolist() == [[b"ab"], [b"cd"]]
    assert got["sep"].tolist() == [b"a.c", b"b.d"]


def test_reduce_join_of_unknown_rank_and_bad_axes() -> None:
    p = tw.placeholder(tw.string)
    everything = tw.reduce_join(p, separator=" ")
    cube = np.array([[["a", "b"], ["c", "d"]], [["e", "f"], ["g", "h"]]])
    assert _run(everything, {p: cube}) == b"a b c d e f g h"
    with pytest.raises(ValueError, match="Invalid reduction dimension 2"):
        tw.reduce_join(tw.constant([["a"]]), 2)
    with pytest.raises(ValueError, match="Cannot specify both"):
        tw.reduce_join(p, 0, reduction_indices=0)
    axes = tw.placeholder(tw.int32, [None])
    out = tw.reduce_join(p, axes, name="rj")
    assert out.shape.ndims is None
    with pytest.raises(errors.OutOfRangeError, match="Invalid reduction dimension 3 for input "
                                                     "with 3 dimension"):
        _run(out, {p: cube, axes: [3]})
    with pytest.raises(errors.InvalidArgumentError, match="Duplicate reduction dimension -3"):
        _run(out, {p: cube, axes: [0, -3]})
    rows = tw.placeholder(tw.string, [2, None])
    assert _run(tw.reduce_join(rows, 1), {rows: np.empty((2, 0), object)}).tolist() == [b"", b""]


# --- hash buckets and base64 -----------------------------------------------------------------

def test_hash_buckets_match_tf() -> None:
    words = tw.constant(["a", "b", "c", "d"])
    fast = tw.strings.to_hash_bucket_fast(words, 10)
    one = tw.string_to_hash_bucket_fast(words, 1)
    strong = tw.strings.to_hash_bucket_strong(words[:3], 10, key=[98765, 132])
    assert fast.dtype == strong.dtype == tw.int64
    got = _run([fast, one, strong])
    assert got[0].dtype == np.int64 and got[0].tolist() == [9, 2, 2, 5]
    assert got[1].tolist() == [0, 0, 0, 0]
    assert got[2].tolist() == [4, 2, 8]
    with pytest.raises(ValueError, match="num_buckets"):
        tw.strings.to_hash_bucket_fast(words, 0)
    with pytest.raises(errors.InvalidArgumentError, match="Key must have 2 elements"):
        _run(tw.string_to_hash_bucket_strong(words, 10, key=[98765]))


def test_legacy_hash_bucket_matches_tf() -> None:
    # TF's string_to_hash_bucket_op_test.py: Hash64('a', 'b', 'c') % 10 -> 8, 0, 7.
    words = tw.placeholder(tw.string)
    legacy = tw.string_to_hash_bucket(words, 10)
    one = tw.strings.to_hash_bucket(words, 1, name="one")
    assert legacy.dtype == tw.int64 and legacy.op.type == "StringToHashBucket"
    assert one.op.name == "one"
    got = _run([legacy, one], {words: [["a", "b", "c"]]})
    assert got[0].dtype == np.int64 and got[0].tolist() == [[8, 0, 7]]
    assert got[1].tolist() == [[0, 0, 0]]
    with pytest.raises(ValueError, match="num_buckets"):
        tw.string_to_hash_bucket(words, 0)
    with pytest.raises((TypeError, ValueError)):
        tw.string_to_hash_bucket(tw.constant([1, 2]), 3)


def test_base64_is_web_safe_and_round_trips() -> None:
    data = [b"hello?", b"\xff\xfe", b""]
    encoded = tw.encode_base64(tw.constant(data))
    padded = tw.encode_base64(tw.constant(data), pad=True)
    got = _run([encoded, padded, tw.decode_base64(encoded), tw.decode_base64(padded)])
    assert got[0].tolist() == [base64.urlsafe_b64encode(d).rstrip(b"=") for d in data]
    assert got[1].tolist() == [base64.urlsafe_b64encode(d) for d in data]
    assert got[2].tolist() == got[3].tolist() == data
    with pytest.raises(errors.InvalidArgumentError, match="Invalid character found in base64"):
        _run(tw.decode_base64(["a+b/"]))


# --- StringSplit / StringSplitV2 ------------------------------------------------------------

def _rows(value: tw.SparseTensorValue) -> list[list[bytes]]:
    """The tokens of a fetched split, row by row, checked to be laid out as TF's kernel does."""
    assert isinstance(value, tw.SparseTensorValue)
    assert value.indices.dtype == np.int64 and value.dense_shape.dtype == np.int64
    assert value.values.dtype == object and value.indices.shape == (len(value.values), 2)
    rows: list[list[bytes]] = [[] for _ in range(int(value.dense_shape[0]))]
    for (row, col), token in zip(value.indices.tolist(), value.values.tolist()):
        assert col == len(rows[row])  # row-major, columns 0, 1, 2, ... within a row
        rows[row].append(token)
    assert value.dense_shape[1] == max((len(r) for r in rows), default=0)
    return rows


def test_string_split_gives_tfs_documented_sparse_tensor() -> None:
    sp = tw.string_split(["hello world", "a b c"])
    assert isinstance(sp, tw.SparseTensor) and sp.values.op.type == "StringSplit"
    assert sp.dtype == tw.string and sp.indices.dtype == sp.dense_shape.dtype == tw.int64
    assert sp.indices.shape.as_list() == [None, 2] and sp.values.shape.as_list() == [None]
    assert sp.dense_shape.shape.as_list() == [2]
    got = _run(sp)
    assert got.indices.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]]
    assert got.values.tolist() == [b"hello", b"world", b"a", b"b", b"c"]
    assert got.dense_shape.tolist() == [2, 3]


def test_string_split_splits_at_every_delimiter_byte_and_skips_empty_tokens() -> None:
    source = ["a,b;;c", ",x,", "", "no-split"]
    skip = tw.string_split(source, ",;")
    keep = tw.string_split(source, delimiter=",;", skip_empty=False)
    assert keep.values.op.get_attr("skip_empty") is False
    got_skip, got_keep = _run([skip, keep])
    assert _rows(got_skip) == [[b"a", b"b", b"c"], [b"x"], [], [b"no-split"]]
    # an empty string has no tokens even when empty ones are kept, as TF's Split
    assert _rows(got_keep) == [[b"a", b"b", b"", b"c"], [b"", b"x", b""], [], [b"no-split"]]
    with pytest.raises(ValueError, match="Cannot specify both 'sep' and 'delimiter'"):
        tw.string_split(source, ",", delimiter=";")


def test_string_split_with_empty_delimiter_gives_single_bytes_of_utf8() -> None:
    text = "hé 中"
    got = _run(tw.string_split([text, "ab"], ""))
    raw = text.encode()
    assert _rows(got) == [[raw[i:i + 1] for i in range(len(raw))], [b"a", b"b"]]
    assert got.dense_shape.tolist() == [2, len(raw)]
    # a multi-byte delimiter is a set of bytes: each byte of the UTF-8 "é" splits
    by_bytes = _run(tw.string_split(["xéy"], "é", skip_empty=False))
    assert _rows(by_bytes) == [[b"x", b"", b"y"]]


def test_strings_split_follows_python_bytes_split() -> None:
    source = ["1<>2<><>3", "<>", "", "a<>b<>c<>d", "ü<>é"]
    for maxsplit in (-1, 1, 2):
        got = _run(tw.strings.split(source, sep="<>", maxsplit=maxsplit))
        assert _rows(got) == [s.encode().split(b"<>", maxsplit) for s in source], maxsplit
    doc = _run(tw.strings.split(["1<>2<><>3"], "<>"))
    assert doc.values.tolist() == [b"1", b"2", b"", b"3"]  # TF's documented example
    sp = tw.strings.split(source=["a b"], sep="é", maxsplit=3)
    assert sp.values.op.type == "StringSplitV2" and sp.values.op.get_attr("maxsplit") == 3


def test_strings_split_without_sep_splits_on_whitespace_runs() -> None:
    sp = tw.strings.split(["hello world", "a b c"])
    doc = _run(sp)
    assert doc.indices.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]]
    assert doc.values.tolist() == [b"hello", b"world", b"a", b"b", b"c"]
    assert doc.dense_shape.tolist() == [2, 3]
    source = ["  lead and trail \t", "", " \n\v\f\r ", "t\u00e9l\u00e9 \u00fcber"]
    got = _run(tw.strings.split(source))
    assert _rows(got) == [s.encode().split() for s in source]


def test_strings_split_maxsplit_without_sep_is_tfs_splitv2() -> None:
    source = ["a b  c d", "a ", "  x y", ""]
    one, two, zero = _run([tw.strings.split(source, maxsplit=1),
                           tw.strings.split(source, maxsplit=2),
                           tw.strings.split(source, maxsplit=0)])
    assert _rows(one) == [[b"a", b"b  c d"], [b"a", b""], [b"x", b"y"], []]
    # the rest after the last allowed split is kept even when empty (Python drops it)
    assert _rows(two) == [[b"a", b"b", b"c d"], [b"a"], [b"x", b"y", b""], []]
    # maxsplit=0 keeps each string whole, leading space and empty string included
    assert _rows(zero) == [[s.encode()] for s in source]


def test_split_composes_with_sparse_to_dense_and_fed_inputs() -> None:
    p = tw.placeholder(tw.string, [None])
    sep = tw.placeholder(tw.string, [])
    sp = tw.strings.split(p, sep)
    dense = tw.sparse.to_dense(sp, default_value=b"")
    assert dense.dtype == tw.string and dense.shape.as_list() == [None, None]
    got = _run(dense, {p: ["a,b,c", "d", ""], sep: ","})
    assert got.dtype == object
    assert got.tolist() == [[b"a", b"b", b"c"], [b"d", b"", b""], [b"", b"", b""]]
    words = _run(tw.sparse.to_dense(tw.string_split(p), default_value=b"-"),
                 {p: ["one two", "three"]})
    assert words.tolist() == [[b"one", b"two"], [b"three", b"-"]]
    empty = _run(sp, {p: [], sep: ","})
    assert empty.indices.shape == (0, 2) and empty.values.shape == (0,)
    assert empty.dense_shape.tolist() == [0, 0]


def test_split_refuses_non_vectors_and_non_strings() -> None:
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tw.string_split([["a b"], ["c"]])
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
        tw.strings.split("a b")
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tw.strings.split(["a b"], sep=[",", ";"])
    with pytest.raises(ValueError, match="result_type must be 'RaggedTensor' or 'SparseTensor'"):
        tw.string_split(["a b"], result_type="Tensor")
    with pytest.raises(TypeError):
        tw.string_split([1, 2])
    with pytest.raises(ValueError, match="requested dtype string for Tensor with dtype int32"):
        tw.strings.split(tw.constant([1, 2]))
    with pytest.raises(ValueError, match="Cannot specify both 'input' and 'source'"):
        tw.strings.split(["a"], source=["b"])


def test_split_checks_ranks_of_fed_inputs_at_run_time() -> None:
    p = tw.placeholder(tw.string)
    sep = tw.placeholder(tw.string)
    sp = tw.strings.split(p, sep, name="splitter")
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"input must be a vector, got shape: \[2,1\]") as info:
        _run(sp, {p: [["a"], ["b"]], sep: ","})
    assert info.value.op.name == "splitter/StringSplitV2"
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"sep must be a scalar, got shape: \[1\]"):
        _run(sp, {p: ["a"], sep: [","]})
    v1 = tw.string_split(p, sep)
    with pytest.raises(errors.InvalidArgumentError, match="delimiter must be a scalar"):
        _run(v1, {p: ["a"], sep: [","]})


# --- StringFormat ---------------------------------------------------------------------------

def test_strings_format_gives_tfs_documented_results() -> None:
    one = tw.strings.format("tensor: {}, suffix", tw.range(5))
    two = tw.strings.format("a: {}, b: {}, suffix", (tw.range(2), tw.range(1, 4, 2)))
    assert one.dtype == tw.string and one.shape.as_list() == [] and one.op.type == "StringFormat"
    assert one.op.get_attr("placeholder") == "{}" and one.op.get_attr("summarize") == 3
    assert _run([one, two]) == [b"tensor: [0 1 2 3 4], suffix", b"a: [0 1], b: [1 3], suffix"]


def test_strings_format_summarizes_each_dimension_at_both_ends() -> None:
    grid = tw.reshape(tw.range(100), [10, 10])
    got = _run(tw.strings.format("tensor: {}, suffix", grid, summarize=3))
    assert got == (b"tensor: [[0 1 2 ... 7 8 9]\n [10 11 12 ... 17 18 19]\n"
                   b" [20 21 22 ... 27 28 29]\n ...\n [70 71 72 ... 77 78 79]\n"
                   b" [80 81 82 ... 87 88 89]\n [90 91 92 ... 97 98 99]], suffix")
    cube = tw.reshape(tw.range(8), [2, 2, 2])
    everything, row = _run([tw.strings.format("{}", cube, summarize=-1),
                            tw.strings.format("<>", [tw.range(9)], placeholder="<>",
                                              summarize=1)])
    assert everything == b"[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]"
    assert row == b"[0 ... 8]"
    summarized = _run([tw.strings.format("{}", tw.range(6), summarize=n) for n in (1, 2, 3, 10)])
    assert summarized == [b"[0 ... 5]", b"[0 1 ... 4 5]", b"[0 1 2 3 4 5]", b"[0 1 2 3 4 5]"]
    floats = tw.constant([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    assert _run(tw.strings.format("{}", floats)) == b"[0 0.1 0.2 ... 0.5 0.6 0.7]"
    assert _run(tw.strings.format("{}", grid, summarize=1)) == b"[[0 ... 9]\n ...\n [90 ... 99]]"


def test_strings_format_quotes_and_escapes_strings_and_shows_other_dtypes_as_tf() -> None:
    words = tw.constant(['say "hi"', "\u00e9\n\x01f\\"])
    out = tw.strings.format("{} | {} | {} | {} | {}",
                            [words, tw.constant([True, False]), tw.constant([0.1, 2.0]),
                             tw.constant(0.1, tw.float64), tw.constant("scalar")])
    assert _run(out).decode() == ('["say \\"hi\\"" "\u00e9\\n\\001f\\\\"] | [1 0] | '
                                  '[0.1 2] | 0.1 | "scalar"')


def test_strings_format_refuses_a_placeholder_count_mismatch() -> None:
    with pytest.raises(ValueError, match=r"2 placeholder\(s\) in template does not match 1 "
                                         r"tensor\(s\) provided as input"):
        tw.strings.format("{} and {}", tw.constant(1))
    assert _run(tw.strings.format("No tensor.", ())) == b"No tensor."
    with pytest.raises(ValueError, match="must match: 0 vs. 1"):
        tw.raw_ops.StringFormat(inputs=[tw.constant(1)], template="none", placeholder="{}")
    raw = tw.raw_ops.StringFormat(inputs=[tw.constant(1), tw.constant([1.5, 2.0])],
                                  template="%s and %s")
    assert _run(raw) == b"1 and [1.5 2]"


# --- placement and registration --------------------------------------------------------------

STRING_OPS = ("StringJoin", "StringLength", "Substr", "StringUpper", "StringLower",
              "StringStrip", "RegexReplace", "StaticRegexReplace", "RegexFullMatch",
              "StaticRegexFullMatch", "StringToNumber", "AsString", "ReduceJoin",
              "StringToHashBucketFast", "StringToHashBucketStrong", "EncodeBase64",
              "DecodeBase64", "StringSplit", "StringSplitV2", "StringFormat")


def test_string_kernels_are_host_only_and_have_no_gradient() -> None:
    from tensorweave.engine.registry import KernelRegistry
    from tensorweave.plugins.gpu import kernels

    registries = get_registries()
    gpu = KernelRegistry()
    kernels.register_kernels(gpu.bind("gpu"))
    gpu.freeze()
    for op in STRING_OPS:
        assert registries.ops.get(op).grad is None, op
        assert registries.kernels.lookup(op, "CPU", None) is not None, op
        assert gpu.lookup(op, "GPU", None) is None, op
        assert hasattr(tw.raw_ops, op), op


def test_string_op_runs_on_a_worker_of_a_local_cluster() -> None:
    from tensorweave.train.local_cluster import LocalCluster

    with LocalCluster({"worker": 2}) as cluster:
        with tw.device("/job:worker/task:1"):
            p = tw.placeholder(tw.string, [None], name="p")
            shouted = tw.strings.upper(tw.string_join([p, "!"]))
            counts = tw.strings.to_number(tw.regex_replace(p, "[^0-9]", ""), out_type=tw.int32)
        with tw.device("/job:worker/task:0"):
            joined = tw.reduce_join(shouted, separator=" ")
        with tw.Session(cluster.target("worker", 0)) as sess:
            got_joined, got_counts = sess.run([joined, counts], {p: ["ab1", "c\u00e92"]})
    assert got_joined == "AB1! C\u00e92!".encode()
    assert got_counts.tolist() == [1, 2]


# --- UnsortedSegmentJoin ------------------------------------------------------------------------

def test_unsorted_segment_join_joins_rows_in_row_major_order() -> None:
    data = [["Y", "q", "c"], ["Y", "6", "6"], ["p", "G", "a"]]
    out = _run(tw.strings.unsorted_segment_join(data, [1, 0, 1], 3, separator=":"))
    assert out.dtype == object and out.shape == (3, 3)
    assert out.tolist() == [[b"Y", b"6", b"6"], [b"Y:p", b"q:G", b"c:a"], [b"", b"", b""]]
    ids = tw.constant([[0, 1], [0, 0]], tw.int64)
    assert _run(tw.strings.unsorted_segment_join([["a", "b"], ["c", "d"]], ids,
                                                 tw.constant(2, tw.int64))).tolist() \
        == [b"acd", b"b"]
    # negative ids are dropped, as by the numeric unsorted segment ops
    assert _run(tw.strings.unsorted_segment_join(["x", "y", "z"], [0, -1, 0], 1)).tolist() \
        == [b"xz"]


def test_unsorted_segment_join_errors() -> None:
    with pytest.raises(ValueError, match="does not start with segment_ids.shape"):
        tw.strings.unsorted_segment_join([["a", "b"]], [0, 1], 2)
    with pytest.raises(TypeError):
        tw.strings.unsorted_segment_join([1, 2], [0, 1], 2)
    with pytest.raises(TypeError):
        tw.strings.unsorted_segment_join(["a"], [0.0], 2)
    with pytest.raises(errors.InvalidArgumentError, match=r"segment_ids\[1\] = 2 is out of range"):
        _run(tw.strings.unsorted_segment_join(["a", "b"], [0, 2], 2))
    assert tw.strings.unsorted_segment_join(["a", "b"], [0, 1], 5).shape.as_list() == [5]
