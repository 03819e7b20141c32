"""Checking the numpy data given to ``fit`` / ``evaluate`` / ``predict`` against a model's inputs
and outputs, with Keras's error texts.

Contract: `standardize_input_data` turns an array, a list of arrays or a dict (by input name)
into one array per name, in order; a 1-D array becomes a column when the model expects more than
one dimension; ranks and the non-batch dimensions the model knows must match ("Error when
checking input: expected dense_input to have shape (3,) but got array with shape (4,)").
`check_array_lengths` requires one number of samples across inputs and targets.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_array_lengths", "slice_arrays", "standardize_input_data"]


def _as_arrays(data: Any, names: list[str], prefix: str) -> list[Any]:
    if isinstance(data, dict):
        missing = [name for name in names if name not in data]
        if missing:
            raise ValueError(f'No data provided for "{missing[0]}". Need data for each key in: '
                             f"{names}")
        return [data[name] for name in names]
    if isinstance(data, (list, tuple)):
        if data and all(hasattr(d, "shape") for d in data):
            if len(data) != len(names):
                raise ValueError(
                    f"Error when checking model {prefix}: the list of Numpy arrays that you are "
                    "passing to your model is not the size the model expected. Expected to see "
                    f"{len(names)} array(s), but instead got the following list of {len(data)} "
                    f"arrays: {str(data)[:200]}...")
            return list(data)
        if len(names) == 1:
            return [np.asarray(data)]  # a (nested) list of numbers is one array
        raise ValueError(f"Error when checking model {prefix}: you are passing a list as input "
                         f"to your model, but the model expects a list of {len(names)} Numpy "
                         f"arrays instead. The list you passed was: {str(data)[:200]}")
    if len(names) > 1:
        raise ValueError(f"The model expects {len(names)} {prefix} arrays, but only received "
                         f"one array. Found: array with shape {np.shape(data)}")
    return [data]


def standardize_input_data(data: Any, names: list[str], shapes: list[Any] | None,
                           dtypes: list[Any], prefix: str) -> list[np.ndarray]:
    """One array per name (see the module docstring); `shapes` are the expected shapes with
    the batch dimension (None entries and None shapes are not checked)."""
    if data is None:
        raise ValueError(f"Error when checking model {prefix}: data is None")
    arrays = []
    for i, (name, value) in enumerate(zip(names, _as_arrays(data, names, prefix))):
        array = np.asarray(value)
        shape = None if shapes is None else shapes[i]
        if array.ndim == 1 and (shape is None or len(shape) != 1):
            array = array[:, None]
        if shape is not None:
            if array.ndim != len(shape):
                raise ValueError(f"Error when checking {prefix}: expected {name} to have "
                                 f"{len(shape)} dimensions, but got array with shape "
                                 f"{array.shape}")
            for want, got in zip(shape[1:], array.shape[1:]):
                if want is not None and want != got:
                    raise ValueError(f"Error when checking {prefix}: expected {name} to have "
                                     f"shape {tuple(shape[1:])} but got array with shape "
                                     f"{array.shape[1:]}")
        arrays.append(array.astype(dtypes[i].np_type, copy=False))
    return arrays


def check_array_lengths(inputs: list[np.ndarray], targets: list[np.ndarray] | None) -> int:
    """The common number of samples of `inputs` and `targets`."""
    lengths = {len(x) for x in inputs}
    if len(lengths) > 1:
        raise ValueError("All input arrays (x) should have the same number of samples. Got "
                         f"array shapes: {[x.shape for x in inputs]}")
    target_lengths = {len(y) for y in targets or []}
    if len(target_lengths) > 1:
        raise ValueError("All target arrays (y) should have the same number of samples. Got "
                         f"array shapes: {[y.shape for y in targets or []]}")
    if lengths and target_lengths and lengths != target_lengths:
        raise ValueError("Input arrays should have the same number of samples as target "
                         f"arrays. Found {lengths.pop()} input samples and "
                         f"{target_lengths.pop()} target samples.")
    return lengths.pop() if lengths else 0


def slice_arrays(arrays: list[np.ndarray], index: Any) -> list[np.ndarray]:
    return [a[index] for a in arrays]
