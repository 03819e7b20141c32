"""``tensorflow.python.util.nest``: walking nested structures of lists, tuples and dicts.

Contract: a structure is a leaf, or a list, tuple, namedtuple or dict of structures (``None`` is
a leaf). `flatten` lists the leaves depth first, a dict's values by sorted key, as TF does.
`pack_sequence_as(structure, flat)` rebuilds `structure`'s shape (same container types) from
`flat`'s leaves, raising `ValueError` when the counts differ. `map_structure(fn, *structures)`
applies `fn` leaf-wise over structures that `assert_same_structure` accepts; that raises
`ValueError` when nesting or lengths differ (and `TypeError` for different container types when
`check_types`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


def is_sequence(value: Any) -> bool:
    """Whether `value` is a container `flatten` descends into."""
    return isinstance(value, (list, tuple, dict))


is_nested = is_sequence


def _children(value: Any) -> list[Any]:
    return [value[k] for k in sorted(value)] if isinstance(value, dict) else list(value)


def flatten(structure: Any) -> list[Any]:
    """The leaves of `structure`, depth first."""
    if not is_sequence(structure):
        return [structure]
    return [leaf for child in _children(structure) for leaf in flatten(child)]


def _rebuild(structure: Any, children: list[Any]) -> Any:
    if isinstance(structure, dict):
        by_key = dict(zip(sorted(structure), children))
        return type(structure)((k, by_key[k]) for k in structure)
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*children)
    return type(structure)(children)


def pack_sequence_as(structure: Any, flat_sequence: Any) -> Any:
    """`flat_sequence`'s leaves in the shape of `structure`."""
    flat = list(flat_sequence)
    count = len(flatten(structure))
    if count != len(flat):
        raise ValueError(f"Could not pack sequence. Structure had {count} elements, but "
                         f"flat_sequence had {len(flat)} elements.")
    leaves = iter(flat)

    def pack(s: Any, leaves: Iterator[Any]) -> Any:
        if not is_sequence(s):
            return next(leaves)
        return _rebuild(s, [pack(c, leaves) for c in _children(s)])

    return pack(structure, leaves)


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True) -> None:
    """Raise unless `nest1` and `nest2` nest the same way; see the module docstring."""
    if is_sequence(nest1) != is_sequence(nest2):
        raise ValueError(f"The two structures don't have the same nested structure: "
                         f"{nest1!r} and {nest2!r}")
    if not is_sequence(nest1):
        return
    if check_types and type(nest1) is not type(nest2):
        raise TypeError(f"The two structures don't have the same sequence type: "
                        f"{type(nest1).__name__} and {type(nest2).__name__}")
    if isinstance(nest1, dict) and sorted(nest1) != sorted(nest2):
        raise ValueError(f"The two dictionaries don't have the same keys: {sorted(nest1)} and "
                         f"{sorted(nest2)}")
    a, b = _children(nest1), _children(nest2)
    if len(a) != len(b):
        raise ValueError(f"The two structures don't have the same number of elements: "
                         f"{len(a)} and {len(b)}")
    for x, y in zip(a, b):
        assert_same_structure(x, y, check_types)


def map_structure(func: Callable[..., Any], *structure: Any, check_types: bool = True) -> Any:
    """`func` applied to the corresponding leaves of `structure`, in the first one's shape."""
    if not structure:
        raise ValueError("Must provide at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types)
    results = [func(*leaves) for leaves in zip(*(flatten(s) for s in structure))]
    return pack_sequence_as(structure[0], results)
