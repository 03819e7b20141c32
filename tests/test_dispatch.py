"""`tensorweave.api.dispatch`: handlers are tried in order, may decline, and only functions made
dispatchable accept them."""

from __future__ import annotations

from typing import Any

import pytest

from tensorweave.api import dispatch


class _Marked:
    pass


def test_handlers_run_first_and_may_decline() -> None:
    calls: list[str] = []

    @dispatch.dispatchable
    def double(x: Any) -> Any:
        calls.append("fn")
        return x * 2

    def declines(x: Any) -> Any:
        calls.append("declines")
        return NotImplemented

    def marked(x: Any) -> Any:
        calls.append("marked")
        return "handled" if isinstance(x, _Marked) else NotImplemented

    assert double(3) == 6 and calls == ["fn"]
    dispatch.register(double, declines)
    dispatch.register(double, marked)
    calls.clear()
    assert double(_Marked()) == "handled"
    assert calls == ["declines", "marked"]
    calls.clear()
    assert double(4) == 8 and calls == ["declines", "marked", "fn"]
    assert double.__name__ == "double"


def test_only_dispatchable_functions_take_handlers() -> None:
    with pytest.raises(TypeError, match="does not support dispatch"):
        dispatch.register(len, lambda *a: NotImplemented)
