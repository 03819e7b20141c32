"""Dispatch of public API functions to other tensor types, as TF's ``add_dispatch_support``.

Contract: `dispatchable(fn)` returns a wrapper of `fn` that first offers each call to the
handlers registered on it with `register(wrapper, handler)`, in registration order. A handler
takes the call's arguments and returns `NotImplemented` to decline (for example, when no
argument is a `RaggedTensor`); the first answer that is not `NotImplemented` is the result. When
every handler declines, or none is registered, `fn` itself runs. Handlers are registered when a
module that provides a tensor type is imported (``tensorweave.api.ragged_ops``), never per call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

_HANDLERS = "_dispatch_handlers"


def dispatchable(fn: Callable[..., Any]) -> Callable[..., Any]:
    handlers: list[Callable[..., Any]] = []

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for handler in handlers:
            result = handler(*args, **kwargs)
            if result is not NotImplemented:
                return result
        return fn(*args, **kwargs)

    setattr(wrapper, _HANDLERS, handlers)
    return wrapper


def register(api_fn: Callable[..., Any], handler: Callable[..., Any]) -> None:
    """Offer `api_fn`'s calls to `handler`; `api_fn` must come from `dispatchable`."""
    handlers = getattr(api_fn, _HANDLERS, None)
    if handlers is None:
        raise TypeError(f"{getattr(api_fn, '__name__', api_fn)!r} does not support dispatch")
    handlers.append(handler)
