"""Optional integrations (trace export, Graphviz export, ...) and ``tf.contrib``'s TF1 subset
(`rnn`, `layers`, `framework`, `seq2seq`), each imported on first attribute access."""

from __future__ import annotations

import importlib
from types import ModuleType

_LAZY = ("data", "estimator", "framework", "layers", "learn", "legacy_seq2seq", "lookup", "losses",
         "metrics", "rnn", "seq2seq", "slim", "util")


def __getattr__(name: str) -> ModuleType:
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
