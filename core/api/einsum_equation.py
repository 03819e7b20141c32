"""Parsing of ``Einsum`` equations, shared by the op's shape function, its gradient and
``tw.einsum``.

Contract: an equation is ``"<in>[,<in>]->"<out>``; each term is letters with at most one
``...`` (the broadcast batch dims, kept in the output: an input has ``...`` exactly when the
output has). An output label may repeat (``"i->ii"`` puts a vector on a diagonal, as TF's
gradients of traces need). `parse_equation` validates it and returns an `Equation`;
`implicit_output` gives numpy's output for an equation written without ``->`` (the labels used
exactly once, sorted, after ``...`` when any input has one).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import attrs

ELLIPSIS = "..."


@attrs.frozen
class Equation:
    inputs: tuple[str, ...]
    output: str

    def __str__(self) -> str:
        return f"{','.join(self.inputs)}->{self.output}"


def _check_term(term: str, fail: Callable[[str], Exception]) -> None:
    letters = term.replace(ELLIPSIS, "", 1)
    if not all(c.isalpha() for c in letters):
        raise fail(f"Invalid Einsum subscript '{term}': only letters and one '...' are allowed")


def implicit_output(inputs: list[str]) -> str:
    counts = Counter(c for term in inputs for c in term.replace(ELLIPSIS, ""))
    labels = "".join(sorted(c for c, n in counts.items() if n == 1))
    return (ELLIPSIS if any(ELLIPSIS in term for term in inputs) else "") + labels


def parse_equation(text: str | bytes, num_inputs: int,
                   fail: Callable[[str], Exception]) -> Equation:
    """`text` as an `Equation` for `num_inputs` operands; `fail(message)` builds the error."""
    if isinstance(text, bytes):
        text = text.decode()
    text = text.replace(" ", "")
    if "->" not in text:
        raise fail(f"Einsum equation '{text}' must have an explicit '->' output")
    lhs, output = text.split("->", 1)
    inputs = lhs.split(",")
    if len(inputs) != num_inputs:
        raise fail(f"Expecting {len(inputs)} inputs for equation '{text}', got {num_inputs}")
    for term in (*inputs, output):
        _check_term(term, fail)
    inputs_labels = set("".join(inputs))
    for label in output.replace(ELLIPSIS, ""):
        if label not in inputs_labels:
            raise fail(f"Output subscript '{label}' of equation '{text}' is not in any input")
    if (ELLIPSIS in output) != any(ELLIPSIS in term for term in inputs):
        # numpy's rule: broadcast dims are kept, never summed away
        raise fail(f"Equation '{text}' must have '...' in its output exactly when an input "
                   f"has it")
    return Equation(tuple(inputs), output)


def tokens(term: str) -> list[str]:
    """`term`'s labels in order, with ``...`` as one token."""
    before, ellipsis, after = term.partition(ELLIPSIS)
    return [*before, *([ELLIPSIS] if ellipsis else []), *after]
