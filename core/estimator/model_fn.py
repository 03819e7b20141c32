"""`ModeKeys` and `EstimatorSpec`: what a `model_fn` returns to an `Estimator`, as
``tf.compat.v1.estimator``.

Contract: `EstimatorSpec` is a namedtuple validated on construction, with TF's errors: TRAIN
needs `loss` and `train_op`, EVAL needs `loss`, PREDICT needs `predictions` (``ValueError``
``Missing ...``); `loss` must be a `Tensor` with one element (a shape ``[1]`` loss is reshaped to
a scalar); `train_op` a `Tensor` or `Operation`; `predictions` a `Tensor` or a dict of them;
`eval_metric_ops` a dict of ``(value, update_op)`` pairs; hooks `SessionRunHook`s (kept as a
tuple); `scaffold` a `Scaffold` (a default one if ``None``). Every tensor must belong to the
default graph. In PREDICT mode `export_outputs` (a dict of `ExportOutput` objects; a default
``PredictOutput`` of the predictions when ``None``) is checked and gains ``serving_default`` when it
has a single entry (`tensorweave.estimator.export.export_outputs_for_predict`); in the other
modes it is kept as given, as TF.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from tensorweave.api.array_ops import reshape
from tensorweave.engine.graph.graph import Operation, Tensor, get_default_graph
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.estimator.export import export_outputs_for_predict
from tensorweave.train.monitored_session import Scaffold
from tensorweave.train.session_run_hook import SessionRunHook

__all__ = ["EstimatorSpec", "ModeKeys"]

LOSS_METRIC_KEY = "loss"


class ModeKeys:
    """The modes a `model_fn` is called in."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


_GRAPH_ERROR = ('{0} with "{1}" must be from the default graph. Possible causes of this error '
                "include: \n\n1) {0} was created outside the context of the default graph.\n\n"
                "2) The object passed through to EstimatorSpec was not created in the most "
                'recent call to "model_fn".')

_FIELDS = ["mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
           "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks",
           "prediction_hooks"]


class EstimatorSpec(namedtuple("EstimatorSpec", _FIELDS)):
    """The ops and objects a `model_fn` gives an `Estimator`; see the module docstring."""

    __slots__ = ()

    def __new__(cls, mode: str, predictions: Any = None, loss: Any = None,
                train_op: Any = None, eval_metric_ops: dict[str, Any] | None = None,
                export_outputs: dict[str, Any] | None = None,
                training_chief_hooks: Any = None, training_hooks: Any = None,
                scaffold: Scaffold | None = None, evaluation_hooks: Any = None,
                prediction_hooks: Any = None) -> EstimatorSpec:
        predictions = _predictions(predictions, mode)
        if mode == ModeKeys.PREDICT:
            export_outputs = export_outputs_for_predict(export_outputs, predictions)
        return super().__new__(
            cls, mode=mode, predictions=predictions,
            loss=_loss(loss, mode), train_op=_train_op(train_op, mode),
            eval_metric_ops=_eval_metric_ops(eval_metric_ops), export_outputs=export_outputs,
            training_chief_hooks=_hooks(training_chief_hooks),
            training_hooks=_hooks(training_hooks), scaffold=_scaffold(scaffold),
            evaluation_hooks=_hooks(evaluation_hooks),
            prediction_hooks=_hooks(prediction_hooks))

    def _replace(self, **kwds: Any) -> EstimatorSpec:
        if "mode" in kwds and self.mode != kwds["mode"]:
            raise ValueError("mode of EstimatorSpec cannot be changed.")
        return EstimatorSpec(*map(kwds.pop, self._fields, list(self)))


def _check_in_default_graph(what: str, name: str, value: Any) -> None:
    if value.graph is not get_default_graph():
        raise ValueError(_GRAPH_ERROR.format(what, name))


def _check_is_tensor(x: Any, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be Tensor, given: {x}")
    return x


def _check_is_tensor_or_operation(x: Any, name: str) -> None:
    if not isinstance(x, (Tensor, Operation)):
        raise TypeError(f"{name} must be Operation or Tensor, given: {x}")


def _train_op(train_op: Any, mode: str) -> Any:
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
        return None
    _check_is_tensor_or_operation(train_op, "train_op")
    _check_in_default_graph("train_op", train_op.name, train_op)
    return train_op


def _loss(loss: Any, mode: str) -> Tensor | None:
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError("Missing loss.")
        return None
    loss = _check_is_tensor(loss, "loss")
    shape = loss.get_shape()
    if shape.num_elements() not in (None, 1):
        raise ValueError(f"Loss must be scalar, given: {loss}")
    _check_in_default_graph("loss", loss.name, loss)
    if not shape.is_compatible_with(TensorShape([])):
        loss = reshape(loss, [])
    return loss


def _predictions(predictions: Any, mode: str) -> Any:
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise ValueError("Missing predictions.")
        return {}
    if isinstance(predictions, dict):
        predictions = {k: _check_is_tensor(v, f"predictions[{k}]")
                       for k, v in predictions.items()}
        for key, value in predictions.items():
            _check_in_default_graph("prediction values", f"{key}: {value.name}", value)
        return predictions
    predictions = _check_is_tensor(predictions, "predictions")
    _check_in_default_graph("prediction values", predictions.name, predictions)
    return predictions


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in _flatten(value[k])]
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _eval_metric_ops(eval_metric_ops: Any) -> dict[str, Any]:
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(f"eval_metric_ops must be a dict, given: {eval_metric_ops}")
    for key, value in eval_metric_ops.items():
        if not isinstance(value, tuple) or len(value) != 2:
            raise TypeError("Values of eval_metric_ops must be (metric_value, update_op) "
                            f"tuples, given: {value} for key: {key}")
        for member in _flatten(value):
            _check_is_tensor_or_operation(member, f"eval_metric_ops[{key}]")
    for key, value in eval_metric_ops.items():
        for member in _flatten(value):
            _check_in_default_graph("eval_metric_ops", f"{key}: {member.name}", member)
    return dict(eval_metric_ops)


def _hooks(hooks: Any) -> tuple[SessionRunHook, ...]:
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook}")
    return hooks


def _scaffold(scaffold: Any) -> Scaffold:
    scaffold = scaffold or Scaffold()
    if not isinstance(scaffold, Scaffold):
        raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold}")
    return scaffold
