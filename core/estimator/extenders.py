"""Wrapping an `Estimator` to change what its `model_fn` gives, as TF 1.15's
``tf.estimator.add_metrics`` and ``tf.contrib.estimator.forward_features``.

Contract: both return a new `Estimator` on the same `model_dir` and config (and, for
`add_metrics`, warm start) whose `model_fn` calls the original one (with its params) and then:

- `add_metrics(estimator, metric_fn)`: in EVAL mode adds ``metric_fn``'s dict of
  ``(value, update_op)`` pairs to the spec's ``eval_metric_ops`` (replacing same-named ones).
  `metric_fn` takes any of ``features``, ``labels``, ``predictions``, ``config`` by name;
  another argument raises ``ValueError``.
- `forward_features(estimator, keys=None, sparse_default_values=None)`: adds the features
  named by `keys` (a string or a list of strings; default: every feature) to the dict
  predictions, and to the ``predict``/``serving_default`` `PredictOutput` export outputs, so a
  prediction carries e.g. the example's id. A `SparseTensor` feature is made dense with
  ``sparse_default_values[key]``; without one it raises ``ValueError``, as do non-dict
  predictions, a missing feature and a key already among the predictions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api.sparse_ops import sparse_tensor_to_dense
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.export import PredictOutput
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorweave.estimator.run_config import RunConfig
from tensorweave.estimator.util import fn_args

__all__ = ["add_metrics", "forward_features"]

_VALID_METRIC_FN_ARGS = {"features", "labels", "predictions", "config"}


def add_metrics(estimator: Estimator, metric_fn: Callable[..., dict[str, Any]]) -> Estimator:
    """`estimator` with `metric_fn`'s metrics added in EVAL mode; see the module docstring."""
    invalid = sorted(set(fn_args(metric_fn)) - _VALID_METRIC_FN_ARGS)
    if invalid:
        raise ValueError(f"metric_fn ({metric_fn}) has following not expected args: {invalid}")

    def new_model_fn(features: Any, labels: Any, mode: str, config: RunConfig) -> EstimatorSpec:
        spec = estimator.model_fn(features, labels, mode, config)
        if mode != ModeKeys.EVAL:
            return spec
        available = {"features": features, "labels": labels,
                     "predictions": spec.predictions, "config": config}
        new_metrics = metric_fn(**{k: v for k, v in available.items()
                                   if k in fn_args(metric_fn)})
        return spec._replace(eval_metric_ops={**spec.eval_metric_ops, **new_metrics})

    return Estimator(new_model_fn, model_dir=estimator.model_dir, config=estimator.config,
                     warm_start_from=estimator._warm_start_settings)


def _check_keys(keys: Any) -> list[str] | None:
    if keys is None:
        return None
    if isinstance(keys, str):
        return [keys]
    if not isinstance(keys, list):
        raise TypeError(f"keys should be either a string or a list of strings. Given: "
                        f"{type(keys)}")
    for key in keys:
        if not isinstance(key, str):
            raise TypeError("All items in the given keys list should be a string. There exist "
                            f"an item with type: {type(key)}")
    return keys


def forward_features(estimator: Estimator, keys: Any = None,
                     sparse_default_values: dict[str, Any] | None = None) -> Estimator:
    """`estimator` whose predictions also carry features; see the module docstring."""
    keys = _check_keys(keys)

    def forwarded(features: Any, predictions: Any) -> dict[str, Tensor]:
        if not isinstance(predictions, dict):
            raise ValueError("Predictions should be a dict to be able to forward features. "
                             f"Given: {type(predictions)}")
        result = {}
        for key in keys if keys is not None else list(features):
            if key not in features:
                raise ValueError(f'keys should be exist in features. Key "{key}" is not in '
                                 f"features dict. features dict has following keys: "
                                 f"{list(features)}. Please check arguments of "
                                 "forward_features.")
            if key in predictions:
                raise ValueError(f"Cannot forward feature key ({key}). Since it does exist in "
                                 f"predictions. Existing prediction keys: {list(predictions)}. "
                                 "Please check arguments of forward_features.")
            feature = features[key]
            if sparse_default_values and key in sparse_default_values:
                if not isinstance(feature, SparseTensor):
                    raise ValueError(f"Feature ({key}) is expected to be a `SparseTensor`.")
                feature = sparse_tensor_to_dense(feature,
                                                 default_value=sparse_default_values[key])
            if not isinstance(feature, Tensor):
                raise ValueError(f"Feature ({key}) should be a Tensor. Please use `keys` "
                                 "argument of forward_features to filter unwanted features, or "
                                 f"add key to argument `sparse_default_values`.Type of "
                                 f"features[{key}] is {type(feature)}.")
            result[key] = feature
        return result

    def new_model_fn(features: Any, labels: Any, mode: str, config: RunConfig) -> EstimatorSpec:
        spec = estimator.model_fn(features, labels, mode, config)
        if spec.predictions is None:
            return spec
        extra = forwarded(features, spec.predictions)
        for export_key in ("predict", "serving_default"):
            output = (spec.export_outputs or {}).get(export_key)
            if isinstance(output, PredictOutput):
                output.outputs.update(extra)
        return spec._replace(predictions={**spec.predictions, **extra})

    return Estimator(new_model_fn, model_dir=estimator.model_dir, config=estimator.config)
