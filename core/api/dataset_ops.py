"""``tf.compat.v1.data.Dataset``: an input pipeline described at graph-construction time.

Contract: a `Dataset` is a Python value: its element structure (a nest of tuples and dicts whose
leaves are `TensorSpec`s, or `SparseSpec`s for `SparseTensor` components; a list given as data
is one tensor, as in TF) and how to describe
itself as plain data for an iterator's ``MakeIterator`` op (see
`tensorweave.plugins.kernels.dataset`). Tensors a dataset needs (source data, sizes, counts)
are made when the method is called, in the default graph; ``map``/``filter``/``flat_map``/
``interleave`` functions are traced once into `FunctionDef`s whose arguments are an element's
tensors then the outer tensors they capture (a captured variable is read when the function
runs). A sparse component travels as its three tensors (indices, values, dense_shape); the
descriptions of sources and of ``map`` say which components are sparse, so that slicing and
batching treat them as TF does (a batch of sparse rows has the largest dense shape of its
rows; ``padded_batch`` refuses them).
File sources (`TFRecordDataset`, `TextLineDataset`, ``list_files``) take their file
names as string tensors and read when iterated; ``from_generator`` calls its generator through
``py_func``, so only in this process. Nothing is
computed until an iterator (`tensorweave.api.iterator_ops`) runs. Signatures, static output
types and shapes, and construction errors follow ``tf.compat.v1``.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import numpy as np

from tensorweave.api.array_ops import reshape
from tensorweave.api.dataset_functions import FUNCTION_ATTRS, MAX_FUNCTIONS
from tensorweave.api.random_ops import get_seed
from tensorweave.api.script_ops import py_func
from tensorweave.api.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.func_graph import (
    FuncGraph,
    FunctionDef,
    build_func_graph,
    to_function_def,
    unique_function_name,
)
from tensorweave.engine.graph.graph import Operation, Tensor, constant_value, get_default_graph
from tensorweave.engine.graph.string_array import to_string_array
from tensorweave.engine.op_def import TensorSpec
from tensorweave.engine.tensor_shape import TensorShape, as_shape

__all__ = ["Dataset", "TFRecordDataset", "TextLineDataset"]

AUTOTUNE = -1
_READER_BUFFER_BYTES = 256 * 1024  # TF's default buffer_size of file datasets

# -- element structures ---------------------------------------------------------------------------


def flatten(structure: Any) -> list[Any]:
    """The leaves of a nest of tuples (namedtuples too) and dicts (by sorted key)."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k])]
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_as(structure: Any, flat: list[Any]) -> Any:
    """`flat`'s leaves in the shape of `structure` (inverse of `flatten`)."""
    leaves = iter(flat)

    def pack(s: Any) -> Any:
        if isinstance(s, dict):
            packed = {k: pack(s[k]) for k in sorted(s)}
            return type(s)((k, packed[k]) for k in s)
        if isinstance(s, tuple):
            items = [pack(item) for item in s]
            return type(s)(*items) if hasattr(s, "_fields") else tuple(items)
        return next(leaves)

    return pack(structure)


