"""Static shapes, possibly partially known.

Contract: a `TensorShape` has unknown rank (`dims is None`) or a list of dimensions, each a
`Dimension` (an `int` >= 0 with TF1's ``.value``) or `None` (unknown). Indexing returns a
`Dimension` or `None`, so TF1's ``shape[1].value`` and TF2's ``shape[1] is None`` both work
(TF1 returns ``Dimension(None)`` for an unknown one: here it is `None`, which has no
``.value``). `merge_with` raises `ValueError` on a conflict, as TF does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


class Dimension(int):
    """A known dimension: an `int` that also answers TF1's ``.value``. Arithmetic gives plain
    ints."""

    __slots__ = ()

    @property
    def value(self) -> int:
        return int(self)


class TensorShape:
    """A possibly partial static shape."""

    __slots__ = ("_dims",)

    def __init__(self, dims: Any) -> None:
        if isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif dims is None:
            self._dims = None
        elif isinstance(dims, int):
            self._dims = (_dim(dims),)
        else:
            self._dims = tuple(_dim(d) for d in dims)

    @property
    def dims(self) -> list[Dimension | None] | None:
        """The dimensions as a new list, as TF's (None when the rank is unknown)."""
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self) -> list[int | None]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [None if d is None else int(d) for d in self._dims]

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self) -> int | None:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def is_compatible_with(self, other: Any) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other: Any) -> TensorShape:
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def with_rank(self, rank: int) -> TensorShape:
        if self._dims is None:
            return unknown_shape(rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank: int) -> TensorShape:
        if self.ndims is not None and self.ndims < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank: int) -> TensorShape:
        if self.ndims is not None and self.ndims > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_has_rank(self, rank: int) -> None:
        if self.ndims not in (None, rank):
            raise ValueError(f"Shape {self} must have rank {rank}")

    def assert_same_rank(self, other: Any) -> None:
        other = as_shape(other)
        if None not in (self.ndims, other.ndims) and self.ndims != other.ndims:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def assert_is_fully_defined(self) -> None:
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def concatenate(self, other: Any) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self) -> Iterator[Dimension | None]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key: Any) -> Any:
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other: object) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __repr__(self) -> str:
        return f"TensorShape({None if self._dims is None else list(self._dims)})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({_fmt(self._dims[0])},)"
        return "(" + ", ".join(_fmt(d) for d in self._dims) + ")"


def _fmt(d: int | None) -> str:
    return "?" if d is None else str(d)


def _dim(d: Any) -> Dimension | None:
    if d is None or type(d) is Dimension:
        return d
    value = getattr(d, "value", d)
    if value is None:
        return None
    value = int(value)
    if value < 0:
        if value == -1:
            return None
        raise ValueError(f"Dimension {value} must be >= 0")
    return Dimension(value)


def dimension_value(dimension: Any) -> int | None:
    """TF's ``compat.dimension_value``: the int (or None) of a `Dimension`, int or None."""
    return getattr(dimension, "value", dimension)


def dimension_at_index(shape: Any, index: int) -> Dimension | None:
    """TF's ``compat.dimension_at_index``: dimension `index` of `shape`; None when its rank is
    unknown."""
    shape = as_shape(shape)
    return None if shape.dims is None else shape.dims[index]


def as_shape(value: Any) -> TensorShape:
    return value if isinstance(value, TensorShape) else TensorShape(value)


def unknown_shape(rank: int | None = None) -> TensorShape:
    return TensorShape(None if rank is None else [None] * rank)


def scalar() -> TensorShape:
    return TensorShape(())


def format_dims(shape: TensorShape) -> str:
    """TF's error-message form: ``[2,3]``, ``[?,3]`` or ``?``."""
    if shape.dims is None:
        return "?"
    return "[" + ",".join(_fmt(d) for d in shape.dims) + "]"


def shapes_from(values: Iterable[Any]) -> list[TensorShape]:
    return [as_shape(v) for v in values]
