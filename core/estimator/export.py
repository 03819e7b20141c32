"""``tw.estimator.export``: what a served model takes and gives, as
``tf.compat.v1.estimator.export``.

Contract:
- `ServingInputReceiver(features, receiver_tensors, receiver_tensors_alternatives=None)` pairs
  the tensors a served model is fed (`receiver_tensors`) with the features its `model_fn` gets.
  A lone tensor is wrapped in a dict (``"feature"`` / ``"input"``); values must be `Tensor` or
  `SparseTensor` (``ValueError`` otherwise), keys strings (feature keys may also be ints).
  `TensorServingInputReceiver` is the same with a single feature tensor, passed on as is.
- `build_parsing_serving_input_receiver_fn(feature_spec)` feeds a string vector
  ``input_example_tensor`` of serialized ``tf.train.Example`` protos (receiver key ``examples``)
  through ``parse_example``; `build_raw_serving_input_receiver_fn(features)` feeds one
  placeholder per feature, shaped like it but with `default_batch_size` rows.
- `PredictOutput`, `ClassificationOutput` and `RegressionOutput` check their tensors on
  construction with TF's messages (``ValueError``) and build their `SignatureDef` from the
  receiver tensors with `as_signature_def`; classify and regress need exactly one string
  receiver tensor (serialized Examples).
- `export_outputs_for_predict` is the ``export_outputs`` an ``EstimatorSpec`` in PREDICT mode
  carries (a ``PredictOutput`` of the predictions when none are given; ``serving_default``
  required among several); `build_all_signature_defs` turns them into the signatures of a
  SavedModel, leaving out (with an info log) those the receiver cannot feed (e.g. classify
  on raw tensors); `get_timestamped_export_dir` / `get_temp_export_dir` name an export's
  directories.
- `TrainOutput` and `EvalOutput` are `tensorweave.estimator.export_all`'s, loaded on first access
  (that module builds on this one).
"""

from __future__ import annotations

import abc
import collections
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from tensorweave.api.parsing_ops import parse_example
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.api.state_ops import placeholder
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.formats.saved_model_proto import SignatureDef
from tensorweave.saved_model import signature_constants, signature_def_utils

# Loaded by `__getattr__`: `tensorweave.estimator.export_all` imports this module.
_SUPERVISED_OUTPUTS = ("EvalOutput", "TrainOutput")

__all__ = ["ClassificationOutput", "ExportOutput", "PredictOutput", "RegressionOutput",
           "ServingInputReceiver", "TensorServingInputReceiver",
           "build_parsing_serving_input_receiver_fn", "build_raw_serving_input_receiver_fn",
           *_SUPERVISED_OUTPUTS]