def flatten_up_to(structure: Any, value: Any, what: str) -> list[Any]:
    """The parts of `value` at the leaves of `structure` (a leaf of `structure` may face a nest
    in `value`, e.g. a shape given as a tuple); `ValueError` if they differ above that."""
    if isinstance(structure, dict):
        if not isinstance(value, dict) or sorted(value) != sorted(structure):
            raise ValueError(f"{what} {value!r} does not match the element structure "
                             f"{structure!r}")
        return [v for k in sorted(structure) for v in flatten_up_to(structure[k], value[k], what)]
    if isinstance(structure, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(structure):
            raise ValueError(f"{what} {value!r} does not match the element structure "
                             f"{structure!r}")
        return [v for s, x in zip(structure, value) for v in flatten_up_to(s, x, what)]
    return [value]


@attrs.frozen
class SparseSpec:
    """A `SparseTensor` component of an element: its values' dtype and its dense shape."""

    dtype: dtypes.DType
    shape: TensorShape = attrs.field(converter=TensorShape)

    def components(self) -> list[TensorSpec]:
        """The specs of its indices, values and dense_shape tensors."""
        rank = self.shape.ndims
        return [TensorSpec(dtypes.int64, TensorShape([None, rank])),
                TensorSpec(self.dtype, TensorShape([None])),
                TensorSpec(dtypes.int64, TensorShape([rank]))]


Spec = TensorSpec | SparseSpec


def component_specs(structure: Any) -> list[TensorSpec]:
    """The specs of the tensors an element of `structure` travels as (a sparse leaf: three)."""
    return [c for leaf in flatten(structure)
            for c in (leaf.components() if isinstance(leaf, SparseSpec) else [leaf])]


def sparse_positions(structure: Any) -> list[int]:
    """The positions of the sparse leaves among `structure`'s leaves."""
    return [i for i, leaf in enumerate(flatten(structure)) if isinstance(leaf, SparseSpec)]


def component_tensors(leaves: list[Any]) -> list[Tensor]:
    """`leaves` (tensors and sparse tensors) as the tensors they travel as."""
    return [t for leaf in leaves
            for t in ([leaf.indices, leaf.values, leaf.dense_shape]
                      if isinstance(leaf, SparseTensor) else [leaf])]


def pack_components(structure: Any, tensors: list[Tensor]) -> Any:
    """The element of `structure` that `tensors` (as `component_specs` lists them) stand for;
    a sparse leaf becomes a `SparseTensor` with the leaf's static shape."""
    parts = iter(tensors)
    leaves: list[Any] = []
    for leaf in flatten(structure):
        if isinstance(leaf, SparseSpec):
            sparse = SparseTensor(next(parts), next(parts), next(parts))
            sparse._dense_shape_default = leaf.shape  # the static shape the pipeline knows
            leaves.append(sparse)
        else:
            leaves.append(next(parts))
    return pack_as(structure, leaves)


def _sparse_values_as_tensors(value: Any) -> Any:
    """`value` with each `SparseTensorValue` (a namedtuple, not a nest) as a `SparseTensor`."""
    if isinstance(value, SparseTensorValue):
        return SparseTensor.from_value(value)
    if isinstance(value, dict):
        return type(value)((k, _sparse_values_as_tensors(v)) for k, v in value.items())
    if isinstance(value, tuple):
        items = [_sparse_values_as_tensors(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def element_structure(output_types: Any, output_shapes: Any = None,
                      output_classes: Any = None) -> Any:
    """Specs nested as `output_types` (dtypes), with `output_shapes` and `output_classes`
    (``Tensor`` or ``SparseTensor``; nested the same way; default: unknown shapes, dense)."""
    types = [dtypes.as_dtype(t) for t in flatten(output_types)]
    if output_shapes is None:
        shapes = [TensorShape(None)] * len(types)
    else:
        shapes = [as_shape(s) for s in flatten_up_to(output_types, output_shapes,
                                                     "output_shapes")]
    if output_classes is None:
        classes: list[Any] = [Tensor] * len(types)
    else:
        classes = flatten_up_to(output_types, output_classes, "output_classes")
    specs: list[Spec] = []
    for t, s, c in zip(types, shapes, classes):
        if c not in (Tensor, SparseTensor):
            raise TypeError(f"output_classes must be tf.Tensor or tf.SparseTensor, got {c!r}")
        specs.append(SparseSpec(t, s) if c is SparseTensor else TensorSpec(t, s))
    return pack_as(output_types, specs)


def _map_structure(fn: Callable[[Any], Any], structure: Any) -> Any:
    return pack_as(structure, [fn(leaf) for leaf in flatten(structure)])


def _lists_to_tuples(value: Any) -> Any:
    """TF1 reads a list a function returns as a tuple."""
    if isinstance(value, list):
        return tuple(_lists_to_tuples(v) for v in value)
    if isinstance(value, dict):
        return type(value)((k, _lists_to_tuples(v)) for k, v in value.items())
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_lists_to_tuples(v) for v in value)
    return value


def _tensors_of(structure: Any) -> Any:
    return _map_structure(lambda v: v if isinstance(v, SparseTensor)
                          else convert_to_tensor(v, name="component"),
                          _sparse_values_as_tensors(structure))


def _spec(t: Tensor | SparseTensor) -> Spec:
    if isinstance(t, SparseTensor):
        return SparseSpec(t.dtype, t.get_shape())
    return TensorSpec(t.dtype, t.shape)


def _with_shape(spec: Spec, shape: TensorShape) -> Spec:
    return type(spec)(spec.dtype, shape)


def _scalar(value: Any, dtype: dtypes.DType, name: str) -> Tensor:
    t = convert_to_tensor(value, dtype=dtype, name=name) if isinstance(value, Tensor) \
        else constant(value, dtype=dtype, name=name)
    if t.shape.ndims not in (None, 0):
        raise ValueError(f"{name} must be a scalar, got shape {t.shape}")
    return t


def _most_specific(a: TensorShape, b: TensorShape) -> TensorShape:
    if a.dims is None or b.dims is None or len(a.dims) != len(b.dims):
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.dims, b.dims)])


# -- describing a pipeline as plain data ---------------------------------------------------------


@attrs.frozen(eq=False)
class Traced:
    """A function of a pipeline: its `FunctionDef` and the outer tensors it captured."""

    function: FunctionDef
    captured: tuple[Tensor, ...]
    variables: tuple[Operation, ...]
    control: tuple[Operation, ...]


