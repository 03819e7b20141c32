"""Optional integrations (trace export, Graphviz export, ...) and ``tf.contrib``'s TF1 subset
(`rnn`, `layers`, `framework`, `seq2seq`), each imported on first attribute access."""

from __future__ import annotations

import importlib
from types import ModuleType

_LAZY = ("framework", "layers", "lookup", "rnn", "seq2seq")


def __getattr__(name: str) -> ModuleType:
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
