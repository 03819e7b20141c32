"""Kernels of ``tf.data`` iterators (CPU only, as TF's): ``MakeIterator`` builds the pipeline
its ``dataset`` attr describes and keeps it in the device's resource store under the
iterator's shared name; ``IteratorGetNext`` pulls one element from it.
``IteratorToStringHandle`` gives that shared name as a string handle, and
``IteratorGetNextFromStringHandle`` pulls from the iterator a fed handle names (on its own
device; a handle naming no iterator there is an `InvalidArgumentError`).

Contract: the description is a tree of dicts, each with a ``kind``; integer fields index the
``MakeIterator`` node's inputs (read once, when the iterator starts), ``f`` names one of its
function attrs. An element is a list of components, each an array or a `SparseValue` (a
``SparseTensor``'s indices, values and dense_shape), which travels as its three arrays into
functions and out of ``IteratorGetNext``. The optional field ``sparse`` (ascending positions
of the element's sparse components) of ``tensor_slices``, ``tensors`` and ``map`` says how
their tensors group into components; without it all are dense. Kinds and fields:

- sources: ``tensor_slices`` / ``tensors`` (``components``), ``range`` (``args``: start, stop,
  step); ``zip`` (``inputs``: descriptions; ends with the shortest), ``concatenate``
  (``inputs``: two descriptions).
- file sources (`tensorweave.formats.tf_record` reads them, lazily, so a missing file or a damaged
  record fails ``IteratorGetNext``): ``tf_record`` / ``text_line`` (``filenames``: a string
  scalar or vector, ``compression_type``, ``buffer_size``) give each file's records / lines in
  turn; ``list_files`` (``patterns``; bools/ints ``shuffle``, ``seed``, ``seed2``) globs when
  the iterator starts (each pattern's matches sorted; `InvalidArgumentError` if none match)
  and shuffles each pass.
- ``generator`` (``start``, ``next``: each a function field pair ``f``/``captured``): ``start``
  gives an id for the pass, ``next(id)`` gives ``[done, *element]`` until ``done``.
- ``map`` / ``filter`` / ``flat_map`` (``input``, ``f``, ``captured``): ``f`` takes an element's
  tensors then the captured tensors; ``map`` gives its results (with ``num_parallel_calls``,
  an optional index, N > 1, or -1 for one per CPU: the step that needs the next element runs
  the function on the next N elements at once on N threads, and the following steps take the
  rest in order, so GIL-free kernels such as the image codecs scale with cores), ``filter``
  keeps the elements for which it is true, ``flat_map`` runs the ``inner`` description over its
  results (whose component ``i`` is result ``i``) and yields that dataset's elements;
  ``interleave`` (also
  ``cycle_length``, -1 for one per CPU, and ``block_length``) does the same with TF's
  interleaving order (with ``num_parallel_calls`` N > 1: when the slot it reads from has nothing
  read ahead, the step reads the next block of every open slot at once on N threads; the order
  stays the same).
- ``batch`` (``batch_size``, ``drop_remainder``; sparse components of rank r become one of rank
  r + 1 whose dense shape is the largest of the batch's in each dimension, as TF's
  ``DeserializeSparse``), ``unbatch`` (slices each element as ``tensor_slices``),
  ``dense_to_sparse_batch`` (``batch_size``, ``row_shape``: -1 takes the batch's largest),
  ``padded_batch`` (dense components only) (also ``padded_shapes``,
  ``padding_values``: one index per element tensor), ``shuffle`` (``buffer_size``; ints
  ``seed``, ``seed2``; bool ``reshuffle``), ``repeat`` / ``take`` / ``skip`` (``count``, -1:
  all), ``prefetch`` (``buffer_size``; elements are computed on demand, so it passes them
  through), ``cache`` (in memory: the first full pass is recorded and replayed by later passes).

Checkpoints (``SerializeIterator`` / ``DeserializeIterator``): an iterator's state is its
position, not its buffers: a UTF-8 JSON string ``{"format", "initializer", "produced",
"entropy"}`` naming the ``MakeIterator`` node that last started it, how many elements it has
given since, and the entropy its unseeded shuffles and file listings drew from (so they replay
the same order). ``DeserializeIterator`` carries that ``MakeIterator``'s inputs and attrs (plus
``initializer`` and ``initializers``, the names of every initializer of the iterator), rebuilds
the pipeline and advances it ``produced`` elements, re-running its functions: they must be
deterministic (stateless ``map``/``filter`` functions) for the iterator to continue exactly.
Restoring costs the replay of the elements given so far. A ``generator`` pipeline cannot be
saved (`UnimplementedError` naming the kind: Python generator state lives outside the graph,
as TF); a state of another initializer of the same iterator is left to that initializer's
``DeserializeIterator``; one of no initializer of the iterator, or malformed, is an
`InvalidArgumentError`; a pipeline that ends before ``produced`` elements is a
`DataLossError`.

Functions run through the control-flow kernels' `call_function`, as a nested partition on the
iterator's device within the step of the ``IteratorGetNext`` that needs them; an error inside
names the inner node. At the end of input ``IteratorGetNext`` raises `OutOfRangeError` ("End of
sequence"), and keeps doing so until the iterator is started again; an error inside the pipeline
also ends the current pass. Element order, shuffle included, depends only on the description
and the inputs: a seeded shuffle restarts with the same order.
"""

from __future__ import annotations

import collections
import glob
import json
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, NamedTuple