class Description:
    """What one ``MakeIterator`` op needs: its inputs, function attrs and colocations."""

    def __init__(self, functions: dict[str, FunctionDef] | None = None) -> None:
        self.tensors: list[Tensor] = []
        self._index: dict[Tensor, int] = {}
        self.functions: dict[str, FunctionDef] = {} if functions is None else functions
        self.variables: list[Operation] = []
        self.control: list[Operation] = []

    def tensor(self, t: Tensor) -> int:
        if t not in self._index:
            self._index[t] = len(self.tensors)
            self.tensors.append(t)
        return self._index[t]

    def function(self, traced: Traced) -> dict[str, Any]:
        """The ``f`` and ``captured`` fields for `traced`."""
        if len(self.functions) == MAX_FUNCTIONS:
            raise ValueError(f"A tensorweave input pipeline holds at most {MAX_FUNCTIONS} "
                             "functions (map, filter, flat_map)")
        attr = FUNCTION_ATTRS[len(self.functions)]
        self.functions[attr] = traced.function
        self.variables.extend(v for v in traced.variables if v not in self.variables)
        self.control.extend(c for c in traced.control if c not in self.control)
        return {"f": attr, "captured": [self.tensor(t) for t in traced.captured]}


def _trace(name: str, fn: Callable[..., Any], structure: Any,
           outputs: Callable[[FuncGraph, Any], list[Tensor]]) -> tuple[Traced, Any]:
    """`fn` called on an element of `structure` (a tuple unpacked into arguments, as TF does),
    traced into a function whose results are ``outputs(graph, result)``; the function and what
    `fn` returned."""
    flat = component_specs(structure)
    holder: list[Any] = []

    def body(*args: Tensor) -> list[Tensor]:
        element = pack_components(structure, list(args))
        result = fn(*element) if type(element) is tuple else fn(element)
        holder.append(result)
        return outputs(get_default_graph(), result)  # the function's graph, while traced

    outer = get_default_graph()
    graph, results = build_func_graph(unique_function_name(name), body,
                                      [(s.dtype, s.shape) for s in flat], outer)
    captured = graph.outer_inputs()
    args = graph.inputs + [graph.capture(t) for t in captured]
    function = to_function_def(graph, args, results, unique_function_name(name))
    traced = Traced(function, tuple(captured), tuple(v for v in graph.variables
                                                     if v.graph is outer),
                    tuple(graph.control_captures))
    return traced, holder[0]


def _as_results(graph: FuncGraph, values: list[Any]) -> list[Tensor]:
    with graph.as_default():
        return [graph.capture(convert_to_tensor(v)) for v in values]


# -- datasets -----------------------------------------------------------------------------------


