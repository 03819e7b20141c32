"""``tf.data.experimental.make_saveable_from_iterator``: a dataset iterator's position as a
saveable object, so that a `Saver` checkpoints it.

Contract: the saveable saves one string tensor, ``<iterator name>_STATE`` (the iterator's
shared name: ``Iterator``, ``OneShotIterator``, ...), made by ``SerializeIterator`` on the
iterator's device; restoring runs one ``DeserializeIterator`` per initializer the iterator has
when the saver is built, each mirroring its ``MakeIterator``, and the one whose initializer
last started the saved iterator puts the position back: after a restore (in this session or a
fresh one over the same graph) ``get_next`` continues with the element after the last one
given before the save. What a position is, what it costs to restore and which pipelines cannot
be saved (``from_generator``'s: `UnimplementedError` when saved) is the dataset kernels'
contract (`tensorweave.plugins.kernels.dataset`). Saving an iterator that was never
initialized is a `FailedPreconditionError`; a one-shot iterator starts itself first. Add the
saveable to ``GraphKeys.SAVEABLE_OBJECTS`` for a default `Saver` (and so
``CheckpointSaverHook`` / ``MonitoredTrainingSession``) to save it, as TF.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.control_flow_ops import group
from tensorweave.api.iterator_ops import Iterator, _HandleIterator
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.train.saveable_object import SaveableObject, SaveSpec

__all__ = ["make_saveable_from_iterator"]


class _IteratorSaveable(SaveableObject):
    """An iterator's position; see the module docstring."""

    def __init__(self, iterator: Iterator, name: str) -> None:
        self._iterator = iterator
        control = [iterator._one_shot] if iterator._one_shot is not None else None
        with iterator._graph.control_dependencies(control):
            state = iterator._create("SerializeIterator", [],
                                     {"shared_name": iterator._shared_name},
                                     "SerializeIterator").outputs[0]
        super().__init__(iterator, [SaveSpec(state, "", f"{name}_STATE",
                                             device=iterator._device)], name)

    def restore(self, restored_tensors: list[Tensor], restored_shapes: Any) -> Operation:
        iterator = self._iterator
        if not iterator._makers:
            raise ValueError(f"Iterator {self.name} has no initializer to restore it with: "
                             "create its initializer before the Saver.")
        (serialized,) = restored_tensors
        names = [op.name for op, _, _ in iterator._makers]
        restores = []
        for op, components, attrs in iterator._makers:
            mirrored = {k: v for k, v in attrs.items() if k != "one_shot"}
            with iterator._graph.control_dependencies(op.control_inputs):
                restores.append(iterator._create(
                    "DeserializeIterator", [serialized, components],
                    {**mirrored, "initializer": op.name, "initializers": names},
                    "DeserializeIterator"))
        with iterator._graph.as_default():
            return group(*restores, name=f"{self.name}_restore")


def make_saveable_from_iterator(iterator: Iterator) -> SaveableObject:
    """A saveable object for `iterator`'s position (see the module docstring)."""
    if not isinstance(iterator, Iterator):
        raise TypeError(f"Expected an Iterator, got {iterator!r}")
    if isinstance(iterator, _HandleIterator):
        raise ValueError("An iterator made from a string handle has no state of its own: make "
                         "a saveable from the iterator its handle names.")
    return _IteratorSaveable(iterator, iterator._shared_name)