import numpy as np

from tensorweave.api.dataset_functions import FUNCTION_ATTRS
from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.formats.tf_record import read_lines, read_records
from tensorweave.plugins.kernels.control_flow import call_function
from tensorweave.plugins.kernels.file_access import checked_matches, checked_path, checked_pattern
from tensorweave.plugins.kernels.resources import get_or_create

Element = list[Any]
Stage = Callable[[], Iterator[Element]]  # each call starts one pass over the dataset


# The fields of each kind of description: "index" indexes the tensors (the node's inputs, or a
# function's results for an inner description), "indices" is a list of them, "desc"/"descs"
# nested descriptions, "inner" a description over the function's results, "call" a
# {"f", "captured"} pair, "int"/"bool" plain values.
_CALL = {"f": "func", "captured": "indices"}
_FIELDS: dict[str, dict[str, str]] = {
    "tensor_slices": {"components": "indices"},
    "tensors": {"components": "indices"},
    "range": {"args": "indices"},
    "zip": {"inputs": "descs"},
    "concatenate": {"inputs": "descs"},
    "tf_record": {"filenames": "index", "compression_type": "index", "buffer_size": "index"},
    "text_line": {"filenames": "index", "compression_type": "index", "buffer_size": "index"},
    "list_files": {"patterns": "index", "seed": "int", "seed2": "int", "shuffle": "bool"},
    "generator": {"start": "call", "next": "call"},
    "map": {"input": "desc", **_CALL},
    "unbatch": {"input": "desc"},
    "dense_to_sparse_batch": {"input": "desc", "batch_size": "index", "row_shape": "index"},
    "filter": {"input": "desc", **_CALL},
    "flat_map": {"input": "desc", "inner": "inner", **_CALL},
    "interleave": {"input": "desc", "inner": "inner", "cycle_length": "index",
                   "block_length": "index", **_CALL},
    "batch": {"input": "desc", "batch_size": "index", "drop_remainder": "index"},
    "padded_batch": {"input": "desc", "batch_size": "index", "drop_remainder": "index",
                     "padded_shapes": "indices", "padding_values": "indices"},
    "shuffle": {"input": "desc", "buffer_size": "index", "seed": "int", "seed2": "int",
                "reshuffle": "bool"},
    "repeat": {"input": "desc", "count": "index"},
    "take": {"input": "desc", "count": "index"},
    "skip": {"input": "desc", "count": "index"},
    "prefetch": {"input": "desc", "buffer_size": "index"},
    "cache": {"input": "desc"},
}
_SIZES = {"range": ("args", 3), "concatenate": ("inputs", 2)}
# fields a kind may leave out, with the same kinds of values as `_FIELDS`'
_OPTIONAL: dict[str, dict[str, str]] = {
    "tensor_slices": {"sparse": "positions"},
    "tensors": {"sparse": "positions"},
    "map": {"sparse": "positions", "num_parallel_calls": "index"},
    "interleave": {"num_parallel_calls": "index"},
}


class SparseValue(NamedTuple):
    """A sparse component of an element: ``SparseTensor``'s three arrays."""

    indices: Any
    values: Any
    dense_shape: Any


def group_components(tensors: list[Any], sparse: list[int]) -> Element:
    """The element whose components at positions `sparse` are each three of `tensors`
    (`ValueError` if there are too few)."""
    if sparse and sparse[-1] >= len(tensors) - 2 * len(sparse):
        raise ValueError(f"{len(tensors)} tensors hold no sparse components at {sparse}")
    element: Element = []
    parts = iter(tensors)
    for value in parts:
        if len(element) in sparse:
            element.append(SparseValue(value, next(parts), next(parts)))
        else:
            element.append(value)
    return element


def flat_components(element: Element) -> list[Any]:
    """The arrays `element` travels as (a sparse component: three)."""
    return [a for c in element for a in (c if isinstance(c, SparseValue) else (c,))]