class Dataset:
    """A pipeline of elements; see the module docstring."""

    def __init__(self, structure: Any) -> None:
        self._structure = structure

    def _describe(self, d: Description) -> dict[str, Any]:
        raise NotImplementedError

    # -- structure --------------------------------------------------------------------------

    @property
    def output_types(self) -> Any:
        return _map_structure(lambda s: s.dtype, self._structure)

    @property
    def output_shapes(self) -> Any:
        return _map_structure(lambda s: s.shape, self._structure)

    @property
    def output_classes(self) -> Any:
        return _map_structure(lambda s: SparseTensor if isinstance(s, SparseSpec) else Tensor,
                              self._structure)

    def _flat_specs(self) -> list[Spec]:
        return flatten(self._structure)

    def __repr__(self) -> str:
        kind = "".join(p.title() for p in self._describe(Description())["kind"].split("_"))
        return f"<{kind}Dataset shapes: {self.output_shapes}, types: {self.output_types}>"

    # -- sources ----------------------------------------------------------------------------

    @staticmethod
    def from_tensor_slices(tensors: Any) -> Dataset:
        """One element per slice of `tensors` along their first dimension."""
        return _Components("tensor_slices", _tensors_of(tensors))

    @staticmethod
    def from_tensors(tensors: Any) -> Dataset:
        """One element: `tensors`."""
        return _Components("tensors", _tensors_of(tensors))

    @staticmethod
    def range(*args: Any) -> Dataset:
        """``range(stop)``, ``range(start, stop)`` or ``range(start, stop, step)``, as int64
        scalars."""
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid arguments to Dataset.range: {args}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        return _Range([_scalar(v, dtypes.int64, n)
                       for v, n in ((start, "start"), (stop, "stop"), (step, "step"))])

    @staticmethod
    def zip(datasets: Any) -> Dataset:
        """Elements of `datasets` (a nest of datasets) side by side, as long as the shortest."""
        members = flatten(datasets)
        if not members or not all(isinstance(m, Dataset) for m in members):
            raise TypeError(f"The argument to `Dataset.zip()` must be a (nested) structure of "
                            f"`Dataset` objects, got {datasets!r}")
        return _Zip(members, pack_as(datasets, [m._structure for m in members]))

    @staticmethod
    def list_files(file_pattern: Any, shuffle: bool | None = None,
                   seed: int | None = None) -> Dataset:
        """The files matching `file_pattern` (a string or vector of glob patterns), globbed
        when the iterator starts: each pattern's matches sorted, one pattern after another,
        then shuffled (each pass anew) unless `shuffle` is False. No match at all is
        `InvalidArgumentError` when the iterator starts."""
        patterns = convert_to_tensor(file_pattern, dtype=dtypes.string, name="file_pattern")
        if patterns.shape.ndims not in (None, 0, 1):
            raise ValueError(f"file_pattern must be a scalar or a vector, got shape "
                             f"{patterns.shape}")
        seed1, seed2 = get_seed(seed)
        return _Source("list_files", {"patterns": patterns},
                       TensorSpec(dtypes.string, TensorShape([])),
                       {"shuffle": shuffle is not False, "seed": seed1 or 0, "seed2": seed2 or 0})

    @staticmethod
    def from_generator(generator: Callable[..., Any], output_types: Any,
                       output_shapes: Any = None, args: Any = None) -> Dataset:
        """The elements ``generator(*args)`` yields, each converted to `output_types` (a nest
        of dtypes) and checked against `output_shapes` (default unknown); `args` are tensors,
        passed as numpy values. Each pass calls `generator` anew. It runs through `py_func`:
        only in this process (elsewhere ``IteratorGetNext`` fails with
        `InvalidArgumentError`), and an element of another structure, type or shape fails the
        step with `InvalidArgumentError`."""
        if not callable(generator):
            raise TypeError("`generator` must be callable.")
        structure = element_structure(output_types, output_shapes)
        specs = flatten(structure)
        types, shapes = [t.dtype for t in specs], [t.shape for t in specs]
        state = _GeneratorState(generator, structure)
        arg_tensors = [convert_to_tensor(a, name="args") for a in args or ()]

        def start_outputs(graph: FuncGraph, result: Any) -> list[Tensor]:
            return _as_results(graph, [result])

        def next_outputs(graph: FuncGraph, result: Any) -> list[Tensor]:
            for t, shape in zip(result[1:], shapes):
                t.set_shape(shape)
            return _as_results(graph, result)

        start, _ = _trace("Dataset_from_generator_start",
                          lambda: py_func(state.start, arg_tensors, dtypes.int64), (),
                          start_outputs)
        step, _ = _trace("Dataset_from_generator_next",
                         lambda gen_id: py_func(state.next, [gen_id], [dtypes.bool_, *types]),
                         TensorSpec(dtypes.int64, TensorShape([])), next_outputs)
        return _Generator(start, step, structure)

    # -- transformations --------------------------------------------------------------------

    def concatenate(self, dataset: Dataset) -> Dataset:
        """This dataset's elements, then `dataset`'s."""
        if self.output_types != dataset.output_types:
            raise TypeError(f"Two datasets to concatenate have different types "
                            f"{self.output_types} and {dataset.output_types}")
        if self.output_classes != dataset.output_classes:
            raise TypeError(f"Two datasets to concatenate have different classes "
                            f"{self.output_classes} and {dataset.output_classes}")
        specs = [_with_shape(a, _most_specific(a.shape, b.shape))
                 for a, b in zip(self._flat_specs(), dataset._flat_specs())]
        return _Concatenate(self, dataset, pack_as(self._structure, specs))

    def map(self, map_func: Callable[..., Any], num_parallel_calls: Any = None) -> Dataset:
        """`map_func` applied to each element, in order; with ``num_parallel_calls`` (an int64
        scalar, AUTOTUNE for one per CPU) that many elements are computed at once."""
        def outputs(graph: FuncGraph, result: Any) -> list[Tensor]:
            if result is None:
                raise ValueError("map_func must return a value (a tensor or a nest of them)")
            leaves = flatten(_sparse_values_as_tensors(_lists_to_tuples(result)))
            return _as_results(graph, component_tensors(leaves))

        traced, result = _trace("Dataset_map", map_func, self._structure, outputs)
        result = _sparse_values_as_tensors(_lists_to_tuples(result))
        returned = iter(zip(traced.function.ret_types, traced.function.ret_shapes))
        specs: list[Spec] = []
        for leaf in flatten(result):
            if isinstance(leaf, SparseTensor):
                specs.append(_spec(leaf))
                next(returned), next(returned), next(returned)
            else:
                specs.append(TensorSpec(*next(returned)))
        structure = pack_as(result, specs)
        sizes = {} if num_parallel_calls is None else {
            "num_parallel_calls": _scalar(num_parallel_calls, dtypes.int64, "num_parallel_calls")}
        return _Functional("map", self, traced, structure, _sparse_field(structure), sizes)

    def filter(self, predicate: Callable[..., Any]) -> Dataset:
        """The elements for which `predicate` gives a true scalar bool tensor."""
        def outputs(graph: FuncGraph, result: Any) -> list[Tensor]:
            (pred,) = _as_results(graph, [result])
            if pred.dtype != dtypes.bool_ or pred.shape.ndims not in (None, 0):
                raise ValueError("`predicate` return type must be convertible to a scalar "
                                 f"boolean tensor. Was {pred.dtype.name} of shape {pred.shape}.")
            return [pred]

        traced, _ = _trace("Dataset_filter", predicate, self._structure, outputs)
        return _Functional("filter", self, traced, self._structure)

    def flat_map(self, map_func: Callable[..., Any]) -> Dataset:
        """The elements of the datasets `map_func` makes of each element, one after another."""
        def outputs(graph: FuncGraph, result: Any) -> list[Tensor]:
            if not isinstance(result, Dataset):
                raise TypeError("`map_func` must return a `Dataset` object.")
            probe = Description()  # lists the tensors the inner dataset needs, in order
            result._describe(probe)
            return _as_results(graph, probe.tensors)

        traced, result = _trace("Dataset_flat_map", map_func, self._structure, outputs)
        return _FlatMap("flat_map", self, traced, result, result._structure)

    def interleave(self, map_func: Callable[..., Any], cycle_length: Any = AUTOTUNE,
                   block_length: Any = 1, num_parallel_calls: Any = None) -> Dataset:
        """The elements of the datasets `map_func` makes of each element, `cycle_length` of
        them open at once, taking `block_length` elements from each in turn (TF's order;
        AUTOTUNE: one per CPU); with ``num_parallel_calls`` the open datasets are read on that
        many threads, in the same order."""
        def outputs(graph: FuncGraph, result: Any) -> list[Tensor]:
            if not isinstance(result, Dataset):
                raise TypeError("`map_func` must return a `Dataset` object.")
            probe = Description()
            result._describe(probe)
            return _as_results(graph, probe.tensors)

        traced, result = _trace("Dataset_interleave", map_func, self._structure, outputs)
        sizes = {"cycle_length": _scalar(cycle_length, dtypes.int64, "cycle_length"),
                 "block_length": _scalar(block_length, dtypes.int64, "block_length")}
        if num_parallel_calls is not None:
            sizes["num_parallel_calls"] = _scalar(num_parallel_calls, dtypes.int64,
                                                  "num_parallel_calls")
        return _FlatMap("interleave", self, traced, result, result._structure, sizes)

    def batch(self, batch_size: Any, drop_remainder: Any = False) -> Dataset:
        """Consecutive elements stacked into batches of `batch_size` (the last one smaller
        unless `drop_remainder`)."""
        size = _scalar(batch_size, dtypes.int64, "batch_size")
        drop = _scalar(drop_remainder, dtypes.bool_, "drop_remainder")
        lead = _batch_dim(size, drop)
        specs = [_with_shape(s, TensorShape([lead]).concatenate(s.shape))
                 for s in self._flat_specs()]
        return _Transformation("batch", self, {"batch_size": size, "drop_remainder": drop},
                               pack_as(self._structure, specs))

    def padded_batch(self, batch_size: Any, padded_shapes: Any, padding_values: Any = None,
                     drop_remainder: Any = False) -> Dataset:
        """Batches whose elements are padded to `padded_shapes` (a dimension left ``None`` or
        -1 pads to the longest in the batch) with `padding_values` (default 0)."""
        if sparse_positions(self._structure):
            raise TypeError("Batching of padded sparse tensors is not currently supported")
        size = _scalar(batch_size, dtypes.int64, "batch_size")
        drop = _scalar(drop_remainder, dtypes.bool_, "drop_remainder")
        lead = _batch_dim(size, drop)
        shapes = flatten_up_to(self._structure, padded_shapes, "padded_shapes")
        if padding_values is None:
            values = [None] * len(shapes)
        else:
            values = flatten_up_to(self._structure, padding_values, "padding_values")
        shape_tensors, value_tensors, specs = [], [], []
        for spec, shape, value in zip(self._flat_specs(), shapes, values):
            shape = as_shape(shape)
            if shape.dims is None or not spec.shape.is_compatible_with(
                    TensorShape([None] * len(shape.dims))):
                raise ValueError(f"The padded shape {shape} is not compatible with the "
                                 f"corresponding input component shape {spec.shape}.")
            shape_tensors.append(constant([-1 if d is None else d for d in shape.dims],
                                          dtype=dtypes.int64, name="padded_shape"))
            value_tensors.append(_scalar(0 if value is None else value, spec.dtype,
                                         "padding_value"))
            specs.append(TensorSpec(spec.dtype, TensorShape([lead]).concatenate(shape)))
        return _PaddedBatch(self, size, drop, shape_tensors, value_tensors,
                            pack_as(self._structure, specs))

    def unbatch(self) -> Dataset:
        """The slices of each element along its first dimension, one element per slice (a
        sparse component's rows keep its dense shape's other dimensions)."""
        specs = []
        for spec in self._flat_specs():
            if spec.shape.ndims == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
            dims = spec.shape.dims
            specs.append(_with_shape(spec, TensorShape(None if dims is None else dims[1:])))
        return _Transformation("unbatch", self, {}, pack_as(self._structure, specs))

    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        """``transformation_func(self)``, which must be a `Dataset`."""
        dataset = transformation_func(self)
        if not isinstance(dataset, Dataset):
            raise TypeError(f"`transformation_func` must return a Dataset. Got {dataset}.")
        return dataset

    def shuffle(self, buffer_size: Any, seed: int | None = None,
                reshuffle_each_iteration: bool | None = None) -> Dataset:
        """Elements in random order, drawn from a buffer of `buffer_size` (TF's algorithm);
        seeded by the graph and op seeds as TF's random ops; a new order on each pass (each
        repeat) unless `reshuffle_each_iteration` is False."""
        seed1, seed2 = get_seed(seed)
        return _Transformation(
            "shuffle", self, {"buffer_size": _scalar(buffer_size, dtypes.int64, "buffer_size")},
            self._structure, {"seed": seed1 or 0, "seed2": seed2 or 0,
                              "reshuffle": reshuffle_each_iteration is not False})

    def repeat(self, count: Any = None) -> Dataset:
        """The elements `count` times over (forever if None or -1)."""
        return self._counted("repeat", count)

    def take(self, count: Any) -> Dataset:
        """At most the first `count` elements (all if -1)."""
        return self._counted("take", count)

    def skip(self, count: Any) -> Dataset:
        """All but the first `count` elements (none if -1)."""
        return self._counted("skip", count)

    def _counted(self, kind: str, count: Any) -> Dataset:
        t = _scalar(-1 if count is None else count, dtypes.int64, "count")
        return _Transformation(kind, self, {"count": t}, self._structure)

    def prefetch(self, buffer_size: Any) -> Dataset:
        """The same elements (elements are computed on demand; nothing runs ahead)."""
        size = _scalar(buffer_size, dtypes.int64, "buffer_size")
        return _Transformation("prefetch", self, {"buffer_size": size}, self._structure)

    def cache(self, filename: str = "") -> Dataset:
        """The same elements, computed once: the first complete pass is kept in memory and
        replayed by later passes. Only the in-memory cache (``filename=""``) exists."""
        if filename:
            raise ValueError("tensorweave's Dataset.cache keeps elements in memory only; "
                             f"filename must be '', got {filename!r}")
        return _Transformation("cache", self, {}, self._structure)

    # -- iterators --------------------------------------------------------------------------

    def make_one_shot_iterator(self) -> Any:
        from tensorweave.api.iterator_ops import make_one_shot_iterator

        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name: str | None = None) -> Any:
        from tensorweave.api.iterator_ops import make_initializable_iterator

        return make_initializable_iterator(self, shared_name)


