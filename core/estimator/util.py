"""What an `Estimator` does with the functions it is given: the argument names of a `model_fn`
or `input_fn`, and turning an `input_fn`'s result into ``(features, labels, hooks)``.

Contract: `fn_args` lists the parameters a callable takes by name (a bound method's ``self``
and a ``functools.partial``'s bound positional arguments excluded; ``*args``/``**kwargs``
ignored). `parse_input_fn_result` accepts a `Dataset` (made into an initializable iterator,
initialized by the returned `DatasetInitializerHook` when the session is created, whose
``get_next()`` is then parsed), a ``(features, labels)`` pair, or features alone (labels
``None``); a tuple or list of any other length raises TF's ``ValueError``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from tensorweave.api.dataset_ops import Dataset
from tensorweave.train.session_run_hook import SessionRunHook

__all__ = ["DatasetInitializerHook", "fn_args", "parse_input_fn_result"]


def fn_args(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The names `fn` can be called with as keywords."""
    if isinstance(fn, functools.partial):
        # As TF: the partial's bound arguments, positional or keyword, are not the caller's.
        args = fn_args(fn.func)[len(fn.args):]
        return tuple(a for a in args if a not in (fn.keywords or {}))
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(name for name, p in inspect.signature(fn).parameters.items()
                 if p.kind in kinds)


class DatasetInitializerHook(SessionRunHook):
    """Runs an iterator's initializer when a session is created (and re-created)."""

    def __init__(self, iterator: Any) -> None:
        self._iterator = iterator

    def begin(self) -> None:
        self._initializer = self._iterator.initializer

    def after_create_session(self, session: Any, coord: Any) -> None:
        session.run(self._initializer)


def parse_iterator_result(result: Any) -> tuple[Any, Any]:
    """``(features, labels)`` of an input's value: a pair, or features alone."""
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        return result[0], result[1]
    return result, None


def parse_input_fn_result(result: Any) -> tuple[Any, Any, list[SessionRunHook]]:
    """``(features, labels, hooks)`` of what an `input_fn` returned; see the module docstring."""
    hooks: list[SessionRunHook] = []
    if isinstance(result, Dataset):
        iterator = result.make_initializable_iterator()
        hooks.append(DatasetInitializerHook(iterator))
        result = iterator.get_next()
    features, labels = parse_iterator_result(result)
    return features, labels, hooks
