"""``tf.compat.v1.data.Iterator``: one-shot, initializable and reinitializable iterators.

Contract: an `Iterator` names a resource on one CPU device (its shared name); every op it makes
(``MakeIterator`` initializers, ``IteratorGetNext``) is created on the same requested device, the
device scope in force when its first op was made, so they meet the same state. ``get_next()``
gives the next element as the iterator's nest of tensors (a `SparseTensor` where the element has
one: ``IteratorGetNext`` gives its three tensors), with its static shapes; at the end it
raises `OutOfRangeError` when run. ``make_initializer(dataset)`` (re)starts the iterator on
`dataset`, whose types and classes must equal and shapes be compatible with the iterator's
(`TypeError`).
A one-shot iterator starts itself on its first ``get_next``: its dataset may not depend on a
placeholder (`ValueError`, as TF). An initializer takes the dataset's tensors as inputs, so a
placeholder fed when it runs parameterizes the pipeline. ``string_handle()`` gives a string
naming the iterator; ``Iterator.from_string_handle(handle, types, shapes)`` makes a feedable
iterator whose ``get_next()`` reads the iterator that the fed handle names (one on the same
device, with the same element types).
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.dataset_ops import (
    Dataset,
    Description,
    SparseSpec,
    component_specs,
    element_structure,
    flatten,
    pack_as,
    pack_components,
)
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Graph, Operation, Tensor, get_default_graph

__all__ = ["Iterator", "get_output_classes", "get_output_shapes", "get_output_types",
           "make_initializable_iterator", "make_one_shot_iterator"]


class Iterator:
    """An iterator over the elements of datasets; see the module docstring."""

    def __init__(self, structure: Any, shared_name: str, graph: Graph,
                 initializer_dataset: Dataset | None = None, one_shot: bool = False) -> None:
        self._structure = structure
        self._shared_name = shared_name
        self._graph = graph
        self._device: str | None = None
        self._initializer: Operation | None = None
        self._one_shot: Operation | None = None
        # each MakeIterator op with its inputs and attrs, which a checkpoint restore mirrors
        self._makers: list[tuple[Operation, list[Tensor], dict[str, Any]]] = []
        if initializer_dataset is not None:
            op = self._make_iterator(initializer_dataset, one_shot, None)
            if one_shot:
                self._one_shot = op
            else:
                self._initializer = op

    @staticmethod
    def from_structure(output_types: Any, output_shapes: Any = None,
                       shared_name: str | None = None, output_classes: Any = None) -> Iterator:
        """A reinitializable iterator for elements of `output_types` (a nest of dtypes) and
        `output_shapes` (default: unknown) and `output_classes` (default: dense tensors); start
        it with ``make_initializer(dataset)``."""
        structure = element_structure(output_types, output_shapes, output_classes)
        graph = get_default_graph()
        return Iterator(structure, shared_name or graph.unique_name("Iterator"), graph)

    @staticmethod
    def from_string_handle(string_handle: Any, output_types: Any, output_shapes: Any = None,
                           output_classes: Any = None) -> Iterator:
        """A feedable iterator: ``get_next()`` reads the iterator `string_handle` names."""
        structure = element_structure(output_types, output_shapes, output_classes)
        graph = get_default_graph()
        handle = convert_to_tensor(string_handle, dtype=dtypes.string)
        return _HandleIterator(structure,
                               graph.unique_name("Iterator"), graph, handle)

    # -- structure --------------------------------------------------------------------------

    @property
    def output_types(self) -> Any:
        return pack_as(self._structure, [s.dtype for s in flatten(self._structure)])

    @property
    def output_shapes(self) -> Any:
        return pack_as(self._structure, [s.shape for s in flatten(self._structure)])

    @property
    def output_classes(self) -> Any:
        return pack_as(self._structure, [SparseTensor if isinstance(s, SparseSpec) else Tensor
                                         for s in flatten(self._structure)])

    @property
    def initializer(self) -> Operation:
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    # -- ops --------------------------------------------------------------------------------

    def _element_attrs(self) -> dict[str, Any]:
        specs = component_specs(self._structure)
        return {"shared_name": self._shared_name, "output_types": [s.dtype for s in specs],
                "output_shapes": [s.shape for s in specs]}

    def _create(self, op_type: str, inputs: list[Any], attrs: dict[str, Any],
                name: str | None) -> Operation:
        graph = self._graph
        with graph.as_default():
            if self._device is None:
                op = graph.create_op(op_type, inputs, attrs, name)
                self._device = op.device
                return op
            with graph.device(None), graph.device(self._device):
                return graph.create_op(op_type, inputs, attrs, name)

    def _make_iterator(self, dataset: Dataset, one_shot: bool, name: str | None) -> Operation:
        d = Description()
        desc = dataset._describe(d)
        if one_shot:
            for t in d.tensors:
                if t.op.type.startswith("Placeholder"):
                    raise ValueError(f"Cannot capture a placeholder (name:{t.op.name}, "
                                     f"type:{t.op.type}) by value.")
        attrs = {**self._element_attrs(), "Tcomponents": [t.dtype for t in d.tensors],
                 "dataset": desc, "one_shot": one_shot, **d.functions}
        if d.variables:  # a function's variable is read where it lives
            attrs["_class"] = sorted({g for v in d.variables for g in v.colocation_groups()})
        with self._graph.control_dependencies(d.control):
            op = self._create("MakeIterator", [d.tensors], attrs,
                              name or ("OneShotIterator" if one_shot else "MakeIterator"))
        self._makers.append((op, list(d.tensors), attrs))
        return op

    def make_initializer(self, dataset: Dataset, name: str | None = None) -> Operation:
        """An op that (re)starts this iterator on `dataset`."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"Expected a Dataset, got {dataset!r}")
        mine, theirs = flatten(self._structure), dataset._flat_specs()
        if [s.dtype for s in mine] != [s.dtype for s in theirs] or \
                not _same_nesting(self._structure, dataset._structure):
            raise TypeError(f"Expected output types {self.output_types} but got dataset with "
                            f"output types {dataset.output_types}.")
        if self.output_classes != dataset.output_classes:
            raise TypeError(f"Expected output classes {self.output_classes} but got dataset "
                            f"with output classes {dataset.output_classes}.")
        if not all(a.shape.is_compatible_with(b.shape) for a, b in zip(mine, theirs)):
            raise TypeError(f"Expected output shapes compatible with {self.output_shapes} but "
                            f"got dataset with output shapes {dataset.output_shapes}.")
        return self._make_iterator(dataset, False, name)

    def string_handle(self, name: str | None = None) -> Tensor:
        """A scalar string naming this iterator, to feed a `from_string_handle` iterator."""
        control = [self._one_shot] if self._one_shot is not None else None
        with self._graph.control_dependencies(control):
            op = self._create("IteratorToStringHandle", [], {"shared_name": self._shared_name},
                              name or "IteratorToStringHandle")
        return op.outputs[0]

    def get_next(self, name: str | None = None) -> Any:
        """The next element (a nest of tensors); running it past the end raises
        `OutOfRangeError`."""
        control = [self._one_shot] if self._one_shot is not None else None
        with self._graph.control_dependencies(control):
            op = self._create("IteratorGetNext", [], self._element_attrs(),
                              name or "IteratorGetNext")
        return pack_components(self._structure, op.outputs)