def _sparse_field(structure: Any) -> dict[str, Any]:
    """The description's ``sparse`` field for elements of `structure` (none if all dense)."""
    positions = sparse_positions(structure)
    return {"sparse": positions} if positions else {}


def dense_to_sparse_batch(batch_size: Any, row_shape: Any) -> Callable[[Dataset], Dataset]:
    """``tf.data.experimental.dense_to_sparse_batch``: for ``Dataset.apply``, batches of
    `batch_size` single-tensor elements as one `SparseTensor` holding each element's entries
    in its row; the dense shape is ``[rows] + row_shape``, an unknown dimension of `row_shape`
    taking the batch's largest."""

    def transformation(dataset: Dataset) -> Dataset:
        spec = dataset._structure
        if not isinstance(spec, TensorSpec):
            raise TypeError(f"DenseToSparseDataset requires an input whose elements have a "
                            f"single component, whereas the input has "
                            f"{dataset.output_types!r}.")
        shape = as_shape(row_shape)
        if shape.dims is None:
            raise ValueError("row_shape must have a known rank")
        tensors = {"batch_size": _scalar(batch_size, dtypes.int64, "batch_size"),
                   "row_shape": constant([-1 if d is None else d for d in shape.dims],
                                         dtype=dtypes.int64, name="row_shape")}
        return _Transformation("dense_to_sparse_batch", dataset, tensors,
                               SparseSpec(spec.dtype, TensorShape([None]).concatenate(shape)))

    return transformation