def check_description(desc: Any, tensors: int | None, functions: Any,
                      path: str = "dataset") -> None:
    """Raise `ValueError` naming the first malformed part of `desc`: an unknown kind, a missing
    or extra field, a field of the wrong type, an index out of ``range(tensors)`` (unchecked
    where `tensors` is None: an inner description indexes a function's results), a function
    attr not in `functions`. Descriptions come from the wire too: nothing else checks them."""

    def fail(where: str, what: str) -> ValueError:
        return ValueError(f"Malformed dataset description at {where}: {what}")

    def is_index(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0 and (
            tensors is None or value < tensors)

    if not isinstance(desc, dict):
        raise fail(path, f"expected a dict, got {type(desc).__name__}")
    kind = desc.get("kind")
    fields = _FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        raise fail(path, f"unknown kind {kind!r}")
    optional = _OPTIONAL.get(kind, {})
    if not {"kind", *fields} <= set(desc) <= {"kind", *fields, *optional}:
        raise fail(path, f"kind {kind!r} has fields {sorted(fields)} (optional: "
                         f"{sorted(optional)}), got {sorted(k for k in desc if k != 'kind')}")
    for name, kind_of in [*fields.items(), *optional.items()]:
        if name not in desc:
            continue
        value, where = desc[name], f"{path}.{name}"
        if kind_of == "index" and not is_index(value):
            raise fail(where, f"expected a tensor index, got {value!r}")
        elif kind_of == "indices" and not (isinstance(value, list)
                                           and all(is_index(v) for v in value)):
            raise fail(where, f"expected a list of tensor indices, got {value!r}")
        elif kind_of == "int" and (not isinstance(value, int) or isinstance(value, bool)):
            raise fail(where, f"expected an int, got {value!r}")
        elif kind_of == "bool" and not isinstance(value, bool):
            raise fail(where, f"expected a bool, got {value!r}")
        elif kind_of == "positions" and not (
                isinstance(value, list) and value
                and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
                and value[0] >= 0 and all(a < b for a, b in zip(value, value[1:]))):
            raise fail(where, f"expected ascending component positions, got {value!r}")
        elif kind_of == "func" and value not in functions:
            raise fail(where, f"{value!r} names no function attr of the node")
        elif kind_of == "desc":
            check_description(value, tensors, functions, where)
        elif kind_of == "inner":
            check_description(value, None, functions, where)
        elif kind_of == "descs":
            if not isinstance(value, list):
                raise fail(where, f"expected a list of descriptions, got {value!r}")
            for i, item in enumerate(value):
                check_description(item, tensors, functions, f"{where}[{i}]")
        elif kind_of == "call":
            if not isinstance(value, dict) or set(value) != set(_CALL):
                raise fail(where, f"expected a dict with fields {sorted(_CALL)}, got {value!r}")
            if value["f"] not in functions:
                raise fail(f"{where}.f", f"{value['f']!r} names no function attr of the node")
            if not (isinstance(value["captured"], list)
                    and all(is_index(v) for v in value["captured"])):
                raise fail(f"{where}.captured", "expected a list of tensor indices, got "
                                                f"{value['captured']!r}")
    if kind in _SIZES:
        name, size = _SIZES[kind]
        if len(desc[name]) != size:
            raise fail(f"{path}.{name}", f"expected {size} items, got {len(desc[name])}")
    if "sparse" in desc and "components" in desc:
        count = len(desc["components"]) - 2 * len(desc["sparse"])
        if desc["sparse"][-1] >= count:
            raise fail(f"{path}.sparse", f"{desc['sparse']!r} are not positions of sparse "
                                         f"components among {len(desc['components'])} tensors")


def resource_key(shared_name: str) -> str:
    return f"iterator:{shared_name}"  # ":" never occurs in a variable's name


class IteratorResource:
    """One iterator's state on its device: the current pass and the step it runs in."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.elements: Iterator[Element] | None = None
        self.step: Any = None
        # the position a checkpoint saves: see the module docstring
        self.description: dict[str, Any] | None = None
        self.initializer = ""
        self.produced = 0
        self.entropy = 0
        self.unseeded = 0  # random streams drawn from `entropy` so far, in build order

    def start(self, initializer: str, description: dict[str, Any], entropy: int) -> None:
        self.initializer, self.description = initializer, description
        self.produced, self.entropy, self.unseeded = 0, entropy, 0

    def seed_sequence(self, seeds: list[int]) -> np.random.SeedSequence:
        """TF: seeds (0, 0) draw at random, once per iterator start; a replay from the same
        `entropy` draws the same streams."""
        if seeds != [0, 0]:
            return np.random.SeedSequence(seeds)
        self.unseeded += 1
        return np.random.SeedSequence(self.entropy, spawn_key=(self.unseeded,))


class _Builder:
    """Turns a description into stages over the ``MakeIterator`` node's input values."""

    def __init__(self, ctx: KernelContext, resource: IteratorResource,
                 components: list[Any]) -> None:
        self.ctx = ctx
        self.resource = resource
        self.components = components

    def error(self, message: str) -> errors.InvalidArgumentError:
        return errors.InvalidArgumentError(self.ctx.node_name, self.ctx.op, message)

    def int_of(self, index: int) -> int:
        return int(self.components[index])

    def build(self, desc: dict[str, Any], components: list[Any] | None = None) -> Stage:
        if components is not None:
            return _Builder(self.ctx, self.resource, components).build(desc)
        kind = desc["kind"]
        method = getattr(self, f"_{kind}", None)
        if method is None:
            raise self.error(f"Unknown dataset kind '{kind}'")
        return method(desc)

    def call(self, desc: dict[str, Any], element: Element, captured: list[Any]) -> list[Any]:
        return call_function(self.ctx, self.resource.step, desc["f"],
                             [*flat_components(element), *captured])

    # -- sources --------------------------------------------------------------------------------

    def _element(self, desc: dict[str, Any]) -> Element:
        return self.group([self.components[i] for i in desc["components"]], desc)

    def group(self, tensors: list[Any], desc: dict[str, Any]) -> Element:
        try:
            return group_components(tensors, desc.get("sparse", []))
        except ValueError as exc:
            raise self.error(str(exc)) from None

    def _tensor_slices(self, desc: dict[str, Any]) -> Stage:
        rows = self._slices(self._element(desc))
        return lambda: iter(rows)

    def _slices(self, element: Element) -> list[Element]:
        """`element`'s slices along dimension 0 (TF's unbatching of dense and sparse)."""
        columns: list[list[Any]] = []
        for c in element:
            rank = int(c.dense_shape.shape[0]) if isinstance(c, SparseValue) else c.ndim
            if rank == 0:
                raise self.error("Unbatching a tensor is only supported for rank >= 1")
            columns.append(self._sparse_rows(c) if isinstance(c, SparseValue)
                           # v[i, ...] keeps a string element an array (v[i] would be bytes)
                           else [c[i, ...] for i in range(c.shape[0])])
        n = len(columns[0])
        for column in columns[1:]:
            if len(column) != n:
                raise self.error(f"Dimension 0 in both shapes must be equal, but are {n} and "
                                 f"{len(column)}: all components of from_tensor_slices must "
                                 "have the same size in the 0th dimension")
        return [[column[i] for column in columns] for i in range(n)]

    def _sparse_rows(self, sparse: SparseValue) -> list[SparseValue]:
        xp = self.ctx.xp
        indices, values, shape = sparse
        if shape.shape[0] < 2:  # TF's SerializeManySparse, which slices sparse rows
            raise self.error(f"Rank of input SparseTensor should be > 1, but saw rank: "
                             f"{shape.shape[0]}")
        rows = indices[:, 0]
        if bool(xp.any((rows < 0) | (rows >= shape[0]))):
            raise self.error(f"A SparseTensor's row index is out of range [0, {int(shape[0])})")
        order = xp.argsort(rows, kind="stable")
        bounds = xp.searchsorted(rows[order], xp.arange(int(shape[0]) + 1))
        return [SparseValue(indices[order[a:b], 1:], values[order[a:b]], shape[1:])
                for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]

    def _tensors(self, desc: dict[str, Any]) -> Stage:
        element = self._element(desc)
        return lambda: iter([element])

    def _range(self, desc: dict[str, Any]) -> Stage:
        start, stop, step = (self.int_of(i) for i in desc["args"])
        if step == 0:
            raise self.error("step must be a non-zero integer.")
        return lambda: ([np.asarray(v, np.int64)] for v in range(start, stop, step))

    def _zip(self, desc: dict[str, Any]) -> Stage:
        stages = [self.build(d) for d in desc["inputs"]]

        def run() -> Iterator[Element]:
            for parts in zip(*(s() for s in stages)):
                yield [v for part in parts for v in part]

        return run

    def _concatenate(self, desc: dict[str, Any]) -> Stage:
        first, second = (self.build(d) for d in desc["inputs"])

        def run() -> Iterator[Element]:
            yield from first()
            yield from second()

        return run

    def _strings(self, index: int) -> list[str]:
        return [os.fsdecode(bytes(v)) for v in np.asarray(self.components[index],
                                                           dtype=object).reshape(-1)]

    def _files(self, desc: dict[str, Any], read: Callable[..., Iterator[bytes]]) -> Stage:
        files = [checked_path(self.ctx, f) for f in self._strings(desc["filenames"])]
        if np.ndim(self.components[desc["filenames"]]) > 1:
            raise self.error("`filenames` must be a scalar or a vector.")
        compression = bytes(self.components[desc["compression_type"]][()]).decode()
        if compression not in ("", "ZLIB", "GZIP"):
            raise self.error(f"Unsupported compression_type: {compression}.")
        if self.int_of(desc["buffer_size"]) < 0:
            raise self.error("`buffer_size` must be >= 0 (0 == no buffering)")

        def run() -> Iterator[Element]:
            for path in files:
                for data in read(path, compression):
                    yield [np.array(data, dtype=object)]

        return run

    def _tf_record(self, desc: dict[str, Any]) -> Stage:
        return self._files(desc, read_records)

    def _text_line(self, desc: dict[str, Any]) -> Stage:
        return self._files(desc, read_lines)

    def _list_files(self, desc: dict[str, Any]) -> Stage:
        patterns = self._strings(desc["patterns"])
        files = checked_matches(self.ctx, (f for p in patterns for f in
                                           sorted(glob.glob(checked_pattern(self.ctx, p)))))
        if not files:
            raise self.error(f"No files matched pattern: {', '.join(patterns)}")
        rng = np.random.default_rng(self.resource.seed_sequence([desc["seed"], desc["seed2"]]))

        def run() -> Iterator[Element]:
            order = rng.permutation(len(files)) if desc["shuffle"] else range(len(files))
            for i in order:
                yield [np.array(files[i].encode(), dtype=object)]

        return run

    def _generator(self, desc: dict[str, Any]) -> Stage:
        start, step = desc["start"], desc["next"]
        start_captured, next_captured = self._captured(start), self._captured(step)

        def run() -> Iterator[Element]:
            (gen_id,) = self.call(start, [], start_captured)
            while True:
                done, *element = self.call(step, [gen_id], next_captured)
                if bool(done):
                    return
                yield element

        return run

    # -- functions ------------------------------------------------------------------------------

    def _captured(self, desc: dict[str, Any]) -> list[Any]:
        return [self.components[i] for i in desc["captured"]]

    def _map(self, desc: dict[str, Any]) -> Stage:
        source, captured = self.build(desc["input"]), self._captured(desc)
        parallel = self.int_of(desc["num_parallel_calls"]) if "num_parallel_calls" in desc else 1
        parallel = (os.cpu_count() or 1) if parallel == -1 else parallel  # AUTOTUNE
        if parallel <= 0:
            raise self.error(f"num_parallel_calls must be greater than zero, got {parallel}")
        if parallel == 1:
            return lambda: (self.group(self.call(desc, e, captured), desc) for e in source())

        def run() -> Iterator[Element]:
            inputs = source()
            with ThreadPoolExecutor(parallel, thread_name_prefix="tf_data_map") as pool:
                while True:
                    group, failure = _take(inputs, parallel)
                    futures = [pool.submit(self.call, desc, e, captured) for e in group]
                    # every call of the group ends inside this step (the one pulling the
                    # first of them), so no function outlives the step it runs in
                    wait(futures)
                    for future in futures:
                        yield self.group(future.result(), desc)
                    if failure is not None:
                        raise failure
                    if len(group) < parallel:
                        return

        return run

    def _filter(self, desc: dict[str, Any]) -> Stage:
        source, captured = self.build(desc["input"]), self._captured(desc)

        def run() -> Iterator[Element]:
            for element in source():
                (keep,) = self.call(desc, element, captured)
                if bool(keep):
                    yield element

        return run

    def _flat_map(self, desc: dict[str, Any]) -> Stage:
        source, captured = self.build(desc["input"]), self._captured(desc)

        def run() -> Iterator[Element]:
            for element in source():
                yield from self.build(desc["inner"], self.call(desc, element, captured))()

        return run

    def _interleave(self, desc: dict[str, Any]) -> Stage:
        source, captured = self.build(desc["input"]), self._captured(desc)
        cycle, block = self.int_of(desc["cycle_length"]), self.int_of(desc["block_length"])
        cycle = (os.cpu_count() or 1) if cycle == -1 else cycle  # AUTOTUNE
        if cycle <= 0:
            raise self.error("cycle_length must be greater than zero.")
        if block <= 0:
            raise self.error("block_length must be greater than zero.")

        parallel = self.int_of(desc["num_parallel_calls"]) if "num_parallel_calls" in desc else 1
        parallel = (os.cpu_count() or 1) if parallel == -1 else parallel  # AUTOTUNE
        if parallel <= 0:
            raise self.error(f"num_parallel_calls must be greater than zero, got {parallel}")

        def run() -> Iterator[Element]:
            # TF's InterleaveDatasetOp: a slot whose dataset ends takes the next input element
            inputs = source()
            slots: list[_ReadAhead | None] = [None] * cycle
            index = taken = live = 0
            exhausted = False

            def open_slot() -> _ReadAhead | None:
                """The next input's dataset, None at the end of the input."""
                nonlocal exhausted, live
                element = next(inputs, None)
                if element is None:
                    exhausted = True
                    return None
                live += 1
                return _ReadAhead(self.build(desc["inner"],
                                             self.call(desc, element, captured))())

            pool = ThreadPoolExecutor(parallel, thread_name_prefix="tf_data_interleave") \
                if parallel > 1 else None
            try:
                while not exhausted or live:
                    current = slots[index]
                    if pool is not None and (current is None or current.empty()):
                        # Open the empty positions the index reaches next (the sequential
                        # order gives them the next inputs in that order), then read the next
                        # block of every open slot at once, all within this step.
                        for offset in range(cycle):
                            position = (index + offset) % cycle
                            if slots[position] is None and not exhausted:
                                slots[position] = _ReadAhead.opening(open_slot)
                        current = slots[index]
                        wait([pool.submit(slot.fill, block) for slot in slots
                              if slot is not None and slot.empty()])
                    if current is not None:
                        element = current.next()
                        if element is not None:
                            taken += 1
                            if taken == block:
                                index, taken = (index + 1) % cycle, 0
                            yield element
                            continue
                        slots[index] = None
                        live -= 1
                        index, taken = (index + 1) % cycle, 0
                    elif not exhausted:
                        slots[index] = open_slot()
                    else:
                        index, taken = (index + 1) % cycle, 0
            finally:
                if pool is not None:
                    pool.shutdown()

        return run

    # -- transformations ------------------------------------------------------------------------

    def _batch(self, desc: dict[str, Any]) -> Stage:
        source, size = self.build(desc["input"]), self._batch_size(desc)
        drop = bool(self.components[desc["drop_remainder"]])

        def run() -> Iterator[Element]:
            batch: list[Element] = []
            for element in source():
                batch.append(element)
                if len(batch) == size:
                    yield self._stack(batch)
                    batch = []
            if batch and not drop:
                yield self._stack(batch)

        return run

    def _batch_size(self, desc: dict[str, Any]) -> int:
        size = self.int_of(desc["batch_size"])
        if size <= 0:
            raise self.error(f"Batch size must be greater than zero, got {size}")
        return size

    def _stack(self, batch: list[Element]) -> Element:
        out = []
        for c, first in enumerate(batch[0]):
            if isinstance(first, SparseValue):
                out.append(self._stack_sparse([element[c] for element in batch]))
                continue
            for j, element in enumerate(batch[1:], 1):
                if element[c].shape != first.shape:
                    raise self.error(
                        f"Cannot batch tensors with different shapes in component {c}. First "
                        f"element had shape {list(first.shape)} and element {j} had shape "
                        f"{list(element[c].shape)}.")
            out.append(self.ctx.xp.stack([element[c] for element in batch]))
        return out

    def _stack_sparse(self, rows: list[SparseValue]) -> SparseValue:
        """`rows` as one sparse tensor of one more dimension, whose dense shape is the largest
        of theirs in each dimension (TF's ``DeserializeSparse``)."""
        xp = self.ctx.xp
        rank = int(rows[0].dense_shape.shape[0])
        for i, row in enumerate(rows[1:], 1):
            if int(row.dense_shape.shape[0]) != rank:
                raise self.error(f"Inconsistent shape across SparseTensors: rank prior to "
                                 f"SparseTensor[{i}] was: {rank} but rank of SparseTensor[{i}] "
                                 f"is: {int(row.dense_shape.shape[0])}")
        indices = [xp.concatenate([xp.full((len(row.values), 1), i, dtype=xp.int64),
                                   xp.reshape(row.indices, (-1, rank)).astype(xp.int64)],
                                  axis=1) for i, row in enumerate(rows)]
        shapes = xp.stack([row.dense_shape.astype(xp.int64) for row in rows])
        dense_shape = xp.concatenate([xp.asarray([len(rows)], dtype=xp.int64),
                                      shapes.max(axis=0)])
        return SparseValue(xp.concatenate(indices), xp.concatenate([r.values for r in rows]),
                           dense_shape)

    def _unbatch(self, desc: dict[str, Any]) -> Stage:
        source = self.build(desc["input"])

        def run() -> Iterator[Element]:
            for element in source():
                yield from self._slices(element)

        return run

    def _dense_to_sparse_batch(self, desc: dict[str, Any]) -> Stage:
        source, size = self.build(desc["input"]), self._batch_size(desc)
        row_shape = [int(d) for d in self.components[desc["row_shape"]]]

        def run() -> Iterator[Element]:
            batch: list[Any] = []
            for (value,) in source():
                self._check_row(value, row_shape)
                batch.append(value)
                if len(batch) == size:
                    yield [self._dense_rows(batch, row_shape)]
                    batch = []
            if batch:
                yield [self._dense_rows(batch, row_shape)]

        return run

    def _check_row(self, value: Any, row_shape: list[int]) -> None:
        shape = ", ".join(str(d) for d in value.shape)
        wanted = ", ".join(str(d) for d in row_shape)
        if value.ndim != len(row_shape):
            raise self.error(f"Input element had shape ({shape}) that is incompatible with "
                             f"the row shape ({wanted}).")
        if any(s != -1 and n > s for n, s in zip(value.shape, row_shape)):
            raise errors.DataLossError(
                self.ctx.node_name, self.ctx.op, f"Input element had shape ({shape}) that is "
                f"larger than the row shape ({wanted}).")

    def _dense_rows(self, batch: list[Any], row_shape: list[int]) -> SparseValue:
        """Every entry of each of `batch`'s arrays, in its row of one sparse tensor."""
        xp = self.ctx.xp
        rows = [SparseValue(xp.stack(xp.unravel_index(xp.arange(v.size), v.shape), axis=-1)
                            .reshape(v.size, v.ndim).astype(xp.int64), v.reshape(-1),
                            xp.asarray(v.shape, dtype=xp.int64)) for v in batch]
        stacked = self._stack_sparse(rows)
        fixed = xp.asarray([len(batch), *row_shape], dtype=xp.int64)
        return stacked._replace(dense_shape=xp.where(fixed == -1, stacked.dense_shape, fixed))

    def _padded_batch(self, desc: dict[str, Any]) -> Stage:
        source, size = self.build(desc["input"]), self._batch_size(desc)
        drop = bool(self.components[desc["drop_remainder"]])
        shapes = [[int(d) for d in self.components[i]] for i in desc["padded_shapes"]]
        pads = [self.components[i] for i in desc["padding_values"]]

        def run() -> Iterator[Element]:
            batch: list[Element] = []
            for element in source():
                batch.append(element)
                if len(batch) == size:
                    yield self._pad(batch, shapes, pads)
                    batch = []
            if batch and not drop:
                yield self._pad(batch, shapes, pads)

        return run

    def _pad(self, batch: list[Element], shapes: list[list[int]], pads: list[Any]) -> Element:
        xp, out = self.ctx.xp, []
        for c, (shape, pad) in enumerate(zip(shapes, pads)):
            values = [element[c] for element in batch]
            if isinstance(values[0], SparseValue):
                raise self.error("Batching of padded sparse tensors is not currently supported")
            if any(v.ndim != len(shape) for v in values):
                raise self.error(f"The padded shape {shape} of component {c} has another rank "
                                 f"than its elements ({values[0].ndim})")
            target = [max(v.shape[d] for v in values) if s == -1 else s
                      for d, s in enumerate(shape)]
            for v in values:
                if any(n > t for n, t in zip(v.shape, target)):
                    raise self.error(f"Attempted to pad to a smaller size than the input "
                                     f"element: component {c} has shape {list(v.shape)}, the "
                                     f"padded shape is {target}")
            result = xp.full([len(values), *target], pad, dtype=values[0].dtype)
            for i, v in enumerate(values):
                result[(i, *(slice(0, n) for n in v.shape))] = v
            out.append(result)
        return out

    def _shuffle(self, desc: dict[str, Any]) -> Stage:
        source, size = self.build(desc["input"]), self.int_of(desc["buffer_size"])
        if size <= 0:
            raise self.error(f"buffer_size must be greater than zero, got {size}")
        # TF: (0, 0) seeds at random, once per iterator; every pass then follows from it.
        base = self.resource.seed_sequence([desc["seed"], desc["seed2"]])
        shared = np.random.default_rng(base)

        def run() -> Iterator[Element]:
            rng = shared if desc["reshuffle"] else np.random.default_rng(base)
            buffer: list[Element] = []
            for element in source():
                if len(buffer) < size:
                    buffer.append(element)
                    continue
                i = int(rng.integers(size))
                yield buffer[i]
                buffer[i] = element
            while buffer:
                i = int(rng.integers(len(buffer)))
                buffer[i], buffer[-1] = buffer[-1], buffer[i]
                yield buffer.pop()

        return run

    def _repeat(self, desc: dict[str, Any]) -> Stage:
        source, count = self.build(desc["input"]), self.int_of(desc["count"])

        def run() -> Iterator[Element]:
            done = 0
            while count < 0 or done < count:
                empty = True
                for element in source():
                    empty = False
                    yield element
                done += 1
                if empty:  # an empty pass would repeat forever: TF stops too
                    return

        return run

    def _take(self, desc: dict[str, Any]) -> Stage:
        source, count = self.build(desc["input"]), self.int_of(desc["count"])

        def run() -> Iterator[Element]:
            if count == 0:
                return
            for i, element in enumerate(source(), 1):
                yield element
                if i == count:
                    return

        return run

    def _skip(self, desc: dict[str, Any]) -> Stage:
        source, count = self.build(desc["input"]), self.int_of(desc["count"])

        def run() -> Iterator[Element]:
            elements = source()
            if count < 0:
                for _ in elements:
                    pass
                return
            for i, element in enumerate(elements):
                if i >= count:
                    yield element

        return run

    def _prefetch(self, desc: dict[str, Any]) -> Stage:
        if self.int_of(desc["buffer_size"]) < -1:
            raise self.error("buffer_size must be -1 (AUTOTUNE) or non-negative")
        return self.build(desc["input"])

    def _cache(self, desc: dict[str, Any]) -> Stage:
        source = self.build(desc["input"])
        recorded: list[Element] = []
        complete: list[bool] = []

        def run() -> Iterator[Element]:
            if complete:
                yield from recorded
                return
            recorded.clear()
            for element in source():
                recorded.append(element)
                yield element
            complete.append(True)

        return run


def _resource(ctx: KernelContext) -> IteratorResource:
    return get_or_create(ctx, resource_key(ctx.attrs["shared_name"]), IteratorResource)


def make_iterator(ctx: KernelContext, *components: Any) -> None:
    resource = _resource(ctx)
    with resource.lock:
        if ctx.attrs["one_shot"] and resource.elements is not None:
            return
        _start(ctx, resource, components, ctx.node_name,
               np.random.SeedSequence().entropy)


def _start(ctx: KernelContext, resource: IteratorResource, components: tuple[Any, ...],
           initializer: str, entropy: int) -> None:
    """Start `resource` on the pipeline the node describes (caller holds its lock)."""
    functions = {name for name in FUNCTION_ATTRS if ctx.attrs.get(name) is not None}
    try:
        check_description(ctx.attrs["dataset"], len(components), functions)
    except ValueError as exc:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op, str(exc)) from None
    before = (resource.initializer, resource.description, resource.produced, resource.entropy,
              resource.unseeded)
    resource.start(initializer, ctx.attrs["dataset"], entropy)
    try:
        stage = _Builder(ctx, resource, list(components)).build(ctx.attrs["dataset"])
    except BaseException:  # a pipeline that fails to build leaves the iterator as it was
        (resource.initializer, resource.description, resource.produced, resource.entropy,
         resource.unseeded) = before
        raise
    resource.elements = stage()


