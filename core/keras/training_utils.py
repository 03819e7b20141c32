"""Checking the numpy data given to ``fit`` / ``evaluate`` / ``predict`` against a model's inputs
and outputs, with Keras's error texts.

Contract: `standardize_input_data` turns an array, a list of arrays or a dict (by input name)
into one array per name, in order; a 1-D array becomes a column when the model expects more than
one dimension; ranks and the non-batch dimensions the model knows must match ("Error when
checking input: expected dense_input to have shape (3,) but got array with shape (4,)").
`check_array_lengths` requires one number of samples across inputs and targets.
`standardize_weights` merges `fit`'s ``sample_weight`` and ``class_weight`` into one weight per
sample (per sample and timestep with ``sample_weight_mode="temporal"``), as TF 1.15: a class
weight is looked up by the target's class (its argmax for one-hot rows, its value for integer
labels) and multiplies the sample weight when both are given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_array_lengths", "slice_arrays", "standardize_input_data",
           "standardize_weights", "weights_for_output"]


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


def weights_for_output(weights: Any, output_name: str, kind: str) -> Any:
    """A one-output model's entry of `fit`'s `sample_weight` / `class_weight` / `compile`'s
    `sample_weight_mode`: given as is, as a list of one or as a dict keyed by the output's
    name."""
    if isinstance(weights, (list, tuple)) and not hasattr(weights, "shape"):
        if len(weights) != 1:
            raise ValueError(f"Provided `{kind}` was a list of {len(weights)} elements, but "
                             f"the model has 1 outputs. You should provide one `{kind}`"
                             "array per model output.")
        return weights[0]
    if isinstance(weights, dict) and output_name in weights:
        return weights[output_name]
    return weights


def _check_sample_weight(y: np.ndarray, weights: np.ndarray, mode: str | None) -> None:
    if mode == "temporal":
        if y.ndim < 3:
            raise ValueError(f"Found a sample_weight array for an input with shape {y.shape}. "
                             'Timestep-wise sample weighting (use of sample_weight_mode="temporal"'
                             ") is restricted to outputs that are at least 3D, i.e. that have a "
                             "time dimension.")
        if weights.ndim != 2:
            raise ValueError(f"Found a sample_weight array with shape {weights.shape}. In order "
                             "to use timestep-wise sample weighting, you should pass a 2D "
                             "sample_weight array.")
    elif weights.ndim != 1:
        raise ValueError(f"Found a sample_weight array with shape {weights.shape}. In order to "
                         "use timestep-wise sample weights, you should specify "
                         'sample_weight_mode="temporal" in compile(). If you just mean to use '
                         "sample-wise weights, make sure your sample_weight array is 1D.")
    if y.shape[:weights.ndim] != weights.shape:
        raise ValueError(f"Found a sample_weight array with shape {weights.shape} for an input "
                         f"with shape {y.shape}. sample_weight cannot be broadcast.")


def _class_sample_weight(y: np.ndarray, class_weight: dict[Any, float]) -> np.ndarray:
    if y.ndim > 2:
        raise ValueError("`class_weight` not supported for 3+ dimensional targets.")
    if y.ndim == 2:
        classes = np.argmax(y, axis=1) if y.shape[1] > 1 else y.reshape(len(y))
    else:
        classes = y
    # Float labels (targets take the output's dtype) look up integer keys: 1.0 == 1.
    missing = {c.item() for c in np.unique(classes)} - set(class_weight)
    if missing:
        raise ValueError("`class_weight` must contain all classes in the data. The classes "
                         f"{missing} exist in the data but not in `class_weight`.")
    return np.asarray([class_weight[c] for c in classes.tolist()], np.float64)


def standardize_weights(y: np.ndarray, sample_weight: Any = None, class_weight: Any = None,
                        sample_weight_mode: str | None = None) -> np.ndarray | None:
    """The weights of the samples of the targets `y` (see the module docstring); None when
    neither `sample_weight` nor a dict `class_weight` is given."""
    if sample_weight_mode not in (None, "samplewise", "temporal"):
        raise ValueError('"sample_weight_mode should be None or "temporal". Found: '
                         f"{sample_weight_mode}")
    mode = None if sample_weight_mode == "samplewise" else sample_weight_mode
    weights = None
    if sample_weight is not None:
        weights = np.asarray(sample_weight)
        _check_sample_weight(y, weights, mode)
    if isinstance(class_weight, dict):
        by_class = _class_sample_weight(y, class_weight)
        return by_class if weights is None else by_class * weights
    return weights