def _batch_dim(size: Tensor, drop: Tensor) -> int | None:
    known_drop, known_size = constant_value(drop), constant_value(size)
    if known_drop is not None and bool(known_drop) and known_size is not None:
        return int(known_size)
    return None


class _Components(Dataset):
    def __init__(self, kind: str, tensors: Any) -> None:
        flat = flatten(tensors)
        specs = [_spec(t) for t in flat]
        if kind == "tensor_slices":
            first: int | None = None
            for i, spec in enumerate(specs):
                if spec.shape.ndims == 0:
                    raise ValueError("Unbatching a tensor is only supported for rank >= 1")
                dims = spec.shape.dims
                lead = None if dims is None else dims[0]
                if lead is not None and first is not None and lead != first:
                    raise ValueError(f"Dimensions {first} and {lead} are not compatible: all "
                                     "components must have the same size in dimension 0")
                first = first if lead is None else lead
                specs[i] = _with_shape(spec, TensorShape(None if dims is None else dims[1:]))
        super().__init__(pack_as(tensors, specs))
        self._kind = kind
        self._tensors = component_tensors(flat)
        self._sparse = _sparse_field(pack_as(tensors, specs))

    def _describe(self, d: Description) -> dict[str, Any]:
        return {"kind": self._kind, "components": [d.tensor(t) for t in self._tensors],
                **self._sparse}