def _check_element(ctx: KernelContext, element: Element) -> list[Any]:
    out = []
    for i, (value, dtype, shape) in enumerate(zip(flat_components(element),
                                                  ctx.attrs["output_types"],
                                                  ctx.attrs["output_shapes"])):
        if not TensorShape(value.shape).is_compatible_with(shape):
            raise errors.InvalidArgumentError(
                ctx.node_name, ctx.op, f"Component {i} of the element has shape "
                f"{list(value.shape)}, incompatible with the iterator's shape {shape}")
        out.append(value if value.dtype == dtype.np_type else value.astype(dtype.np_type))
    return out


def iterator_get_next(ctx: KernelContext, step: Any) -> Any:
    return _next_element(ctx, step, _resource(ctx))


def iterator_to_string_handle(ctx: KernelContext) -> Any:
    return np.array(ctx.attrs["shared_name"].encode(), dtype=object)


def iterator_get_next_from_string_handle(ctx: KernelContext, step: Any, handle: Any) -> Any:
    value = np.asarray(handle, dtype=object).reshape(-1)
    name = value[0] if value.size == 1 else None
    name = name.decode() if isinstance(name, bytes) else name
    if not name or resource_key(name) not in ctx.device.resources:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"{value.tolist()!r} is not a string handle of an iterator "
                                   f"on {ctx.device.name}")
    return _next_element(ctx, step, get_or_create(ctx, resource_key(name), IteratorResource))


