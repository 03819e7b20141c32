"""RE2 regexes (`re2_regex`, through ``tw.strings.regex_full_match``/``regex_replace``) against
TF's verdicts on a table of patterns, recorded with TensorFlow in ``data/regex`` (see its
``make_verdicts.py``)."""

from __future__ import annotations

import json
import pathlib
import time
from typing import Any

import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.plugins.kernels import re2_regex

VERDICTS = json.loads((pathlib.Path(__file__).parent / "data" / "regex" / "verdicts.json")
                      .read_text())
INPUTS = [s.encode("latin-1") for s in VERDICTS["inputs"]]
TABLE = VERDICTS["table"]


def _run(fetches: Any, feed: dict | None = None) -> Any:
    with tw.Session() as sess:
        return sess.run(fetches, feed)


def _latin1(values: Any) -> list[str]:
    return [v.decode("latin-1") for v in values.tolist()]


@pytest.mark.parametrize("row", TABLE, ids=[row["pattern"] for row in TABLE])
def test_static_ops_give_tfs_verdict_on_each_pattern(row: dict) -> None:
    text = tw.constant(INPUTS)
    if "error" in row:
        with pytest.raises(errors.InvalidArgumentError) as info:
            _run(tw.strings.regex_full_match(text, row["pattern"]))
        assert info.value.message.startswith(row["error"] + "\n")
        assert "node StaticRegexFullMatch" in info.value.message
        with pytest.raises(errors.InvalidArgumentError, match="Invalid pattern"):
            _run(tw.strings.regex_replace(text, row["pattern"], "x"))
        return
    full = tw.strings.regex_full_match(text, row["pattern"])
    every = tw.strings.regex_replace(text, row["pattern"], r"<\0>")
    first = tw.strings.regex_replace(text, row["pattern"], r"<\0>", replace_global=False)
    got = _run([full, every, first])
    assert got[0].tolist() == row["full_match"]
    assert _latin1(got[1]) == row["replace_global"]
    assert _latin1(got[2]) == row["replace_first"]


def test_dynamic_patterns_agree_with_the_table() -> None:
    text = tw.constant(INPUTS)
    pattern = tw.placeholder(tw.string, [])
    full = tw.strings.regex_full_match(text, pattern)
    every = tw.strings.regex_replace(text, pattern, tw.constant(r"<\0>"))
    assert full.op.type == "RegexFullMatch" and every.op.type == "RegexReplace"
    with tw.Session() as sess:
        for row in TABLE:
            if "error" in row:
                with pytest.raises(errors.InvalidArgumentError) as info:
                    sess.run(full, {pattern: row["pattern"]})
                assert row["error"] in info.value.message
                assert "RegexFullMatch" in info.value.message
                continue
            got_full, got_every = sess.run([full, every], {pattern: row["pattern"]})
            assert got_full.tolist() == row["full_match"], row["pattern"]
            assert _latin1(got_every) == row["replace_global"], row["pattern"]


def test_nested_repetition_is_linear() -> None:
    # Python's backtracking `re` took 15.7 s on this; RE2 is one pass over the input
    regex = re2_regex.compile_pattern(b"(a+)+$")
    text = b"a" * 30 + b"b"
    start = time.perf_counter()
    matched = re2_regex.full_match(regex, text)
    assert time.perf_counter() - start < 0.01
    assert not matched
    long_text = b"a" * 200_000 + b"b"
    start = time.perf_counter()
    assert not re2_regex.full_match(regex, long_text)
    assert time.perf_counter() - start < 0.5


def test_dollar_matches_only_at_the_very_end() -> None:
    regex = re2_regex.compile_pattern(b"a$")
    assert not re2_regex.full_match(regex, b"a\n")
    assert re2_regex.replace(regex, b"a\na", b"X", True) == b"a\nX"


def test_rewrites_follow_re2() -> None:
    regex = re2_regex.compile_pattern(b"(b)")
    # an invalid escape: Replace leaves the text, GlobalReplace keeps what came before it
    assert re2_regex.replace(regex, b"abc", b"[\\q]", False) == b"abc"
    assert re2_regex.replace(regex, b"abcb", b"[\\q]", True) == b"a[c["
    # a group beyond the pattern's, even after an invalid escape: no replacement at all
    assert re2_regex.replace(regex, b"abc", b"\\q\\2", True) == b"abc"
    assert re2_regex.replace(regex, b"abc", b"\\1\\\\\\0", True) == b"ab\\bc"
    # an empty match right after a match steps over a whole UTF-8 character
    assert re2_regex.replace(re2_regex.compile_pattern(b"x*"), "xé".encode(), b"-", True) \
        == "-é-".encode()


def test_compile_pattern_reports_re2s_message() -> None:
    with pytest.raises(ValueError, match=r"^invalid perl operator: \(\?=$"):
        re2_regex.compile_pattern(b"(?=a)")