class _Range(Dataset):
    def __init__(self, args: list[Tensor]) -> None:
        super().__init__(TensorSpec(dtypes.int64, TensorShape([])))
        self._args = args

    def _describe(self, d: Description) -> dict[str, Any]:
        return {"kind": "range", "args": [d.tensor(t) for t in self._args]}


class _Zip(Dataset):
    def __init__(self, members: list[Dataset], structure: Any) -> None:
        super().__init__(structure)
        self._members = members

    def _describe(self, d: Description) -> dict[str, Any]:
        return {"kind": "zip", "inputs": [m._describe(d) for m in self._members]}


class _Concatenate(Dataset):
    def __init__(self, first: Dataset, second: Dataset, structure: Any) -> None:
        super().__init__(structure)
        self._inputs = (first, second)

    def _describe(self, d: Description) -> dict[str, Any]:
        return {"kind": "concatenate", "inputs": [m._describe(d) for m in self._inputs]}


class _Transformation(Dataset):
    """One input dataset, scalar tensor fields, plain fields."""

    def __init__(self, kind: str, source: Dataset, tensors: dict[str, Tensor], structure: Any,
                 plain: dict[str, Any] | None = None) -> None:
        super().__init__(structure)
        self._kind, self._source, self._tensors = kind, source, tensors
        self._plain = plain or {}

    def _describe(self, d: Description) -> dict[str, Any]:
        return {"kind": self._kind, "input": self._source._describe(d),
                **{k: d.tensor(t) for k, t in self._tensors.items()}, **self._plain}


class _PaddedBatch(Dataset):
    def __init__(self, source: Dataset, size: Tensor, drop: Tensor, shapes: list[Tensor],
                 values: list[Tensor], structure: Any) -> None:
        super().__init__(structure)
        self._source, self._size, self._drop = source, size, drop
        self._shapes, self._values = shapes, values

    def _describe(self, d: Description) -> dict[str, Any]:
        return {"kind": "padded_batch", "input": self._source._describe(d),
                "batch_size": d.tensor(self._size), "drop_remainder": d.tensor(self._drop),
                "padded_shapes": [d.tensor(t) for t in self._shapes],
                "padding_values": [d.tensor(t) for t in self._values]}


class _Functional(Dataset):
    def __init__(self, kind: str, source: Dataset, traced: Traced, structure: Any,
                 plain: dict[str, Any] | None = None, sizes: dict[str, Tensor] | None = None
                 ) -> None:
        super().__init__(structure)
        self._kind, self._source, self._traced = kind, source, traced
        self._plain, self._sizes = plain or {}, sizes or {}

    def _describe(self, d: Description) -> dict[str, Any]:
        return {"kind": self._kind, "input": self._source._describe(d),
                **d.function(self._traced), **self._plain,
                **{k: d.tensor(t) for k, t in self._sizes.items()}}


class _FlatMap(Dataset):
    """``flat_map`` or ``interleave`` (with its scalar `sizes`). The inner dataset is described
    over the function's results: its tensors are the function's outputs, in the order its
    description lists them."""

    def __init__(self, kind: str, source: Dataset, traced: Traced, inner: Dataset,
                 structure: Any, sizes: dict[str, Tensor] | None = None) -> None:
        super().__init__(structure)
        self._kind, self._source, self._traced, self._inner = kind, source, traced, inner
        self._sizes = sizes or {}

    def _describe(self, d: Description) -> dict[str, Any]:
        fields = d.function(self._traced)
        inner = Description(d.functions)  # its functions are attrs of the same op
        return {"kind": self._kind, "input": self._source._describe(d),
                "inner": self._inner._describe(inner),
                **{k: d.tensor(t) for k, t in self._sizes.items()}, **fields}


class _Source(Dataset):
    """A source of scalar tensor fields and plain fields."""

    def __init__(self, kind: str, tensors: dict[str, Tensor], structure: Any,
                 plain: dict[str, Any] | None = None) -> None:
        super().__init__(structure)
        self._kind, self._tensors, self._plain = kind, tensors, plain or {}

    def _describe(self, d: Description) -> dict[str, Any]:
        return {"kind": self._kind, **{k: d.tensor(t) for k, t in self._tensors.items()},
                **self._plain}


class _Generator(Dataset):
    """``from_generator``: a ``start`` function (``py_func`` of `_GeneratorState.start`) and a
    ``next`` function (of `_GeneratorState.next`) the kernel calls until it says done."""

    def __init__(self, start: Traced, step: Traced, structure: Any) -> None:
        super().__init__(structure)
        self._start, self._step = start, step

    def _describe(self, d: Description) -> dict[str, Any]:
        return {"kind": "generator", "start": d.function(self._start),
                "next": d.function(self._step)}