class _ReadAhead:
    """An interleave slot: its dataset's iterator, with elements read ahead by `fill` (from any
    one thread at a time) and given in order by `next`; an error stops the reading and is
    raised where it happened in the order."""

    def __init__(self, elements: Iterator[Element]) -> None:
        self.elements = elements
        self.ready: collections.deque[Element] = collections.deque()
        self.ended = False
        self.error: Exception | None = None

    @classmethod
    def opening(cls, open_slot: Callable[[], _ReadAhead | None]) -> _ReadAhead | None:
        """`open_slot()`, or, if opening failed, a slot that raises its error when read."""
        try:
            return open_slot()
        except Exception as exc:  # noqa: BLE001 - raised when the index reaches the slot
            failed = cls(iter(()))
            failed.ended, failed.error = True, exc
            return failed

    def empty(self) -> bool:
        return not self.ready and not self.ended

    def fill(self, count: int) -> None:
        try:
            while len(self.ready) < count and not self.ended:
                element = next(self.elements, None)
                if element is None:
                    self.ended = True
                else:
                    self.ready.append(element)
        except Exception as exc:  # noqa: BLE001 - raised by `next` at its place
            self.ended, self.error = True, exc

    def next(self) -> Element | None:
        """The next element, None at the end."""
        if self.empty():
            self.fill(1)
        if self.ready:
            return self.ready.popleft()
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        return None


