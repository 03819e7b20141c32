"""Batches for ``Model.fit`` / ``evaluate`` / ``predict`` from a ``tw.data.Dataset``, a
Python generator or a ``keras.utils.Sequence``, read as TF 1.15's graph-mode Keras reads them.

Contract: a batch is ``(x, y, sample_weight)`` of numpy nests (`y`, `sample_weight` may be
None). A dataset's element is ``(x, y)`` or ``(x, y, sample_weight)``; an element that is not a
tuple is ``x`` alone, any other tuple length is a `ValueError`. A generator may also yield
``(x,)``, and a bare ``x``. `DatasetBatches` keeps one initializable iterator per dataset in the
model's graph: `restart` (re)initializes it, `next` runs ``get_next`` in the Keras session and
gives None at the end of the data (``OutOfRangeError``). `SequenceBatches` reads a
``keras.utils.Sequence`` (items as a generator's) pass after pass, in a new random order per
pass when shuffling, calling its ``on_epoch_end`` after each full pass; `restart` begins a new
pass. `cardinality` is the number of
elements a dataset yields as far as it is known when the graph is built (`INFINITE` for a
``repeat()`` without count, `UNKNOWN` when a filter, generator, file or non-constant count
decides), with TF's rules. The ``check_*`` functions raise TF's errors for arguments that make
no sense with these inputs.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from tensorweave.api.dataset_ops import Dataset, Description
from tensorweave.api.iterator_ops import Iterator, make_initializable_iterator
from tensorweave.engine.errors import OutOfRangeError
from tensorweave.engine.graph.graph import Graph, constant_value
from tensorweave.keras import backend
from tensorweave.keras.utils import Sequence

__all__ = ["INFINITE", "UNKNOWN", "Batch", "DatasetBatches", "cardinality",
           "check_batch_size", "check_dataset_arguments", "check_generator_arguments",
           "check_not_iterator", "generator_batch", "is_dataset", "is_generator", "is_sequence",
           "SequenceBatches"]

INFINITE = -1
UNKNOWN = -2

Batch = tuple[Any, Any, Any]


def is_dataset(data: Any) -> bool:
    return isinstance(data, Dataset)


def is_generator(data: Any) -> bool:
    return inspect.isgenerator(data)


def is_sequence(data: Any) -> bool:
    return isinstance(data, Sequence)


def check_not_iterator(data: Any) -> None:
    if isinstance(data, Iterator):
        raise ValueError("For performance reasons Keras `fit`, `evaluate` and`predict` accept "
                         "tf.data `Datasets` as input but not iterators that have been manually "
                         "generated from Datasets by users. Please directly pass in the original "
                         "`Dataset` object instead of passing in `iter(dataset)`.")


def check_batch_size(batch_size: Any, data: Any) -> None:
    if batch_size is not None:
        raise ValueError("The `batch_size` argument must not be specified for the given input "
                         f"type. Received input: {data}, batch_size: {batch_size}")


def check_dataset_arguments(data: Any, y: Any, sample_weight: Any,
                            validation_split: float = 0.0) -> None:
    if y is not None:
        raise ValueError(f"You passed a dataset or dataset iterator ({data}) as input `x` to "
                         "your model. In that case, you should not specify a target (`y`) "
                         "argument, since the dataset or dataset iterator generates both input "
                         f"data and target data. Received: {y}")
    if sample_weight is not None:
        raise ValueError("`sample_weight` argument is not supported when input `x` is a "
                         "dataset or a dataset iterator. Instead, you can provide "
                         "sample_weight as the third element of your dataset, i.e. (inputs, "
                         f"targets, sample_weight). Received: x={data}, "
                         f"sample_weight={sample_weight}")
    if validation_split:
        raise ValueError("`validation_split` argument is not supported when input `x` is a "
                         f"dataset or a dataset iterator. Received: x={data}, "
                         f"validation_split={validation_split:f}")


def check_generator_arguments(y: Any, sample_weight: Any, validation_split: float = 0.0) -> None:
    if y is not None:
        raise ValueError("`y` argument is not supported when data is a generator or Sequence "
                         "instance. Instead pass targets as the second element of the "
                         "generator.")
    if sample_weight is not None:
        raise ValueError("`sample_weight` argument is not supported when data is a generator "
                         "or Sequence instance. Instead pass sample weights as the third element "
                         "of the generator.")
    if validation_split:
        raise ValueError("If your data is in the form of a Python generator, you cannot use "
                         "`validation_split`.")


# -- elements -----------------------------------------------------------------------------------


def _dataset_batch(element: Any) -> Batch:
    if isinstance(element, tuple) and not hasattr(element, "_fields"):
        if len(element) not in (2, 3):
            raise ValueError("Please provide model inputs as a list or tuple of 2 or 3 elements: "
                             "(input, target) or (input, target, sample_weights) Received "
                             f"{element}")
        return (*element, None) if len(element) == 2 else element
    return element, None, None


def generator_batch(output: Any) -> Batch:
    """What one ``next(generator)`` gave, as a batch."""
    if not isinstance(output, tuple):
        output = (output,)
    if len(output) not in (1, 2, 3):
        raise ValueError("Output of generator should be a tuple of 1 or 2 or 3 elements: "
                         "(input,) or (input, target) or (input, target, sample_weights). "
                         f"Received {output}")
    return (*output, None, None)[:3]


class DatasetBatches:
    """The batches of one dataset, through an iterator in `graph` (see the module
    docstring)."""

    def __init__(self, dataset: Dataset, graph: Graph) -> None:
        self._graph = graph
        with graph.as_default():
            self._iterator = make_initializable_iterator(dataset)
            self._next = self._iterator.get_next()

    def restart(self) -> None:
        backend.get_session(self._graph).run(self._iterator.initializer)

    def next(self) -> Batch | None:
        try:
            element = backend.get_session(self._graph).run(self._next)
        except OutOfRangeError:
            return None
        return _dataset_batch(element)


class SequenceBatches:
    """The batches of a `Sequence`, pass after pass (see the module docstring)."""

    def __init__(self, sequence: Sequence, shuffle: bool) -> None:
        self._sequence, self._shuffle = sequence, shuffle
        self._order: list[int] = []
        self._position = 0

    def restart(self) -> None:
        self._order, self._position = [], 0

    def next(self) -> Batch | None:
        if self._position == len(self._order):
            count = len(self._sequence)
            if not count:
                return None
            self._order = list(np.random.permutation(count)) if self._shuffle else \
                list(range(count))
            self._position = 0
        batch = self._sequence[int(self._order[self._position])]
        self._position += 1
        if self._position == len(self._order):
            self._sequence.on_epoch_end()
        return generator_batch(batch)


# -- cardinality --------------------------------------------------------------------------------

_SAME_COUNT = frozenset({"map", "shuffle", "prefetch", "cache"})


def cardinality(dataset: Dataset) -> int:
    """The number of elements `dataset` yields, `INFINITE` or `UNKNOWN` (module docstring)."""
    d = Description()
    return _count(dataset._describe(d), d)


def _known(d: Description, index: int) -> int | None:
    value = constant_value(d.tensors[index])
    return None if value is None else int(value)


def _count(desc: dict[str, Any], d: Description) -> int:
    kind = desc["kind"]
    if kind == "tensors":
        return 1
    if kind == "tensor_slices":
        dims = d.tensors[desc["components"][0]].shape.dims
        return UNKNOWN if dims is None or dims[0] is None else dims[0]
    if kind == "range":
        args = [_known(d, i) for i in desc["args"]]
        return UNKNOWN if None in args or args[2] == 0 else len(range(*args))
    if kind in ("zip", "concatenate"):
        counts = [_count(member, d) for member in desc["inputs"]]
        if UNKNOWN in counts:
            return UNKNOWN
        finite = [n for n in counts if n != INFINITE]
        if kind == "zip":
            return min(finite) if finite else INFINITE
        return INFINITE if INFINITE in counts else sum(counts)
    if kind in _SAME_COUNT:
        return _count(desc["input"], d)
    if kind in ("batch", "padded_batch"):
        return _batched(_count(desc["input"], d), _known(d, desc["batch_size"]),
                        constant_value(d.tensors[desc["drop_remainder"]]))
    if kind in ("repeat", "take", "skip"):
        count = _known(d, desc["count"])
        return UNKNOWN if count is None else _counted(kind, _count(desc["input"], d), count)
    return UNKNOWN  # filters, generators, files, flat_map and interleave


def _batched(n: int, size: int | None, drop: Any) -> int:
    if n < 0:
        return n
    if size is None or drop is None:
        return UNKNOWN
    return n // size if bool(drop) else math.ceil(n / size)


def _counted(kind: str, n: int, count: int) -> int:
    if kind == "repeat":
        if count < 0:
            return 0 if n == 0 else INFINITE
        return 0 if count == 0 else (n if n < 0 else count * n)
    if kind == "take":
        if count == 0:
            return 0
        if n == UNKNOWN:
            return UNKNOWN
        if n == INFINITE:
            return INFINITE if count < 0 else count
        return n if count < 0 else min(n, count)
    if n < 0:  # skip
        return n
    return 0 if count < 0 else max(0, n - count)
