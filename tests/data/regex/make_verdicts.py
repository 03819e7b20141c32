"""Records TensorFlow's verdicts on a table of regex patterns, as ``verdicts.json``.

Run with a Python that has TensorFlow (the suite reads the JSON without it):
``python tests/data/regex/make_verdicts.py``. For each pattern: the error TF raises for it, or
``regex_full_match`` on `INPUTS` and ``regex_replace`` (global and first-only) of each match by
``<\\0>``. Strings are stored as Latin-1 text so that any byte round-trips.
"""

from __future__ import annotations

import json
import pathlib
import re

import tensorflow as tf

PATTERNS = [
    # accepted by RE2
    "a", "a*", "(a+)+$", "^a", "a$", "(?i)abc", "(?s)a.b", "a.b", "(?m)^a$", "(?U)a+",
    r"\d+", r"\w+", r"\s", r"\bab\b", r"\Ba", r"\Aa", r"a\z", r"\pL", r"\p{Greek}+", r"\PL",
    "[[:alpha:]]+", "[[:^digit:]]", r"\Q.*\E", "(?P<name>a)b", "(a)(b)?", "x*", "a{2,3}", "a{1000}",
    r"\x41", r"\x{e9}", r"\C", "(?:ab)+", "a|b|", "[^a]", r"[\d-z]", "é+", ".", "(?i)é",
    r"\n", r"\t", "a??", "(|a)+", r"\pN", "[a-c&&b]",
    # rejected by RE2 (accepted by Python's re, most of them)
    "(?=a)", "(?!a)", "(?<=a)b", "(?<!a)b", r"(a)\1", "a++", "(?>a)", r"a\Z", "a{1001}",
    "a{2,1}", "(", ")", "[", "*", "a**", r"\8", "(?#comment)", r"\x{110000}", r"\cA",
    r"\e", r"\G", r"\N{DIGIT ONE}", "(?<name>a)", "(?P=name)", r"\p{Nope}", "[z-a]", "\\",
    "(?P<n>a)(?P<n>b)", "x{2}{3}", r"\Z",
    # "(?<" outside and inside classes, quotes and escapes, and after an earlier error
    "[(?<]+", r"\(\?<", r"\Q(?<\E", "[]a]+", "[^](?<]", "[[:alpha:](?<]+", "a{1001}(?<n>x)",
    "((?<n>x)", "(a)(?<n>x)", r"\Q(?<",
]
INPUTS = ["", "a", "aa", "ab", "abc", "ABC", "a\n", "ab\n", "b", "bab", "a b", "xax", "é",
          "éé", "αβγ", "12 ab", "\xff", "a\xffb", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", "a.b",
          "a\nb", "_x9", ".*", "aaa", "aaaa", "(?<", "]a", "<"]


def _latin1(value: bytes) -> str:
    return value.decode("latin-1")


def _data(strings: list[str]) -> list[bytes]:
    # "\xff" and friends stand for raw bytes, the rest for UTF-8 text
    return [s.encode("latin-1") if any(0x80 <= ord(c) <= 0xFF and c not in "é" for c in s)
            else s.encode("utf-8") for s in strings]


def main() -> None:
    data = _data(INPUTS)
    table = []
    for pattern in PATTERNS:
        row: dict = {"pattern": pattern}
        try:
            row["full_match"] = tf.strings.regex_full_match(data, pattern).numpy().tolist()
            for key, replace_global in (("replace_global", True), ("replace_first", False)):
                out = tf.strings.regex_replace(data, pattern, r"<\0>", replace_global)
                row[key] = [_latin1(v) for v in out.numpy().tolist()]
        except tf.errors.InvalidArgumentError as exc:
            # eager wraps the kernel's message in the function's name and the op's
            row["error"] = re.search(r"Invalid pattern: .*(?= \[Op:)", exc.message).group(0)
        table.append(row)
    out = {"tensorflow": tf.__version__, "inputs": [_latin1(d) for d in data], "table": table}
    path = pathlib.Path(__file__).with_name("verdicts.json")
    rows = ",\n".join(json.dumps(row) for row in table)
    head = json.dumps({k: v for k, v in out.items() if k != "table"})[:-1]
    path.write_text(f'{head}, "table": [\n{rows}\n]}}\n')


if __name__ == "__main__":
    main()