def _take(inputs: Iterator[Element], count: int) -> tuple[list[Element], Exception | None]:
    """Up to `count` elements of `inputs`, and the error that stopped it early, if any (raised
    after the elements before it, in order)."""
    group: list[Element] = []
    try:
        for _ in range(count):
            element = next(inputs, None)
            if element is None:
                break
            group.append(element)
    except Exception as exc:  # noqa: BLE001 - re-raised at its place in the order
        return group, exc
    return group, None


def _next_element(ctx: KernelContext, step: Any, resource: IteratorResource) -> Any:
    with resource.lock:
        if resource.elements is None:
            raise errors.FailedPreconditionError(
                ctx.node_name, ctx.op, "GetNext() failed because the iterator has not been "
                "initialized. Ensure that you have run the initializer operation for this "
                "iterator before getting the next element.")
        resource.step = step
        try:
            element = next(resource.elements)
        except StopIteration:
            raise errors.OutOfRangeError(ctx.node_name, ctx.op, "End of sequence") from None
        finally:
            resource.step = None
        resource.produced += 1
    values = _check_element(ctx, element)
    return values[0] if len(values) == 1 else tuple(values)


# -- checkpoints -----------------------------------------------------------------------------------

_STATE_FORMAT = "tensorweave.iterator_state/1"
_UNSAVEABLE = ("generator",)