def __getattr__(name: str) -> Any:
    if name in _SUPERVISED_OUTPUTS:
        from tensorweave.estimator import export_all

        return getattr(export_all, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_log = logging.getLogger(__name__)

_SINGLE_TENSOR_DEFAULT_NAMES = {"feature": "feature", "receiver_tensor": "input",
                                "receiver_tensors_alternative": "input"}
_MAX_DIRECTORY_CREATION_ATTEMPTS = 10


# -- input receivers --------------------------------------------------------------------------

def _check_tensor_key(name: Any, error_label: str, allow_ints: bool) -> None:
    if isinstance(name, str):
        return
    if not allow_ints:
        raise ValueError(f"{error_label} keys must be strings: {name}.")
    if not isinstance(name, int):
        raise ValueError(f"{error_label} keys must be strings or ints: {name}.")


def _check_tensor(tensor: Any, name: Any, error_label: str) -> None:
    if not isinstance(tensor, (Tensor, SparseTensor)):
        shown = f" {name}" if name else ""
        raise ValueError(f"{error_label}{shown} must be a Tensor, SparseTensor, or "
                         "RaggedTensor.")


def _wrap_and_check_input_tensors(tensors: Any, field_name: str,
                                  allow_int_keys: bool = False) -> dict[Any, Any]:
    if tensors is None:
        raise ValueError(f"{field_name}s must be defined.")
    if not isinstance(tensors, dict):
        tensors = {_SINGLE_TENSOR_DEFAULT_NAMES[field_name]: tensors}
    for name, tensor in tensors.items():
        _check_tensor_key(name, field_name, allow_int_keys)
        _check_tensor(tensor, name, field_name)
    return tensors


class ServingInputReceiver(collections.namedtuple(
        "ServingInputReceiver", ["features", "receiver_tensors",
                                 "receiver_tensors_alternatives"])):
    """The features a served model computes from the tensors it is fed; see the module
    docstring."""

    __slots__ = ()

    def __new__(cls, features: Any, receiver_tensors: Any,
                receiver_tensors_alternatives: dict[str, Any] | None = None
                ) -> ServingInputReceiver:
        features = _wrap_and_check_input_tensors(features, "feature", allow_int_keys=True)
        receiver_tensors = _wrap_and_check_input_tensors(receiver_tensors, "receiver_tensor")
        if receiver_tensors_alternatives is not None:
            if not isinstance(receiver_tensors_alternatives, dict):
                raise ValueError(f"receiver_tensors_alternatives must be a dict: "
                                 f"{receiver_tensors_alternatives}.")
            receiver_tensors_alternatives = {
                name: _wrap_and_check_input_tensors(alternative, "receiver_tensors_alternative")
                for name, alternative in receiver_tensors_alternatives.items()}
        return super().__new__(cls, features, receiver_tensors, receiver_tensors_alternatives)


class TensorServingInputReceiver(collections.namedtuple(
        "TensorServingInputReceiver", ["features", "receiver_tensors",
                                       "receiver_tensors_alternatives"])):
    """A `ServingInputReceiver` whose features are one tensor, handed to the `model_fn` as
    is rather than in a dict."""

    __slots__ = ()

    def __new__(cls, features: Any, receiver_tensors: Any,
                receiver_tensors_alternatives: dict[str, Any] | None = None
                ) -> TensorServingInputReceiver:
        if features is None:
            raise ValueError("features must be defined.")
        _check_tensor(features, None, "feature")
        receiver = ServingInputReceiver(features, receiver_tensors,
                                        receiver_tensors_alternatives)
        return super().__new__(cls, receiver.features[_SINGLE_TENSOR_DEFAULT_NAMES["feature"]],
                               receiver.receiver_tensors,
                               receiver.receiver_tensors_alternatives)


def build_parsing_serving_input_receiver_fn(
        feature_spec: Mapping[str, Any],
        default_batch_size: int | None = None) -> Callable[[], ServingInputReceiver]:
    """A receiver fn that parses a vector of serialized ``tf.train.Example`` protos with
    `feature_spec` (e.g. ``tw.feature_column.make_parse_example_spec(columns)``)."""
    def serving_input_receiver_fn() -> ServingInputReceiver:
        serialized = placeholder(dtypes.string, [default_batch_size],
                                 name="input_example_tensor")
        features = parse_example(serialized, dict(feature_spec))
        return ServingInputReceiver(features, {"examples": serialized})

    return serving_input_receiver_fn


def _placeholder_from_tensor(t: Tensor, default_batch_size: int | None) -> Tensor:
    """A placeholder of `t`'s dtype and shape, but `default_batch_size` rows, named after
    `t`'s op."""
    shape = TensorShape([default_batch_size]).concatenate(t.get_shape()[1:])
    return placeholder(t.dtype, shape, name=t.op.name)


def build_raw_serving_input_receiver_fn(
        features: Mapping[str, Tensor],
        default_batch_size: int | None = None) -> Callable[[], ServingInputReceiver]:
    """A receiver fn that feeds each feature directly, through a placeholder shaped like the
    given tensor (which may belong to another graph)."""
    def serving_input_receiver_fn() -> ServingInputReceiver:
        receiver_tensors = {name: _placeholder_from_tensor(t, default_batch_size)
                            for name, t in features.items()}
        return ServingInputReceiver(receiver_tensors, dict(receiver_tensors))

    return serving_input_receiver_fn


# -- export outputs ---------------------------------------------------------------------------

class ExportOutput(abc.ABC):
    """One output signature of a served model."""

    _SEPARATOR_CHAR = "/"

    @abc.abstractmethod
    def as_signature_def(self, receiver_tensors: dict[str, Any]) -> SignatureDef:
        """The `SignatureDef` that feeds `receiver_tensors` and fetches this output."""

    def _check_output_key(self, key: Any, error_label: str) -> str:
        if isinstance(key, tuple):  # multi-head models key their outputs by tuples
            key = self._SEPARATOR_CHAR.join(key)
        if not isinstance(key, str):
            raise ValueError(f"{error_label} output key must be a string; got {key}.")
        return key

    def _wrap_and_check_outputs(self, outputs: Any, single_output_default_name: str,
                                error_label: str) -> dict[str, Tensor]:
        if not isinstance(outputs, dict):
            outputs = {single_output_default_name: outputs}
        checked = {}
        for key, value in outputs.items():
            key = self._check_output_key(key, error_label)
            if not isinstance(value, Tensor):
                raise ValueError(f"{error_label} output value must be a Tensor; got {value}.")
            checked[key] = value
        return checked


def _single_examples_tensor(receiver_tensors: dict[str, Any], what: str) -> Tensor:
    if len(receiver_tensors) == 1:
        (examples,) = receiver_tensors.values()
        if isinstance(examples, Tensor) and examples.dtype == dtypes.string:
            return examples
    raise ValueError(f"{what} input must be a single string Tensor; got {receiver_tensors}")


class ClassificationOutput(ExportOutput):
    """Class scores (float) and/or class names (string), served by the classify API."""

    def __init__(self, scores: Tensor | None = None, classes: Tensor | None = None) -> None:
        if scores is not None and not (isinstance(scores, Tensor) and scores.dtype.is_floating):
            raise ValueError(f"Classification scores must be a float32 Tensor; got {scores}")
        if classes is not None and not (isinstance(classes, Tensor)
                                        and classes.dtype == dtypes.string):
            raise ValueError(f"Classification classes must be a string Tensor; got {classes}")
        if scores is None and classes is None:
            raise ValueError("At least one of scores and classes must be set.")
        self._scores = scores
        self._classes = classes

    @property
    def scores(self) -> Tensor | None:
        return self._scores

    @property
    def classes(self) -> Tensor | None:
        return self._classes

    def as_signature_def(self, receiver_tensors: dict[str, Any]) -> SignatureDef:
        examples = _single_examples_tensor(receiver_tensors, "Classification")
        return signature_def_utils.classification_signature_def(examples, self._classes,
                                                                self._scores)


class RegressionOutput(ExportOutput):
    """One float value per example, served by the regress API."""

    def __init__(self, value: Tensor) -> None:
        if not (isinstance(value, Tensor) and value.dtype.is_floating):
            raise ValueError(f"Regression output value must be a float32 Tensor; got {value}")
        self._value = value

    @property
    def value(self) -> Tensor:
        return self._value

    def as_signature_def(self, receiver_tensors: dict[str, Any]) -> SignatureDef:
        examples = _single_examples_tensor(receiver_tensors, "Regression")
        return signature_def_utils.regression_signature_def(examples, self._value)


class PredictOutput(ExportOutput):
    """Any named tensors, served by the predict API (from any receiver tensors)."""

    def __init__(self, outputs: Tensor | dict[Any, Tensor]) -> None:
        self._outputs = self._wrap_and_check_outputs(outputs, "output", "Prediction")

    @property
    def outputs(self) -> dict[str, Tensor]:
        return self._outputs

    def as_signature_def(self, receiver_tensors: dict[str, Any]) -> SignatureDef:
        return signature_def_utils.predict_signature_def(receiver_tensors, self._outputs)


# -- from a PREDICT EstimatorSpec to signatures -----------------------------------------------

def export_outputs_for_predict(export_outputs: Any, predictions: Any) -> dict[str, ExportOutput]:
    """The export outputs of a PREDICT-mode spec; see the module docstring."""
    default_key = signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
    if export_outputs is None:
        return {default_key: PredictOutput(predictions)}
    if not isinstance(export_outputs, dict):
        raise TypeError(f"export_outputs must be dict, given: {export_outputs}")
    if not all(isinstance(v, ExportOutput) for v in export_outputs.values()):
        raise TypeError("Values in export_outputs must be ExportOutput objects. Given: "
                        f"{export_outputs}")
    export_outputs = dict(export_outputs)
    if len(export_outputs) == 1:
        (value,) = export_outputs.values()
        export_outputs.setdefault(default_key, value)
    elif len(export_outputs) > 1 and default_key not in export_outputs:
        raise ValueError("Multiple export_outputs were provided, but none of them is specified "
                         "as the default.  Do this by naming one of them with "
                         "signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY.")
    return export_outputs


def build_all_signature_defs(receiver_tensors: Any, export_outputs: dict[str, ExportOutput],
                             receiver_tensors_alternatives: dict[str, Any] | None = None
                             ) -> dict[str, SignatureDef]:
    """The serving signatures of every export output for the receiver tensors, and for each
    alternative receiver as ``"<receiver name>:<output key>"``."""
    if not isinstance(receiver_tensors, dict):
        receiver_tensors = {_SINGLE_TENSOR_DEFAULT_NAMES["receiver_tensor"]: receiver_tensors}
    if not isinstance(export_outputs, dict):
        raise ValueError(f"export_outputs must be a dict and not{type(export_outputs)}")
    receivers = [("", receiver_tensors)]
    for name, alternative in (receiver_tensors_alternatives or {}).items():
        if not isinstance(alternative, dict):
            alternative = {_SINGLE_TENSOR_DEFAULT_NAMES["receiver_tensor"]: alternative}
        receivers.append((f"{name or 'None'}:", alternative))
    signatures, excluded = {}, {}
    for prefix, tensors in receivers:
        for key, export_output in export_outputs.items():
            name = f"{prefix}{key or 'None'}"
            try:
                signatures[name] = export_output.as_signature_def(tensors)
            except ValueError as exc:
                excluded[name] = str(exc)
    for name, reason in excluded.items():
        _log.info("Signature %s was not exported: %s", name, reason)
    return {k: v for k, v in signatures.items() if signature_def_utils.is_valid_signature(v)}


# -- export directories -----------------------------------------------------------------------

def get_timestamped_export_dir(export_dir_base: str | bytes) -> bytes:
    """``<export_dir_base>/<unix seconds>``, waiting for the next second while that exists."""
    for attempt in range(1, _MAX_DIRECTORY_CREATION_ATTEMPTS + 1):
        result = os.path.join(os.fsencode(export_dir_base), str(int(time.time())).encode())
        if not os.path.exists(result):
            return result
        time.sleep(1)
        _log.warning("Directory %s already exists; retrying (attempt %d/%d)",
                     os.fsdecode(result), attempt, _MAX_DIRECTORY_CREATION_ATTEMPTS)
    raise RuntimeError("Failed to obtain a unique export directory name after "
                       f"{_MAX_DIRECTORY_CREATION_ATTEMPTS} attempts.")


def get_temp_export_dir(timestamped_export_dir: str | bytes) -> bytes:
    """``temp-<name>`` beside `timestamped_export_dir`: the export is written there, then
    renamed, so a half-written export never has the final name."""
    dirname, basename = os.path.split(os.fsencode(timestamped_export_dir))
    return os.path.join(dirname, b"temp-" + basename)