class _HandleIterator(Iterator):
    """`Iterator.from_string_handle`'s iterator: it reads the iterator its handle names."""

    def __init__(self, structure: Any, shared_name: str, graph: Graph, handle: Tensor) -> None:
        super().__init__(structure, shared_name, graph)
        self._handle = handle

    def make_initializer(self, dataset: Dataset, name: str | None = None) -> Operation:
        raise ValueError("An iterator made from a string handle cannot be initialized: "
                         "initialize the iterator its handle names.")

    def get_next(self, name: str | None = None) -> Any:
        attrs = self._element_attrs()
        del attrs["shared_name"]
        op = self._create("IteratorGetNextFromStringHandle", [self._handle], attrs,
                          name or "IteratorGetNext")
        return pack_components(self._structure, op.outputs)

    def string_handle(self, name: str | None = None) -> Tensor:
        return self._handle


def _same_nesting(a: Any, b: Any) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b)
                and all(_same_nesting(a[k], b[k]) for k in a))
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_same_nesting(x, y) for x, y in zip(a, b)))
    return True


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """An iterator that starts itself on `dataset` and cannot be restarted."""
    graph = get_default_graph()
    return Iterator(dataset._structure, graph.unique_name("OneShotIterator"), graph, dataset,
                    one_shot=True)


def make_initializable_iterator(dataset: Dataset, shared_name: str | None = None) -> Iterator:
    """An iterator over `dataset` started (and restarted) by running its ``initializer``."""
    graph = get_default_graph()
    return Iterator(dataset._structure, shared_name or graph.unique_name("Iterator"), graph,
                    dataset)


def get_output_types(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_classes