def _kinds(desc: Any) -> Iterator[str]:
    """The kinds of `desc` and of every description nested in it."""
    if isinstance(desc, dict):
        if isinstance(desc.get("kind"), str):
            yield desc["kind"]
        for value in desc.values():
            yield from _kinds(value)
    elif isinstance(desc, list):
        for value in desc:
            yield from _kinds(value)


def serialize_iterator(ctx: KernelContext) -> np.ndarray:
    resource = _resource(ctx)
    with resource.lock:
        if resource.elements is None or resource.description is None:
            raise errors.FailedPreconditionError(
                ctx.node_name, ctx.op, "Cannot save an iterator that has not been initialized.")
        for kind in _kinds(resource.description):
            if kind in _UNSAVEABLE:
                raise errors.UnimplementedError(
                    ctx.node_name, ctx.op, f"Saving an iterator over a '{kind}' dataset is not "
                    "supported: its state lives outside the graph.")
        state = {"format": _STATE_FORMAT, "initializer": resource.initializer,
                 "produced": resource.produced, "entropy": str(resource.entropy)}
    return np.array(json.dumps(state).encode(), dtype=object)


def _parse_state(ctx: KernelContext, serialized: Any) -> dict[str, Any]:
    value = np.asarray(serialized, dtype=object).reshape(-1)
    try:
        if value.size != 1:
            raise ValueError(f"expected a scalar, got {value.size} values")
        state = json.loads(bytes(value[0]).decode())
        if not (isinstance(state, dict) and state.get("format") == _STATE_FORMAT
                and isinstance(state.get("initializer"), str)
                and isinstance(state.get("produced"), int) and state["produced"] >= 0):
            raise ValueError("not a tensorweave iterator state")
        state["entropy"] = int(state["entropy"])
    except (ValueError, TypeError, KeyError) as exc:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"Malformed serialized iterator state: {exc}") from None
    return state


