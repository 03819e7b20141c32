"""TF1's summary ops: ``tf.summary.scalar``, ``histogram``, ``merge`` and ``merge_all``.

Contract: as ``tf.compat.v1.summary``. A summary op is created in a name scope named after the
(cleaned) summary name, prefixed by `family` if given; its tag is that scope (with the family
prefixed again, so the summary shows in the family's tab), so a repeated name gets a unique
tag (``loss_1``). Illegal characters in names become ``_``. Each summary op is added to
`collections` (default ``[GraphKeys.SUMMARIES]``); `merge_all` returns None when the collection
is empty, as TF does.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from typing import Any

from tensorweave.api.scopes import add_to_collections, get_collection, name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import GraphKeys, Tensor
from tensorweave.engine.graph.op_builder import apply

__all__ = ["histogram", "image", "merge", "merge_all", "scalar"]

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")
_log = logging.getLogger(__name__)


def clean_tag(name: str | None) -> str | None:
    """`name` with illegal characters replaced by ``_`` and leading slashes removed."""
    if name is None:
        return None
    cleaned = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    if cleaned != name:
        _log.info("Summary name %s is illegal; using %s instead.", name, cleaned)
    return cleaned


@contextlib.contextmanager
def summary_scope(name: str, family: str | None = None, default_name: str | None = None,
                  values: Any = None) -> Iterator[tuple[str, str]]:
    """Enter the summary's name scope; yields ``(tag, scope)``."""
    name, family = clean_tag(name), clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with name_scope(base, default_name, values) as scope:
        tag = scope.rstrip("/")
        yield (tag if family is None else f"{family}/{tag}"), scope


def _collect(op: Tensor, collections: Any, default: list[str]) -> None:
    add_to_collections(default if collections is None else list(collections), op)


def scalar(name: str, tensor: Any, collections: Any = None, family: str | None = None) -> Tensor:
    """A scalar `string` tensor: a ``Summary`` with `tensor`'s value (a real scalar; another
    shape fails at run time, as in TF)."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        summary = apply("ScalarSummary",
                        [convert_to_tensor(tag, dtypes.string), convert_to_tensor(tensor)],
                        name=scope)
    _collect(summary, collections, [GraphKeys.SUMMARIES])
    return summary


def histogram(name: str, values: Any, collections: Any = None,
              family: str | None = None) -> Tensor:
    """A scalar `string` tensor: a ``Summary`` with a histogram of `values`."""
    with summary_scope(name, family, values=[values]) as (tag, scope):
        summary = apply("HistogramSummary",
                        [convert_to_tensor(tag, dtypes.string), convert_to_tensor(values)],
                        name=scope)
    _collect(summary, collections, [GraphKeys.SUMMARIES])
    return summary


def image(name: str, tensor: Any, max_outputs: int = 3, collections: Any = None,
          family: str | None = None) -> Tensor:
    """A scalar `string` tensor: a ``Summary`` with up to `max_outputs` PNG images of the
    4-D ``[batch, height, width, channels]`` `tensor` (uint8, or float rescaled to uint8)."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        summary = apply("ImageSummary",
                        [convert_to_tensor(tag, dtypes.string), convert_to_tensor(tensor)],
                        {"max_images": int(max_outputs)}, name=scope)
    _collect(summary, collections, [GraphKeys.SUMMARIES])
    return summary


def merge(inputs: Any, collections: Any = None, name: str | None = None) -> Tensor:
    """One ``Summary`` holding the values of every summary in `inputs` (string tensors)."""
    inputs = list(inputs)
    with name_scope(name, "Merge", inputs):
        summary = apply("MergeSummary", [inputs], name=name)
    _collect(summary, collections, [])
    return summary


def merge_all(key: str = GraphKeys.SUMMARIES, scope: str | None = None,
              name: str | None = None) -> Tensor | None:
    """`merge` of the summaries in collection `key` (filtered by `scope`); None if none."""
    summaries = get_collection(key, scope)
    return merge(summaries, name=name) if summaries else None