class _GeneratorState:
    """The generators of one ``from_generator`` dataset, by id: one per pass, dropped when it
    ends (a pass abandoned midway keeps its generator while the graph lives)."""

    def __init__(self, generator: Callable[..., Any], structure: Any) -> None:
        self._generator = generator
        self._structure = structure
        self._specs: list[TensorSpec] = flatten(structure)
        self._running: dict[int, Iterator[Any]] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def start(self, *args: Any) -> np.ndarray:
        iterator = iter(self._generator(*args))
        with self._lock:
            gen_id = next(self._ids)
            self._running[gen_id] = iterator
        return np.int64(gen_id)

    def next(self, gen_id: Any) -> list[Any]:
        """``[done, *element]``; when done, placeholder values of the element's dtypes."""
        with self._lock:
            iterator = self._running[int(gen_id)]
        try:
            value = next(iterator)
        except StopIteration:
            with self._lock:
                del self._running[int(gen_id)]
            return [np.bool_(True), *(_placeholder(s) for s in self._specs)]
        try:
            parts = flatten_up_to(self._structure, value, "element")
        except ValueError:
            raise TypeError(f"`generator` yielded an element that did not match the expected "
                            f"structure. The expected structure was "
                            f"{_map_structure(lambda s: s.dtype, self._structure)}, but the "
                            f"yielded element was {value!r}.") from None
        return [np.bool_(False), *(_converted(p, s) for p, s in zip(parts, self._specs))]


def _placeholder(spec: TensorSpec) -> np.ndarray:
    dims = [] if spec.shape.dims is None else [d or 0 for d in spec.shape.dims]
    if spec.dtype.is_string:
        return to_string_array(np.full(dims, b"", dtype=object))
    return np.zeros(dims, dtype=spec.dtype.np_type)


def _converted(value: Any, spec: TensorSpec) -> np.ndarray:
    try:
        array = to_string_array(value) if spec.dtype.is_string \
            else np.asarray(value, dtype=spec.dtype.np_type, order="C")
    except (TypeError, ValueError):
        raise TypeError(f"`generator` yielded an element that could not be converted to the "
                        f"expected type. The expected type was {spec.dtype.name}, but the "
                        f"yielded element was {value!r}.") from None
    if not TensorShape(array.shape).is_compatible_with(spec.shape):
        raise ValueError(f"`generator` yielded an element of shape {TensorShape(array.shape)} "
                         f"where an element of shape {spec.shape} was expected.")
    return array


def _filenames_dataset(filenames: Any) -> Dataset | Tensor:
    """`filenames` as a string tensor of rank 0 or 1, or a dataset of scalar strings."""
    if isinstance(filenames, Dataset):
        if filenames.output_types != dtypes.string or \
                not filenames.output_shapes.is_compatible_with(TensorShape([])):
            raise TypeError("`filenames` must be a `tf.data.Dataset` of scalar `tf.string` "
                            "elements.")
        return filenames
    t = convert_to_tensor(filenames, name="filenames")
    if t.dtype != dtypes.string:
        raise TypeError("`filenames` must be a `tf.Tensor` of `tf.string` elements.")
    if t.shape.ndims not in (None, 0, 1):
        raise ValueError("`filenames` must be a `tf.Tensor` of rank at most 1.")
    return t


class _FileDataset(Dataset):
    """The lines or records of files: a file source over a filenames tensor, or, for a
    dataset of filenames or parallel reads, its ``flat_map``/``interleave``."""

    _kind = ""

    def __init__(self, filenames: Any, compression_type: Any = None, buffer_size: Any = None,
                 num_parallel_reads: Any = None) -> None:
        super().__init__(TensorSpec(dtypes.string, TensorShape([])))
        names = _filenames_dataset(filenames)
        compression = _scalar("" if compression_type is None else compression_type,
                              dtypes.string, "compression_type")
        buffer = _scalar(_READER_BUFFER_BYTES if buffer_size is None else buffer_size,
                         dtypes.int64, "buffer_size")

        def read(files: Tensor) -> Dataset:
            return _Source(self._kind, {"filenames": files, "compression_type": compression,
                                        "buffer_size": buffer}, self._structure)

        if isinstance(names, Tensor) and num_parallel_reads is None:
            self._impl = read(names)
            return
        if isinstance(names, Tensor):
            names = Dataset.from_tensor_slices(reshape(names, [-1]))
        self._impl = names.flat_map(read) if num_parallel_reads is None \
            else names.interleave(read, cycle_length=num_parallel_reads,
                                  num_parallel_calls=num_parallel_reads)

    def _describe(self, d: Description) -> dict[str, Any]:
        return self._impl._describe(d)


class TFRecordDataset(_FileDataset):
    """``tf.data.TFRecordDataset``: the records of TFRecord files (`filenames`: a string or a
    vector of them, or a dataset of them), read in order, as scalar strings;
    `compression_type` ``""``, ``"ZLIB"`` or ``"GZIP"``. A missing file or a damaged record
    fails ``IteratorGetNext`` with `NotFoundError` / `DataLossError`."""

    _kind = "tf_record"


class TextLineDataset(_FileDataset):
    """``tf.data.TextLineDataset``: the lines of text files, without their line ends, as scalar
    strings; arguments as `TFRecordDataset`'s."""

    _kind = "text_line"