def deserialize_iterator(ctx: KernelContext, step: Any, serialized: Any,
                         *components: Any) -> None:
    state = _parse_state(ctx, serialized)
    if state["initializer"] not in ctx.attrs["initializers"]:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"The iterator state was saved after initializer "
            f"'{state['initializer']}', which is not an initializer of this iterator "
            f"({', '.join(ctx.attrs['initializers'])}).")
    if state["initializer"] != ctx.attrs["initializer"]:
        return
    resource = _resource(ctx)
    with resource.lock:
        _start(ctx, resource, components, state["initializer"], state["entropy"])
        resource.step = step
        try:
            for done in range(state["produced"]):
                if next(resource.elements, None) is None:
                    resource.elements = None
                    raise errors.DataLossError(
                        ctx.node_name, ctx.op, f"The iterator's dataset ended after {done} "
                        f"elements, but the saved state had given {state['produced']}: it is "
                        "not the dataset that was saved.")
        finally:
            resource.step = None
        resource.produced = state["produced"]


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    if device_type != "CPU":  # TF runs input pipelines on the host only
        return
    registry.add("MakeIterator", device_type, make_iterator)
    registry.add("IteratorGetNext", device_type, iterator_get_next, needs_step=True)
    registry.add("IteratorToStringHandle", device_type, iterator_to_string_handle)
    registry.add("IteratorGetNextFromStringHandle", device_type,
                 iterator_get_next_from_string_handle, needs_step=True)
    registry.add("SerializeIterator", device_type, serialize_iterator)
    registry.add("DeserializeIterator", device_type, deserialize_iterator, needs_step=True)
