"""Saveable objects: state other than variables that a `Saver` checkpoints, as TF 1.15's
``tensorflow/python/training/saving/saveable_object.py``.

Contract: a `SaveableObject` stands for one stateful object (a lookup table, a dataset
iterator). Its `specs` are `SaveSpec`s, one per tensor it saves: the tensor (or a callable
that builds it, called once when the saver is built) and the checkpoint key it is saved under
(`SaveSpec.name`; keys are unique within a checkpoint). ``restore(restored_tensors,
restored_shapes)`` receives one tensor per spec, in spec order, holding the values read from
the checkpoint (``restored_shapes`` is None: tensorweave restores whole tensors, never
slices), and returns the op that puts them back into the object. A `Saver` accepts saveables
in its ``var_list`` (list or dict; a dict's key is ignored for a saveable, whose keys are its
specs' names, as TF) and saves the ``GraphKeys.SAVEABLE_OBJECTS`` collection by default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor

__all__ = ["SaveSpec", "SaveableObject"]


class SaveSpec:
    """One tensor to save: `tensor` (a `Tensor`, or a callable returning one), saved under
    `name`. `slice_spec` must be empty: tensorweave saves whole tensors."""

    def __init__(self, tensor: Tensor | Callable[[], Tensor], slice_spec: str, name: str,
                 dtype: Any = None, device: str | None = None) -> None:
        if slice_spec:
            raise ValueError(f"SaveSpec {name!r}: slice_spec {slice_spec!r} is not supported; "
                             "tensorweave saves whole tensors.")
        if not callable(tensor) and not isinstance(tensor, Tensor):
            raise TypeError(f"SaveSpec {name!r}: expected a Tensor or a callable, got "
                            f"{tensor!r}")
        if dtype is None and not isinstance(tensor, Tensor):
            raise ValueError(f"SaveSpec {name!r}: a callable tensor needs its dtype.")
        self._tensor = tensor
        self.slice_spec = slice_spec
        self.name = name
        self.dtype = dtypes.as_dtype(dtype) if dtype is not None else tensor.dtype
        self.device = device if device is not None else (
            tensor.device if isinstance(tensor, Tensor) else None)

    @property
    def tensor(self) -> Tensor:
        """The tensor to save (a callable is called each time it is asked for)."""
        return self._tensor if isinstance(self._tensor, Tensor) else self._tensor()


class SaveableObject:
    """A stateful object's tensors to save and how to restore them; see the module docstring.
    `op` is the object's op (or tensor), `name` its name."""

    def __init__(self, op: Operation | Tensor | Any, specs: list[SaveSpec], name: str) -> None:
        if not specs:
            raise ValueError(f"SaveableObject {name!r} has no SaveSpec.")
        self.op = op
        self.specs = list(specs)
        self.name = name

    @property
    def device(self) -> str | None:
        return self.specs[0].device

    def restore(self, restored_tensors: list[Tensor], restored_shapes: list[Any] | None
                ) -> Operation:
        """The op that restores this object from `restored_tensors` (one per spec)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement restore()")
