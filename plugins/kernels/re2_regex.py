"""RE2 as TF's regex kernels use it: compiled with RE2's default options (UTF-8, Perl classes,
leftmost-first), matched on the raw bytes of a string element, replaced with RE2's own
``Replace``/``GlobalReplace`` and rewrite syntax.

Contract: `compile_pattern` returns a compiled RE2 or raises `ValueError` whose message is RE2's
own error text (TF puts it after ``"Invalid pattern: <p>, error: "``). Matching is RE2's, so it
is linear in the input (no backtracking), ``$`` matches only at the end, and look-arounds and
backreferences are rejected at compile time.

The bindings carry a newer RE2 than TF's, one that accepts ``(?<name>expr)`` groups, which
TF's RE2 (2.21 measured; 1.15's is older still) rejects. `compile_pattern` rejects ``(?<`` as
TF's does, with its message (``invalid perl operator: (?<``); with that, accept/reject and the
error text equal TF 2.21's on every pattern of ``tests/data/regex/verdicts.json``.
"""

from __future__ import annotations

from re2 import _re2

_BOTH = _re2.RE2.Anchor.ANCHOR_BOTH
_UNANCHORED = _re2.RE2.Anchor.UNANCHORED
_NO_SPAN = (-1, -1)
_BACKSLASH = ord("\\")
_DIGITS = frozenset(b"0123456789")


def _options() -> _re2.RE2.Options:
    options = _re2.RE2.Options()
    # RE2's default logs a bad pattern to stderr; the error is raised instead, so stay quiet.
    options.log_errors = False
    return options


_OPTIONS = _options()


def _operator_angle(pattern: bytes) -> int:
    """Where ``(?<`` first opens a group in `pattern` (not escaped, quoted or in a class), or -1."""
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith(b"\\Q", i):
            end = pattern.find(b"\\E", i + 2)
            i = n if end < 0 else end + 2
        elif pattern[i] == _BACKSLASH:
            i += 2
        elif pattern[i] == ord("["):
            i += 1
            if pattern.startswith(b"^", i):
                i += 1
            if pattern.startswith(b"]", i):  # a leading "]" is a member
                i += 1
            while i < n and pattern[i] != ord("]"):
                if pattern.startswith(b"[:", i) and pattern.find(b":]", i + 2) >= 0:
                    i = pattern.find(b":]", i + 2) + 2
                    continue
                i += 2 if pattern[i] == _BACKSLASH else 1
            i += 1
        elif pattern.startswith(b"(?<", i):
            return i
        else:
            i += 1
    return -1


def compile_pattern(pattern: bytes) -> _re2.RE2:
    """`pattern` compiled as TF's ``RE2(pattern)``; `ValueError` with RE2's message if bad."""
    angle = _operator_angle(pattern)
    if angle >= 0:
        # TF's RE2 parses left to right and stops at "(?<", unless the text before it failed
        before = _re2.RE2(pattern[:angle], _OPTIONS)
        error = before.error().decode("utf-8", "replace")
        if before.ok() or error.startswith("missing )"):
            raise ValueError("invalid perl operator: (?<")
        raise ValueError(error)
    regex = _re2.RE2(pattern, _OPTIONS)
    if not regex.ok():
        raise ValueError(regex.error().decode("utf-8", "replace"))
    return regex


def full_match(regex: _re2.RE2, text: bytes) -> bool:
    """RE2's ``FullMatch(text, regex)``."""
    return regex.Match(_BOTH, text, 0, len(text))[0] != _NO_SPAN


def _max_submatch(rewrite: bytes) -> int:
    """RE2's ``MaxSubmatch``: the highest ``\\N`` in `rewrite` (a whole scan, even past an
    invalid escape)."""
    highest, i = 0, 0
    while i < len(rewrite):
        if rewrite[i] == _BACKSLASH:
            i += 1
            if i < len(rewrite) and rewrite[i] in _DIGITS:
                highest = max(highest, rewrite[i] - ord("0"))
        i += 1
    return highest


def _rewrite(out: bytearray, rewrite: bytes, text: bytes, spans: list[tuple[int, int]]) -> bool:
    """RE2's ``Rewrite``: append `rewrite` with ``\\N`` filled from `spans`; False at an invalid
    escape, with what came before it already appended (as RE2 does)."""
    i = 0
    while i < len(rewrite):
        char = rewrite[i]
        if char != _BACKSLASH:
            out.append(char)
        else:
            i += 1
            nxt = rewrite[i] if i < len(rewrite) else -1
            if nxt in _DIGITS:
                start, end = spans[nxt - ord("0")]
                if start >= 0:
                    out += text[start:end]
            elif nxt == _BACKSLASH:
                out.append(_BACKSLASH)
            else:
                return False
        i += 1
    return True


def _utf8_length(text: bytes, pos: int) -> int:
    """Bytes of the well-formed UTF-8 character at `pos`, or 1 where there is none (RE2 then
    steps one byte, as in Latin-1)."""
    for n in (1, 2, 3, 4):
        try:
            text[pos:pos + n].decode("utf-8")
            return n
        except UnicodeDecodeError:
            continue
    return 1


def replace(regex: _re2.RE2, text: bytes, rewrite: bytes, replace_global: bool) -> bytes:
    """RE2's ``GlobalReplace`` (every non-overlapping match) or ``Replace`` (the first) of
    `regex` in `text` by `rewrite`; `text` unchanged when nothing matched or the rewrite names a
    group the pattern lacks."""
    nvec = 1 + _max_submatch(rewrite)
    if nvec > 1 + regex.NumberOfCapturingGroups():
        return text
    if not replace_global:
        spans = regex.Match(_UNANCHORED, text, 0, len(text))
        if spans[0] == _NO_SPAN:
            return text
        out = bytearray()
        if not _rewrite(out, rewrite, text, spans):
            return text
        start, end = spans[0]
        return text[:start] + bytes(out) + text[end:]
    out = bytearray()
    pos, last_end, count = 0, -1, 0
    while pos <= len(text):
        spans = regex.Match(_UNANCHORED, text, pos, len(text))
        start, end = spans[0]
        if start < 0:
            break
        out += text[pos:start]
        if start == last_end and start == end:
            # an empty match right where the last one ended: RE2 steps over one character
            step = _utf8_length(text, pos) if pos < len(text) else 1
            out += text[pos:pos + step]
            pos += step
            continue
        _rewrite(out, rewrite, text, spans)
        pos = last_end = end
        count += 1
    if count == 0:
        return text
    out += text[pos:]
    return bytes(out)
