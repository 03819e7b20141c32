"""Exporting an `Estimator`'s TRAIN, EVAL and PREDICT graphs into one SavedModel, as TF 1.15's
``Estimator.experimental_export_all_saved_models``.

Contract:
- `SupervisedInputReceiver(features, labels, receiver_tensors)` is what a TRAIN or EVAL input
  receiver fn returns: features and labels (each a `Tensor`/`SparseTensor` or a dict of them)
  for the `model_fn`, and the tensors fed (a lone one becomes ``{"input": t}``).
  `build_raw_supervised_input_receiver_fn(features, labels)` feeds one placeholder per feature
  and label, shaped like the given tensors but with `default_batch_size` rows (lone tensors are
  fed as ``feature`` / ``label``; overlapping keys raise ``ValueError``).
  `build_supervised_input_receiver_fn_from_input_fn(input_fn, **kwargs)` does the same for the
  features and labels an `input_fn` returns (it is called in a throwaway graph).
- `TrainOutput` / `EvalOutput` are the export outputs of those modes: signatures with method
  ``tensorflow/supervised/training`` / ``.../eval`` whose outputs are ``loss``,
  ``predictions[/<key>]`` and, per metric, ``metrics/<name>/value`` and
  ``metrics/<name>/update_op`` (an update `Operation` is wrapped in an empty constant that
  depends on it, as a signature holds tensors only).
- `export_all_saved_models(estimator, export_dir_base, input_receiver_fn_map, ...)` builds one
  graph per mode of `input_receiver_fn_map` (TRAIN, then EVAL, then PREDICT; the first one
  saves the variables, restored from `checkpoint_path` or the newest checkpoint), tagged
  ``train`` / ``eval`` / ``serve``, with its signatures under the mode's name (``train``,
  ``eval``) or the spec's serving ``export_outputs``, its scaffold's local init op as main op
  and, for TRAIN, the ``train_op`` in the ``saved_model_train_op`` collection, so a loaded
  TRAIN graph can keep training. It is written to ``temp-<secs>`` and renamed to
  ``<export_dir_base>/<unix seconds>``, whose path it returns (bytes); ``assets_extra`` files
  are copied under ``assets.extra/``. A map without any of the three modes raises
  ``ValueError``.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections import namedtuple
from collections.abc import Callable
from typing import Any

from tensorweave.api.random_ops import set_random_seed
from tensorweave.api.scopes import control_dependencies
from tensorweave.engine import errors
from tensorweave.engine.client.session import Session
from tensorweave.engine.graph.constant_op import constant
from tensorweave.engine.graph.graph import Graph, Operation, Tensor
from tensorweave.estimator import export
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorweave.estimator.util import parse_input_fn_result
from tensorweave.formats.saved_model_proto import SignatureDef
from tensorweave.saved_model import tag_constants
from tensorweave.saved_model.builder import SavedModelBuilder
from tensorweave.saved_model.signature_def_utils import build_signature_def
from tensorweave.saved_model.simple_save import ASSET_FILEPATHS
from tensorweave.saved_model.utils import build_tensor_info
from tensorweave.train.monitored_session import Scaffold
from tensorweave.train.saver import Saver

__all__ = ["EvalOutput", "SupervisedInputReceiver", "TrainOutput",
           "build_raw_supervised_input_receiver_fn",
           "build_supervised_input_receiver_fn_from_input_fn", "export_all_saved_models"]

_log = logging.getLogger(__name__)

# TF's saved_model constants of the same names.
TRAIN_OP_KEY = "saved_model_train_op"
EVAL_TAG = "eval"
SUPERVISED_TRAIN_METHOD_NAME = "tensorflow/supervised/training"
SUPERVISED_EVAL_METHOD_NAME = "tensorflow/supervised/eval"

EXPORT_TAG_MAP = {ModeKeys.PREDICT: [tag_constants.SERVING],
                  ModeKeys.TRAIN: [tag_constants.TRAINING], ModeKeys.EVAL: [EVAL_TAG]}

_SINGLE_FEATURE_KEY = "feature"
_SINGLE_LABEL_KEY = "label"
_SINGLE_RECEIVER_KEY = "input"


# -- receivers --------------------------------------------------------------------------------

def _check_features_or_labels(value: Any, label: str) -> None:
    if value is None:
        raise ValueError(f"{label}s must be defined.")
    for name, tensor in (value.items() if isinstance(value, dict) else [(None, value)]):
        if name is not None:
            export._check_tensor_key(name, label, allow_ints=True)
        export._check_tensor(tensor, name, label)


class SupervisedInputReceiver(namedtuple("SupervisedInputReceiver",
                                         ["features", "labels", "receiver_tensors"])):
    """The features and labels a TRAIN or EVAL graph computes from the tensors it is fed."""

    __slots__ = ()

    def __new__(cls, features: Any, labels: Any, receiver_tensors: Any
                ) -> SupervisedInputReceiver:
        _check_features_or_labels(features, "feature")
        _check_features_or_labels(labels, "label")
        receiver_tensors = export._wrap_and_check_input_tensors(receiver_tensors,
                                                                "receiver_tensor")
        return super().__new__(cls, features, labels, receiver_tensors)


def _placeholders_like(tensors: Any, single_key: str, default_batch_size: int | None
                       ) -> tuple[Any, dict[str, Tensor]]:
    """Placeholders shaped like `tensors` (a tensor or a dict), and them as receiver tensors."""
    if isinstance(tensors, dict):
        placeholders = {key: export._placeholder_from_tensor(t, default_batch_size)
                        for key, t in tensors.items()}
        return placeholders, dict(placeholders)
    placeholder = export._placeholder_from_tensor(tensors, default_batch_size)
    return placeholder, {single_key: placeholder}


def build_raw_supervised_input_receiver_fn(
        features: Any, labels: Any,
        default_batch_size: int | None = None) -> Callable[[], SupervisedInputReceiver]:
    """A receiver fn that feeds `features` and `labels` directly; see the module docstring."""
    feature_keys = set(features) if isinstance(features, dict) else {_SINGLE_RECEIVER_KEY}
    label_keys = set(labels) if isinstance(labels, dict) else {_SINGLE_LABEL_KEY}
    overlap = feature_keys & label_keys
    if overlap:
        raise ValueError("Features and labels must have distinct keys. Found overlapping keys: "
                         f"{overlap}")

    def supervised_input_receiver_fn() -> SupervisedInputReceiver:
        feature_values, receiver_tensors = _placeholders_like(features, _SINGLE_FEATURE_KEY,
                                                              default_batch_size)
        label_values, label_receivers = _placeholders_like(labels, _SINGLE_LABEL_KEY,
                                                           default_batch_size)
        receiver_tensors.update(label_receivers)
        return SupervisedInputReceiver(feature_values, label_values, receiver_tensors)

    return supervised_input_receiver_fn


def build_supervised_input_receiver_fn_from_input_fn(
        input_fn: Callable[..., Any], **input_fn_args: Any
) -> Callable[[], SupervisedInputReceiver]:
    """A receiver fn feeding placeholders like the features and labels of `input_fn`."""
    with Graph().as_default():
        features, labels, _ = parse_input_fn_result(input_fn(**input_fn_args))
    return build_raw_supervised_input_receiver_fn(features, labels)


# -- export outputs ---------------------------------------------------------------------------

class _SupervisedOutput(export.ExportOutput):
    """Loss, predictions and metrics of a TRAIN or EVAL graph; see the module docstring."""

    LOSS_NAME = "loss"
    PREDICTIONS_NAME = "predictions"
    METRICS_NAME = "metrics"
    METRIC_VALUE_SUFFIX = "value"
    METRIC_UPDATE_SUFFIX = "update_op"
    _METHOD_NAME = ""

    def __init__(self, loss: Any = None, predictions: Any = None,
                 metrics: dict[str, Any] | None = None) -> None:
        self._loss = self._prefixed(loss, self.LOSS_NAME)
        self._predictions = self._prefixed(predictions, self.PREDICTIONS_NAME)
        self._metrics = None if metrics is None else self._wrap_and_check_metrics(metrics)

    @property
    def loss(self) -> dict[str, Tensor] | None:
        return self._loss

    @property
    def predictions(self) -> dict[str, Tensor] | None:
        return self._predictions

    @property
    def metrics(self) -> dict[str, Tensor] | None:
        return self._metrics

    def _prefix_key(self, key: str, output_name: str) -> str:
        return key if key.startswith(output_name) else f"{output_name}{self._SEPARATOR_CHAR}{key}"

    def _prefixed(self, outputs: Any, output_name: str) -> dict[str, Tensor] | None:
        if outputs is None:
            return None
        checked = self._wrap_and_check_outputs(outputs, output_name, output_name)
        return {self._prefix_key(k, output_name): v for k, v in checked.items()}

    def _wrap_and_check_metrics(self, metrics: Any) -> dict[str, Tensor]:
        if not isinstance(metrics, dict):
            raise ValueError(f"{self.METRICS_NAME} output value must be a dict; got {metrics}.")
        outputs = {}
        for key, (value, update_op) in metrics.items():
            key = self._prefix_key(self._check_output_key(key, self.METRICS_NAME),
                                   self.METRICS_NAME)
            if not isinstance(value, Tensor):
                raise ValueError(f"{key} output value must be a Tensor; got {value}.")
            if not isinstance(update_op, (Tensor, Operation)):
                raise ValueError(f"{key} update_op must be a Tensor or Operation; got "
                                 f"{update_op}.")
            if isinstance(update_op, Operation):
                with control_dependencies([update_op]):
                    update_op = constant([], name="metric_op_wrapper")
            outputs[f"{key}{self._SEPARATOR_CHAR}{self.METRIC_VALUE_SUFFIX}"] = value
            outputs[f"{key}{self._SEPARATOR_CHAR}{self.METRIC_UPDATE_SUFFIX}"] = update_op
        return outputs

    def as_signature_def(self, receiver_tensors: dict[str, Any]) -> SignatureDef:
        if not receiver_tensors:
            raise ValueError(f"{self._METHOD_NAME} inputs cannot be None or empty.")
        outputs: dict[str, Tensor] = {}
        for output_set in (self._loss, self._predictions, self._metrics):
            outputs.update(output_set or {})
        return build_signature_def({k: build_tensor_info(t) for k, t in receiver_tensors.items()},
                                   {k: build_tensor_info(t) for k, t in outputs.items()},
                                   self._METHOD_NAME)


class TrainOutput(_SupervisedOutput):
    """The outputs of an exported TRAIN graph."""

    _METHOD_NAME = SUPERVISED_TRAIN_METHOD_NAME


class EvalOutput(_SupervisedOutput):
    """The outputs of an exported EVAL graph."""

    _METHOD_NAME = SUPERVISED_EVAL_METHOD_NAME


def export_outputs_for_mode(spec: EstimatorSpec) -> dict[str, export.ExportOutput]:
    """The export outputs of `spec`, keyed by their signature names."""
    if spec.mode == ModeKeys.PREDICT:
        return export.export_outputs_for_predict(spec.export_outputs, spec.predictions)
    output_class = TrainOutput if spec.mode == ModeKeys.TRAIN else EvalOutput
    return {spec.mode: output_class(loss=spec.loss, predictions=spec.predictions,
                                    metrics=spec.eval_metric_ops)}


# -- the export -------------------------------------------------------------------------------

def export_all_saved_models(estimator: Any, export_dir_base: str | bytes,
                            input_receiver_fn_map: dict[str, Callable[[], Any]],
                            assets_extra: dict[str, str] | None = None, as_text: bool = False,
                            checkpoint_path: str | None = None,
                            strip_default_attrs: bool = True) -> bytes:
    """Export `estimator`'s graphs of every mode in `input_receiver_fn_map` into one
    SavedModel; see the module docstring."""
    checkpoint_path = checkpoint_path or estimator._checkpoint_to_export()
    modes = [m for m in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)
             if input_receiver_fn_map.get(m)]
    if not modes:
        raise ValueError(f"No valid modes for exporting found. Got {list(input_receiver_fn_map)}.")
    export_dir = export.get_timestamped_export_dir(export_dir_base)
    temp_dir = export.get_temp_export_dir(export_dir)
    try:
        builder = SavedModelBuilder(os.fsdecode(temp_dir))
        # TRAIN goes first, and the first mode saves the variables: the checkpoint was written
        # by TRAIN, so its graph is the one least likely to miss one of them.
        for index, mode in enumerate(modes):
            _add_meta_graph_for_mode(estimator, builder, input_receiver_fn_map[mode],
                                     checkpoint_path, mode, save_variables=index == 0,
                                     strip_default_attrs=strip_default_attrs)
        builder.save(as_text)
        for relative, source in (assets_extra or {}).items():
            destination = os.path.join(os.fsdecode(temp_dir), "assets.extra", relative)
            os.makedirs(os.path.dirname(destination), exist_ok=True)
            shutil.copyfile(source, destination)
    except BaseException:
        shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    os.rename(temp_dir, export_dir)
    _log.info("SavedModel written to: %s", os.fsdecode(export_dir))
    return export_dir


def _add_meta_graph_for_mode(estimator: Any, builder: SavedModelBuilder,
                             input_receiver_fn: Callable[[], Any], checkpoint_path: str,
                             mode: str, save_variables: bool, strip_default_attrs: bool) -> None:
    """Build `mode`'s graph on the receiver's tensors, restore `checkpoint_path` into it and
    add it to `builder`."""
    with Graph().as_default() as g:
        estimator._create_and_assert_global_step(g)
        set_random_seed(estimator._config.tf_random_seed)
        receiver = input_receiver_fn()
        spec = estimator._call_model_fn(receiver.features, getattr(receiver, "labels", None),
                                        mode, estimator.config)
        signature_def_map = export.build_all_signature_defs(
            receiver.receiver_tensors, export_outputs_for_mode(spec),
            getattr(receiver, "receiver_tensors_alternatives", None))
        local_init_op = spec.scaffold.local_init_op
        if local_init_op is None:
            local_init_op = Scaffold.default_local_init_op()
        # The same saver restores the checkpoint now and the SavedModel when it is loaded.
        saver = spec.scaffold.saver or Saver(sharded=True)
        with Session(config=estimator._session_config) as session:
            try:
                saver.restore(session, checkpoint_path)
            except errors.NotFoundError as exc:
                raise ValueError(
                    "Could not load all requested variables from checkpoint. Please make sure "
                    "your model_fn does not expect variables that were not saved in the "
                    f"checkpoint.\n\nEncountered error with mode `{mode}` while restoring "
                    f"checkpoint from: `{checkpoint_path}`. Full Traceback:\n\n{exc}") from exc
            if spec.train_op is not None:
                g.add_to_collection(TRAIN_OP_KEY, spec.train_op)
            kwargs = dict(tags=EXPORT_TAG_MAP[mode], signature_def_map=signature_def_map,
                          assets_collection=g.get_collection(ASSET_FILEPATHS),
                          main_op=local_init_op, saver=saver,
                          strip_default_attrs=strip_default_attrs)
            if save_variables:
                builder.add_meta_graph_and_variables(session, **kwargs)
            else:
                builder.add_meta_graph(**kwargs)
