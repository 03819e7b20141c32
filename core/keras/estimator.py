"""``tw.keras.estimator.model_to_estimator``: a compiled Keras model as a ``tw.estimator``
`Estimator`, as TF 1.15's.

Contract: the Estimator's `model_fn` rebuilds the model in the graph it is given with
`models.clone_model` (same layer and variable names; the learning phase fixed to 1 in TRAIN and
0 otherwise) on the features: a dict keyed by the model's input names (any other key set is a
`ValueError` naming the difference), a list in input order or, for one input, a tensor; a
feature whose dtype differs from its input's is cast to it. Labels are keyed (or listed) by
output name the same way; a label one rank below the output gets a last axis of 1. The spec has
``predictions`` ``{output name: output}`` (also the default serving signature), the compiled
loss (the mean of the per-sample losses plus the layers' regularization losses), in TRAIN the
compiled optimizer's ``minimize`` (counting the global step) grouped with the model's update
ops, and in EVAL each compiled metric as the mean of its per-sample values (``tw.metrics.mean``,
keyed by its name in ``metrics_names``). Unless `model_dir` already holds a checkpoint, the
Keras model's current weights are first written to ``<model_dir>/keras/keras_model.ckpt`` under
the rebuilt model's variable names and every variable of the model is warm-started from it.
Only one-output models of the `Sequential` or functional API are converted; `keras_model_path`
(a saved HDF5 model) is not supported.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from tensorweave.api import array_ops, math_ops
from tensorweave.api.control_flow_ops import group
from tensorweave.api.metrics import mean
from tensorweave.api.variables import global_variables_initializer
from tensorweave.engine.client.session import Session
from tensorweave.engine.graph.graph import Graph, Tensor
from tensorweave.estimator.estimator import Estimator, _config_with_model_dir
from tensorweave.estimator.export import PredictOutput
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorweave.estimator.run_config import RunConfig
from tensorweave.estimator.warm_starting import WarmStartSettings
from tensorweave.keras import backend
from tensorweave.keras.models import clone_model
from tensorweave.keras.training import Model
from tensorweave.saved_model import signature_constants
from tensorweave.train.checkpoint_management import latest_checkpoint
from tensorweave.train.saver import Saver
from tensorweave.train.training_util import get_or_create_global_step

__all__ = ["model_to_estimator"]


def _by_name(values: Any, names: list[str], what: str, keys: str) -> list[Tensor]:
    """`values` (a dict by name, a list in order, or one tensor) as one tensor per name."""
    if isinstance(values, dict):
        if set(values) != set(names):
            raise ValueError(f"The dictionary passed into {what} does not have the expected "
                             f"{keys} keys defined in the keras model.\n\tExpected keys: "
                             f"{set(names)}\n\t{what} keys: {set(values)}\n\tDifference: "
                             f"{set(names) ^ set(values)}")
        return [values[name] for name in names]
    if isinstance(values, (list, tuple)):
        if len(values) != len(names):
            raise ValueError(f"The model expects {len(names)} {what} tensors, got "
                             f"{len(values)}")
        return list(values)
    if len(names) != 1:
        raise ValueError(f"The model has {len(names)} {keys}s ({names}): pass its {what} as a "
                         "dict keyed by those names")
    return [values]


def _model_fn(model: Model) -> Any:
    def model_fn(features: Any, labels: Any, mode: str) -> EstimatorSpec:
        backend.set_learning_phase(1 if mode == ModeKeys.TRAIN else 0)
        inputs = [x if x.dtype == original.dtype else math_ops.cast(x, original.dtype)
                  for x, original in zip(_by_name(features, model._input_names, "features",
                                                  "inputs"), model.inputs)]
        clone = clone_model(model, inputs)
        output = clone.outputs[0]
        predictions = {clone._output_names[0]: output}
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions=predictions, export_outputs={
                signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                    PredictOutput(predictions)})
        (target,) = _by_name(labels, model._output_names, "labels", "output")
        if target.shape.ndims is not None and output.shape.ndims == target.shape.ndims + 1:
            target = array_ops.expand_dims(target, -1)
        weights = array_ops.ones(array_ops.shape(output)[:1], output.dtype)
        loss, names, per_sample = model._loss_and_metrics(output, target, weights,
                                                          clone.losses)
        if mode == ModeKeys.EVAL:
            return EstimatorSpec(mode, predictions=predictions, loss=loss, eval_metric_ops={
                name: mean(values) for name, values in zip(names, per_sample)})
        train_op = model.optimizer.minimize(loss, global_step=get_or_create_global_step(),
                                            var_list=clone.trainable_weights)
        return EstimatorSpec(mode, predictions=predictions, loss=loss,
                             train_op=group(train_op, *clone._model_updates))

    return model_fn


def _save_first_checkpoint(model: Model, path: str) -> list[str]:
    """Write `model`'s weights under the names a rebuilt model gives them; those names."""
    graph = Graph()
    with graph.as_default():
        clone = clone_model(model)
        saver = Saver(clone.weights)
        with Session(graph=graph) as session:
            session.run(global_variables_initializer())
            for variable, value in zip(clone.weights, model.get_weights()):
                variable.load(np.asarray(value), session)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            saver.save(session, path, write_meta_graph=False)
    return [w.op.name for w in clone.weights]


def model_to_estimator(keras_model: Model | None = None, keras_model_path: Any = None,
                       custom_objects: Any = None, model_dir: Any = None,
                       config: RunConfig | None = None,
                       checkpoint_format: str | None = None) -> Estimator:
    """An `Estimator` that trains, evaluates and predicts `keras_model` (see the module
    docstring)."""
    if keras_model_path is not None:
        raise ValueError("tensorweave cannot load a Keras model file (HDF5): pass "
                         "`keras_model` instead of `keras_model_path`")
    if keras_model is None:
        raise ValueError("Either `keras_model` or `keras_model_path` needs to be provided.")
    if not keras_model._compiled:
        raise ValueError("The given keras model has not been compiled yet. Please compile the "
                         "model with `model.compile()` before calling `model_to_estimator()`.")
    if len(keras_model.outputs) != 1:
        raise ValueError("tensorweave's model_to_estimator converts models with one output")
    config = _config_with_model_dir(config, model_dir)
    warm_start = None
    if latest_checkpoint(config.model_dir) is None:
        path = os.path.join(config.model_dir, "keras", "keras_model.ckpt")
        names = _save_first_checkpoint(keras_model, path)
        # Every saved variable (moving averages too), matched by its exact name.
        warm_start = WarmStartSettings(path, [f"{re.escape(name)}:" for name in names])
    return Estimator(_model_fn(keras_model), config=config, warm_start_from=warm_start)
