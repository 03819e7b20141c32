"""``tw.keras.Model``: a `Network` that trains: `compile`, `fit`, `evaluate`, `predict` and their
one-batch forms, run in the Keras backend's session (graph mode, as TF 1.15's Keras).

Contract: `compile(optimizer, loss, metrics)` resolves the optimizer, loss and metrics (names,
Keras objects, any ``tw.train.Optimizer``) and, once the model has inputs, builds in its graph a
``<output>_target`` placeholder, the total loss (the mean per-sample loss plus the layers'
regularization losses) and one batch-mean tensor per metric; `metrics_names` is ``["loss",
*metric names]``. The train op (``optimizer.minimize`` over `trainable_weights`) is built by the
first training call, so the optimizer's variables exist only for models that train. A training
step feeds the learning phase True and runs the model's update ops (batch-normalization moving
averages) with the train op. `fit` returns a `History` whose per-epoch values are the means over
the epoch's samples (``val_`` ones over the validation data). A model without inputs yet (a
subclassed model, a Sequential without an input shape) is built from the first data it gets.
Using `fit`/`evaluate` before `compile` is a RuntimeError, as in Keras.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave import dtypes
from tensorweave.api import math_ops
from tensorweave.api.state_ops import placeholder
from tensorweave.framework.graph import Tensor, get_default_graph
from tensorweave.keras import backend, losses, optimizers
from tensorweave.keras import metrics as metrics_module
from tensorweave.keras.callbacks import Callback, CallbackList, History
from tensorweave.keras.network import Network
from tensorweave.keras.training_utils import (
    check_array_lengths,
    slice_arrays,
    standardize_input_data,
)

__all__ = ["Model"]

_NOT_COMPILED = ("You must compile your model before training/testing. Use "
                 "`model.compile(optimizer, loss)`.")


def _input_dtype(array: np.ndarray) -> dtypes.DType:
    if np.issubdtype(array.dtype, np.floating):
        return dtypes.as_dtype(backend.floatx())
    return dtypes.as_dtype(array.dtype)


def _format_logs(logs: dict[str, float]) -> str:
    return " - ".join(f"{key}: {value:.4f}" for key, value in logs.items())


class Model(Network):
    """A trainable network; see the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.optimizer: optimizers.Optimizer | None = None
        self.loss: Any = None
        self.metrics_names: list[str] = []
        self.stop_training = False
        self.history: History | None = None
        self._compiled = False
        self._loss_fn: Callable[..., Tensor] | None = None
        self._metric_specs: list[Any] = []
        self._target: Tensor | None = None
        self._eval_fetches: list[Tensor] = []
        self._train_op: Any = None

    # -- compile -------------------------------------------------------------------------------

    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, metrics: Any = None,
                loss_weights: Any = None, sample_weight_mode: Any = None,
                weighted_metrics: Any = None, target_tensors: Any = None,
                **kwargs: Any) -> None:
        """Configure training; see the module docstring."""
        if kwargs:
            raise TypeError(f"Invalid keyword argument(s) in `compile`: {set(kwargs)}")
        if any(a is not None for a in (loss_weights, sample_weight_mode, weighted_metrics,
                                       target_tensors)):
            raise ValueError("tensorweave's Keras compile does not support loss_weights, "
                             "sample_weight_mode, weighted_metrics or target_tensors")
        if loss is None:
            raise ValueError("The model cannot be compiled because it has no loss to "
                             "optimize.")
        if isinstance(loss, (list, tuple)) and len(loss) == 1:
            loss = loss[0]
        if isinstance(loss, (list, tuple, dict)):
            raise ValueError("tensorweave's Keras compile takes one loss (models with one "
                             "output)")
        self._loss_fn = losses.get(loss)
        specs = list(metrics or [])
        for spec in specs:
            if spec not in ("accuracy", "acc"):
                metrics_module.get(spec)
        self.optimizer = optimizers.get(optimizer)
        self.loss, self._metric_specs = loss, specs
        self._compiled = True
        self._train_op = None
        if self.outputs:
            self._build_compiled()

    def _build_compiled(self) -> None:
        if len(self.outputs) != 1:
            raise ValueError(f"tensorweave's Keras trains models with one output; "
                             f"{self.name} has {len(self.outputs)}")
        output = self.outputs[0]
        graph = output.graph
        with graph.as_default():
            target = placeholder(output.dtype, [None] * (output.shape.ndims or 1),
                                 name=f"{self._output_names[0]}_target")
            with graph.name_scope("loss"):
                loss = math_ops.reduce_mean(self._loss_fn(target, output))
                regularization = self.losses
                if regularization:
                    loss = math_ops.add_n([loss, *regularization])
            names, values = [], []
            with graph.name_scope("metrics"):
                for spec in self._metric_specs:
                    name, fn = metrics_module.resolve(spec, self._loss_fn, output.shape.as_list())
                    names.append(name)
                    values.append(math_ops.reduce_mean(fn(target, output)))
        self._target = target
        self._eval_fetches = [loss, *values]
        self.metrics_names = ["loss", *names]

    def _train_fetches(self) -> list[Any]:
        if self._train_op is None:
            with self.graph.as_default(), self.graph.name_scope("training"):
                self._train_op = self.optimizer.minimize(self._eval_fetches[0],
                                                         var_list=self.trainable_weights)
        return [self._train_op, *self._model_updates]

    # -- data ----------------------------------------------------------------------------------

    def _build_from_data(self, x: Any) -> None:
        """Give a model without inputs placeholders shaped like `x` (batch dimension free)."""
        items = list(x) if isinstance(x, (list, tuple)) and x and \
            all(hasattr(a, "shape") for a in x) else [x]
        arrays = [np.asarray(a) for a in items]
        arrays = [a[:, None] if a.ndim == 1 else a for a in arrays]
        with get_default_graph().as_default():
            self._build_from_arrays(arrays)
        if self._compiled:
            self._build_compiled()

    def _build_from_arrays(self, arrays: list[np.ndarray]) -> None:
        inputs = [placeholder(_input_dtype(a), [None, *a.shape[1:]], name=f"input_{i + 1}")
                  for i, a in enumerate(arrays)]
        self._set_inputs(inputs[0] if len(inputs) == 1 else inputs)

    def _standardize(self, x: Any, y: Any = None) -> tuple[list[np.ndarray], list[np.ndarray]]:
        if not self.inputs:
            self._build_from_data(x)
        xs = standardize_input_data(x, self._input_names,
                                    [tuple(t.shape.as_list()) for t in self.inputs],
                                    [t.dtype for t in self.inputs], "input")
        ys: list[np.ndarray] = []
        if y is not None:
            output = self.outputs[0]
            shape = tuple(output.shape.as_list())
            if self._loss_fn is losses.sparse_categorical_crossentropy:
                shape = (*shape[:-1], 1)
            ys = standardize_input_data(y, self._output_names[:1], [shape], [output.dtype],
                                        "target")
        check_array_lengths(xs, ys)
        return xs, ys

    def _feed(self, xs: list[np.ndarray], ys: list[np.ndarray],
              training: bool) -> dict[Any, Any]:
        feed: dict[Any, Any] = dict(zip(self.inputs, xs))
        if ys:
            feed[self._target] = ys[0]
        with self.graph.as_default():
            phase = backend.learning_phase()
        if training and isinstance(phase, Tensor):
            feed[phase] = True
        return feed

    def _assert_compiled(self) -> None:
        if not self._compiled:
            raise RuntimeError(_NOT_COMPILED)

    # -- one batch -----------------------------------------------------------------------------

    def _run(self, fetches: list[Any], targets: list[Any], xs: list[np.ndarray],
             ys: list[np.ndarray], training: bool) -> list[Any]:
        session = backend.get_session(self.graph)
        results = session.run([*targets, *fetches], self._feed(xs, ys, training))
        return list(results[len(targets):])

    @staticmethod
    def _scalar_or_list(values: list[Any]) -> Any:
        values = [float(v) for v in values]
        return values[0] if len(values) == 1 else values

    def train_on_batch(self, x: Any, y: Any) -> Any:
        """One training step on the batch ``(x, y)``; the loss (and metrics) before it."""
        self._assert_compiled()
        xs, ys = self._standardize(x, y)
        return self._scalar_or_list(self._run(self._eval_fetches, self._train_fetches(), xs,
                                              ys, training=True))

    def test_on_batch(self, x: Any, y: Any) -> Any:
        """The loss (and metrics) on the batch ``(x, y)``."""
        self._assert_compiled()
        xs, ys = self._standardize(x, y)
        return self._scalar_or_list(self._run(self._eval_fetches, [], xs, ys, training=False))

    def predict_on_batch(self, x: Any) -> Any:
        xs, _ = self._standardize(x)
        outputs = self._run(self.outputs, [], xs, [], training=False)
        return outputs[0] if len(outputs) == 1 else outputs

    # -- loops ---------------------------------------------------------------------------------

    def _test_loop(self, xs: list[np.ndarray], ys: list[np.ndarray],
                   batch_size: int) -> list[float]:
        count = len(xs[0])
        totals = np.zeros(len(self._eval_fetches))
        for start in range(0, count, batch_size):
            index = slice(start, start + batch_size)
            values = self._run(self._eval_fetches, [], slice_arrays(xs, index),
                               slice_arrays(ys, index), training=False)
            totals += np.asarray(values, dtype=np.float64) * len(xs[0][index])
        return list(totals / max(count, 1))

    def evaluate(self, x: Any = None, y: Any = None, batch_size: int | None = None,
                 verbose: int = 1, sample_weight: Any = None, steps: Any = None,
                 callbacks: Any = None) -> Any:
        """The loss (a scalar) or ``[loss, *metrics]``, averaged over the samples."""
        self._assert_compiled()
        if sample_weight is not None:
            raise ValueError("tensorweave's Keras evaluate does not support sample_weight")
        xs, ys = self._standardize(x, y)
        values = self._test_loop(xs, ys, batch_size or 32)
        if verbose:
            print(f"{len(xs[0])}/{len(xs[0])} - "
                  + _format_logs(dict(zip(self.metrics_names, values))))
        return self._scalar_or_list(values)

    def predict(self, x: Any, batch_size: int | None = None, verbose: int = 0,
                steps: Any = None, callbacks: Any = None) -> Any:
        """The model's outputs for `x`, computed `batch_size` samples at a time."""
        xs, _ = self._standardize(x)
        batch_size = batch_size or 32
        batches = [self._run(self.outputs, [], slice_arrays(xs, slice(s, s + batch_size)), [],
                             training=False) for s in range(0, len(xs[0]), batch_size)]
        outputs = [np.concatenate([b[i] for b in batches]) if batches else
                   np.zeros([0, *t.shape.as_list()[1:]], t.dtype.np_type)
                   for i, t in enumerate(self.outputs)]
        return outputs[0] if len(outputs) == 1 else outputs

    def fit(self, x: Any = None, y: Any = None, batch_size: int | None = None, epochs: int = 1,
            verbose: int = 1, callbacks: list[Callback] | None = None,
            validation_split: float = 0.0, validation_data: Any = None, shuffle: bool = True,
            class_weight: Any = None, sample_weight: Any = None, initial_epoch: int = 0,
            steps_per_epoch: Any = None, validation_steps: Any = None,
            **kwargs: Any) -> History:
        """Train for `epochs` epochs of `batch_size`-sample steps; see the module
        docstring."""
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {kwargs}")
        if class_weight is not None or sample_weight is not None or steps_per_epoch:
            raise ValueError("tensorweave's Keras fit does not support class_weight, "
                             "sample_weight or steps_per_epoch")
        self._assert_compiled()
        batch_size = batch_size or 32
        xs, ys = self._standardize(x, y)
        val: tuple[list[np.ndarray], list[np.ndarray]] | None = None
        if validation_data is not None:
            if len(validation_data) != 2:
                raise ValueError("When passing validation_data, it must contain 2 (x_val, "
                                 "y_val) items, however it contains "
                                 f"{len(validation_data)} items")
            val = self._standardize(*validation_data)
        elif validation_split:
            split = int(len(xs[0]) * (1.0 - validation_split))
            val = (slice_arrays(xs, slice(split, None)), slice_arrays(ys, slice(split, None)))
            xs, ys = slice_arrays(xs, slice(0, split)), slice_arrays(ys, slice(0, split))
        train_fetches = self._train_fetches()
        names = list(self.metrics_names)
        history = History()
        callback_list = CallbackList([*(callbacks or []), history], self, {
            "batch_size": batch_size, "epochs": epochs, "steps": None, "samples": len(xs[0]),
            "verbose": verbose, "do_validation": val is not None,
            "metrics": names + ([f"val_{n}" for n in names] if val is not None else [])})
        if verbose:
            print(f"Train on {len(xs[0])} samples" +
                  (f", validate on {len(val[0][0])} samples" if val is not None else ""))
        self.stop_training = False
        callback_list.on_train_begin()
        for epoch in range(initial_epoch, epochs):
            started = time.time()
            callback_list.on_epoch_begin(epoch, {})
            order = np.random.permutation(len(xs[0])) if shuffle else np.arange(len(xs[0]))
            totals, seen = np.zeros(len(names)), 0
            for batch, start in enumerate(range(0, len(order), batch_size)):
                index = order[start:start + batch_size]
                callback_list.on_batch_begin(batch, {"batch": batch, "size": len(index)})
                values = self._run(self._eval_fetches, train_fetches, slice_arrays(xs, index),
                                   slice_arrays(ys, index), training=True)
                totals += np.asarray(values, dtype=np.float64) * len(index)
                seen += len(index)
                callback_list.on_batch_end(batch, {"batch": batch, "size": len(index),
                                                   **dict(zip(names, map(float, values)))})
                if self.stop_training:
                    break
            logs = {n: float(v) for n, v in zip(names, totals / max(seen, 1))}
            if val is not None:
                logs.update({f"val_{n}": float(v)
                             for n, v in zip(names, self._test_loop(*val, batch_size))})
            callback_list.on_epoch_end(epoch, logs)
            if verbose:
                if verbose == 1:
                    print(f"Epoch {epoch + 1}/{epochs}")
                print(f"{seen}/{len(xs[0])} - {time.time() - started:.0f}s - "
                      + _format_logs(logs))
            if self.stop_training:
                break
        callback_list.on_train_end()
        self.history = history
        return history

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        # A model's weights come from its layers' calls: it has nothing to build first.
        self.built = True
        return super().__call__(inputs, *args, **kwargs)

    def build(self, input_shape: Any) -> None:
        """Build a subclassed model for inputs of `input_shape` (batch dimension included)."""
        if self._is_graph_network or self.inputs:
            self.built = True
            return
        shapes = input_shape if isinstance(input_shape, list) else [input_shape]
        with get_default_graph().as_default():
            inputs = [placeholder(dtypes.as_dtype(backend.floatx()), list(s),
                                  name=f"input_{i + 1}") for i, s in enumerate(shapes)]
            self._set_inputs(inputs[0] if len(inputs) == 1 else inputs)
        self.built = True

