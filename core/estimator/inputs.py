"""``tf.compat.v1.estimator.inputs``: input functions over numpy arrays.

Contract: `numpy_input_fn` checks `shuffle` at once and the data when its input function is
called, with TF's errors. The input function builds a `tf.data` pipeline in the default graph
(``from_tensor_slices``, ``shuffle(queue_capacity)`` when asked, ``repeat(num_epochs)``, then
``batch(batch_size)``; the last batch of a finite input may be smaller) and returns the next
element of a one-shot iterator: ``(features, labels)``, or features alone when `y` is ``None``.
Features are a tensor when `x` is an array, else a dict with `x`'s keys; labels likewise follow
`y`. The end of the data is an `OutOfRangeError`, which ends an `Estimator`'s loop. TF feeds a
queue from `num_threads` Python threads; here the argument is accepted and the pipeline is read
in order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api.dataset_ops import Dataset

__all__ = ["numpy_input_fn"]


def _validate_and_convert_features(x: Any) -> dict[str, np.ndarray]:
    if isinstance(x, dict):
        if not x:
            raise ValueError("x cannot be an empty dict")
        return dict(sorted(x.items(), key=lambda t: t[0]))
    if isinstance(x, np.ndarray):
        if x.size == 0:
            raise ValueError("x cannot be an empty array")
        return {"__direct_np_input__": x}
    raise TypeError(f"x must be a dict or array; got {type(x).__name__}")


def numpy_input_fn(x: Any, y: Any = None, batch_size: int = 128, num_epochs: int | None = 1,
                   shuffle: bool | None = None, queue_capacity: int = 1000,
                   num_threads: int = 1) -> Callable[[], Any]:
    """An input function feeding `x` (and `y`) in batches; see the module docstring."""
    if not isinstance(shuffle, bool):
        raise ValueError("shuffle must be provided and explicitly set as boolean (it is "
                         f"recommended to set it as True for training); got {shuffle}")

    def input_fn() -> Any:
        features = _validate_and_convert_features(x)
        if isinstance(y, dict):
            if not y:
                raise ValueError("y cannot be empty dict, use None instead.")
            labels: Any = dict(sorted(y.items(), key=lambda t: t[0]))
            duplicates = set(features) & set(labels)
            if duplicates:
                raise ValueError(f"{len(duplicates)} duplicate keys are found in both x and y: "
                                 f"{duplicates}")
            label_arrays = list(labels.values())
        else:
            labels = y
            label_arrays = [] if y is None else [np.asarray(y)]
        arrays = list(features.values()) + label_arrays
        if len({np.asarray(a).shape[0] for a in arrays}) != 1:
            shapes_x = {k: np.asarray(v).shape for k, v in features.items()}
            shapes_y = None if labels is None else (
                {k: np.asarray(v).shape for k, v in labels.items()} if isinstance(labels, dict)
                else np.asarray(labels).shape)
            raise ValueError("Length of tensors in x and y is mismatched. All elements in x and y "
                             f"must have the same length.\nShapes in x: {shapes_x}\n"
                             f"Shapes in y: {shapes_y}\n")
        element_x = x if isinstance(x, np.ndarray) else features
        element = element_x if labels is None else (element_x, labels)
        dataset = Dataset.from_tensor_slices(element)
        if shuffle:
            dataset = dataset.shuffle(queue_capacity)
        dataset = dataset.repeat(num_epochs).batch(batch_size)
        return dataset.make_one_shot_iterator().get_next()

    return input_fn
