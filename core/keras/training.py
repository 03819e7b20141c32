"""``tw.keras.Model``: a `Network` that trains: `compile`, `fit`, `evaluate`, `predict` and their
one-batch forms, run in the Keras backend's session (graph mode, as TF 1.15's Keras).

Contract: `compile(optimizer, loss, metrics)` resolves the optimizer, loss and metrics (names,
Keras objects, any ``tw.train.Optimizer``) and, once the model has inputs, builds in its graph a
``<output>_target`` placeholder, a ``<output>_sample_weights`` placeholder (default: ones), the
total loss (the mean of the per-sample losses times their weights, plus the layers'
regularization losses) and one batch-mean (unweighted) tensor per metric; `metrics_names` is
``["loss", *metric names]``. The train op (``optimizer.minimize`` over `trainable_weights`) is
built by the first training call, so the optimizer's variables exist only for models that train.
A training step feeds the learning phase True and runs the model's update ops
(batch-normalization moving averages) with the train op. `fit` returns a `History` whose
per-epoch values are the means over the epoch's samples (``val_`` ones over the validation
data). A model without inputs yet (a subclassed model, a Sequential without an input shape) is
built from the first data it gets. `fit`/`evaluate`/`predict` also take a ``tw.data.Dataset``,
a Python generator or a ``keras.utils.Sequence``, run by `training_generator` (its docstring
says how); `fit_generator`, `evaluate_generator` and `predict_generator` are their TF 1.x names.
`fit`, `evaluate`, `train_on_batch` and `test_on_batch` take per-sample weights (per sample and
timestep, ``[batch, time]``, after ``compile(sample_weight_mode="temporal")``); `fit` and
`train_on_batch` also take `class_weight` (see `training_utils.standardize_weights`).
Using `fit`/`evaluate` before `compile` is a RuntimeError, as in Keras.
"""

from __future__ import annotations

import json
import time
import weakref
from collections.abc import Callable, Container
from typing import Any

import numpy as np

from tensorweave.api import array_ops, math_ops
from tensorweave.api.dataset_ops import Dataset
from tensorweave.api.state_ops import placeholder, placeholder_with_default
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Tensor, get_default_graph
from tensorweave.keras import backend, losses, optimizers, training_generator
from tensorweave.keras import metrics as metrics_module
from tensorweave.keras.callbacks import Callback, CallbackList, History
from tensorweave.keras.data_adapter import Batch, DatasetBatches
from tensorweave.keras.network import Network
from tensorweave.keras.training_utils import (
    check_array_lengths,
    slice_arrays,
    standardize_input_data,
    standardize_weights,
    weights_for_output,
)

__all__ = ["Model"]

_NOT_COMPILED = ("You must compile your model before training/testing. Use "
                 "`model.compile(optimizer, loss)`.")


def _input_dtype(array: np.ndarray) -> dtypes.DType:
    if np.issubdtype(array.dtype, np.floating):
        return dtypes.as_dtype(backend.floatx())
    return dtypes.as_dtype(array.dtype)


def _should_validate(validation_freq: Any, epoch: int) -> bool:
    """Whether `fit` validates after `epoch` (0-based) under `validation_freq`."""
    if isinstance(validation_freq, int):
        if validation_freq < 1:
            raise ValueError("`validation_freq` can not be less than 1.")
        return (epoch + 1) % validation_freq == 0
    if not isinstance(validation_freq, Container):
        raise ValueError("`validation_freq` must be an Integer or `collections_abc.Container` "
                         "(e.g. list, tuple, etc.)")
    return epoch + 1 in validation_freq


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
        self._sample_weights: Tensor | None = None
        self._eval_fetches: list[Tensor] = []
        self._train_op: Any = None
        self._dataset_iterators: weakref.WeakKeyDictionary[Dataset, DatasetBatches] = \
            weakref.WeakKeyDictionary()

    # -- compile -------------------------------------------------------------------------------

    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, metrics: Any = None,
                loss_weights: Any = None, sample_weight_mode: Any = None,
                weighted_metrics: Any = None, target_tensors: Any = None,
                **kwargs: Any) -> None:
        """Configure training; see the module docstring."""
        if kwargs:
            raise TypeError(f"Invalid keyword argument(s) in `compile`: {set(kwargs)}")
        if any(a is not None for a in (loss_weights, weighted_metrics, target_tensors)):
            raise ValueError("tensorweave's Keras compile does not support loss_weights, "
                             "weighted_metrics or target_tensors")
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
        self.sample_weight_mode = sample_weight_mode
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
            weight_rank = 2 if self._weight_mode() == "temporal" else 1
            weights = placeholder_with_default(
                array_ops.ones(array_ops.shape(output)[:weight_rank], output.dtype),
                [None] * weight_rank, name=f"{self._output_names[0]}_sample_weights")
            loss, names, per_sample = self._loss_and_metrics(output, target, weights,
                                                             self.losses)
            with graph.name_scope("metrics"):
                values = [math_ops.reduce_mean(m) for m in per_sample]
        self._target, self._sample_weights = target, weights
        self._eval_fetches = [loss, *values]
        self.metrics_names = ["loss", *names]

    def _loss_and_metrics(self, output: Tensor, target: Tensor, weights: Tensor,
                          regularization: list[Any]) -> tuple[Tensor, list[str], list[Tensor]]:
        """The compiled total loss of `output` against `target` (the mean of the per-sample
        losses times `weights`, plus `regularization`), the metric names and each metric's
        per-sample values, built in the default graph."""
        graph = get_default_graph()
        with graph.name_scope("loss"):
            per_sample = self._loss_fn(target, output)
            broadcast = weights
            weight_rank = weights.shape.ndims or 1
            for _ in range((per_sample.shape.ndims or weight_rank) - weight_rank):
                broadcast = array_ops.expand_dims(broadcast, -1)
            loss = math_ops.reduce_mean(per_sample * broadcast)
            if regularization:
                loss = math_ops.add_n([loss, *regularization])
        names, values = [], []
        with graph.name_scope("metrics"):
            for spec in self._metric_specs:
                name, fn = metrics_module.resolve(spec, self._loss_fn, output.shape.as_list())
                names.append(name)
                values.append(fn(target, output))
        return loss, names, values

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

    def _weight_mode(self) -> Any:
        return weights_for_output(self.sample_weight_mode, self._output_names[0],
                                  "sample_weight_mode")

    def _standardize_weights(self, sample_weight: Any, ys: list[np.ndarray],
                             class_weight: Any = None) -> list[np.ndarray]:
        """``[weights]`` (one float per sample, or per sample and timestep) or ``[]``; see
        `training_utils.standardize_weights`."""
        name = self._output_names[0]
        weights = standardize_weights(
            ys[0], weights_for_output(sample_weight, name, "sample_weight"),
            weights_for_output(class_weight, name, "class_weight"), self._weight_mode())
        if weights is None:
            return []
        return [weights.astype(self._sample_weights.dtype.np_type, copy=False)]

    def _feed(self, xs: list[np.ndarray], ys: list[np.ndarray], training: bool,
              weights: list[np.ndarray] | None = None) -> dict[Any, Any]:
        feed: dict[Any, Any] = dict(zip(self.inputs, xs))
        if ys:
            feed[self._target] = ys[0]
        if weights:
            feed[self._sample_weights] = weights[0]
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
             ys: list[np.ndarray], training: bool,
             weights: list[np.ndarray] | None = None) -> list[Any]:
        session = backend.get_session(self.graph)
        results = session.run([*targets, *fetches], self._feed(xs, ys, training, weights))
        return list(results[len(targets):])

    @staticmethod
    def _scalar_or_list(values: list[Any]) -> Any:
        values = [float(v) for v in values]
        return values[0] if len(values) == 1 else values

    def train_on_batch(self, x: Any, y: Any, sample_weight: Any = None,
                       class_weight: Any = None) -> Any:
        """One training step on the batch ``(x, y)``; the loss (and metrics) before it."""
        return self._scalar_or_list(
            self._batch_step((x, y, sample_weight), "train", class_weight)[0])

    def test_on_batch(self, x: Any, y: Any, sample_weight: Any = None) -> Any:
        """The loss (and metrics) on the batch ``(x, y)``."""
        return self._scalar_or_list(self._batch_step((x, y, sample_weight), "test")[0])

    def _batch_step(self, batch: Batch, mode: str,
                    class_weight: Any = None) -> tuple[list[Any], int]:
        """Run one batch ``(x, y, sample_weight)`` in `mode` (``train``, ``test`` or
        ``predict``), its samples weighted by `class_weight` in training: the fetched values
        (losses and metrics, or outputs) and the batch size."""
        x, y, sample_weight = batch
        if mode == "predict":
            xs, _ = self._standardize(x)
            return self._run(self.outputs, [], xs, [], training=False), len(xs[0])
        self._assert_compiled()
        if y is None:
            raise ValueError("The model has a loss to compute: its data must give targets, "
                             "(inputs, targets) or (inputs, targets, sample_weights)")
        xs, ys = self._standardize(x, y)
        weights = self._standardize_weights(sample_weight, ys,
                                            class_weight if mode == "train" else None)
        train = self._train_fetches() if mode == "train" else []
        return self._run(self._eval_fetches, train, xs, ys, training=mode == "train",
                         weights=weights), len(xs[0])

    def _dataset_batches(self, dataset: Dataset) -> DatasetBatches:
        """The batches of `dataset`, through one iterator per dataset in the model's graph."""
        batches = self._dataset_iterators.get(dataset)
        if batches is None:
            graph = self.graph if self.outputs else get_default_graph()
            batches = self._dataset_iterators[dataset] = DatasetBatches(dataset, graph)
        return batches

    def predict_on_batch(self, x: Any) -> Any:
        xs, _ = self._standardize(x)
        outputs = self._run(self.outputs, [], xs, [], training=False)
        return outputs[0] if len(outputs) == 1 else outputs

    # -- loops ---------------------------------------------------------------------------------

    def _test_loop(self, xs: list[np.ndarray], ys: list[np.ndarray], batch_size: int,
                   weights: list[np.ndarray] | None = None,
                   callbacks: CallbackList | None = None) -> list[float]:
        """``[loss, *metrics]`` over the samples, `batch_size` at a time, with the test hooks
        of `callbacks`."""
        callbacks = callbacks or CallbackList([], self, {})
        callbacks.on_test_begin()
        count = len(xs[0])
        totals = np.zeros(len(self._eval_fetches))
        for batch, start in enumerate(range(0, count, batch_size)):
            index = slice(start, start + batch_size)
            size = len(xs[0][index])
            callbacks.on_test_batch_begin(batch, {"batch": batch, "size": size})
            values = self._run(self._eval_fetches, [], slice_arrays(xs, index),
                               slice_arrays(ys, index), training=False,
                               weights=slice_arrays(weights or [], index))
            totals += np.asarray(values, dtype=np.float64) * size
            callbacks.on_test_batch_end(batch, {"batch": batch, "size": size,
                                                **dict(zip(self.metrics_names,
                                                           map(float, values)))})
        callbacks.on_test_end()
        return list(totals / max(count, 1))

    def _predict_loop(self, xs: list[np.ndarray], batch_size: int,
                      callbacks: CallbackList) -> list[np.ndarray]:
        callbacks.on_predict_begin()
        batches = []
        for batch, start in enumerate(range(0, len(xs[0]), batch_size)):
            inputs = slice_arrays(xs, slice(start, start + batch_size))
            size = len(inputs[0])
            callbacks.on_predict_batch_begin(batch, {"batch": batch, "size": size})
            batches.append(self._run(self.outputs, [], inputs, [], training=False))
            callbacks.on_predict_batch_end(batch, {"batch": batch, "size": size,
                                                   "outputs": batches[-1]})
        callbacks.on_predict_end()
        return self._concatenate_outputs(batches)

    def _callback_list(self, callbacks: list[Callback] | None, verbose: int,
                       **params: Any) -> CallbackList:
        """The callbacks of one `evaluate` or `predict` call, with TF's params."""
        return CallbackList(callbacks or [], self, {
            "epochs": 1, "verbose": verbose, "do_validation": False,
            "metrics": list(self.metrics_names), **params})

    def _array_validator(self, data: Any,
                         batch_size: int) -> tuple[Callable[[], list[float]], int]:
        """Evaluating the arrays ``(x_val, y_val[, val_sample_weights])``, and their size."""
        if not isinstance(data, (tuple, list)) or len(data) not in (2, 3):
            raise ValueError("When passing a `validation_data` argument, it must contain either "
                             "2 items (x_val, y_val), or 3 items (x_val, y_val, "
                             "val_sample_weights), or alternatively it could be a dataset or a "
                             f"dataset or a dataset iterator. However we received "
                             f"`validation_data={data}`")
        xs, ys = self._standardize(data[0], data[1])
        weights = self._standardize_weights(data[2] if len(data) == 3 else None, ys)
        return (lambda callbacks=None: self._test_loop(xs, ys, batch_size, weights, callbacks)), \
            len(xs[0])

    def _concatenate_outputs(self, batches: list[list[np.ndarray]]) -> list[np.ndarray]:
        return [np.concatenate([b[i] for b in batches]) if batches else
                np.zeros([0, *t.shape.as_list()[1:]], t.dtype.np_type)
                for i, t in enumerate(self.outputs)]

    def evaluate(self, x: Any = None, y: Any = None, batch_size: int | None = None,
                 verbose: int = 1, sample_weight: Any = None, steps: Any = None,
                 callbacks: Any = None) -> Any:
        """The loss (a scalar) or ``[loss, *metrics]``, averaged over the samples (over the
        steps for the loss of a dataset or a generator)."""
        self._assert_compiled()
        if training_generator.is_step_input(x):
            values, done = training_generator.evaluate(
                self, x, y, batch_size, sample_weight, steps,
                self._callback_list(callbacks, verbose, batch_size=None, steps=steps,
                                    samples=None))
            progress = f"{done}/{done}"
        else:
            xs, ys = self._standardize(x, y)
            weights = self._standardize_weights(sample_weight, ys)
            batch_size = batch_size or 32
            values = self._test_loop(xs, ys, batch_size, weights, self._callback_list(
                callbacks, verbose, batch_size=batch_size, steps=None, samples=len(xs[0])))
            progress = f"{len(xs[0])}/{len(xs[0])}"
        if verbose:
            print(f"{progress} - " + _format_logs(dict(zip(self.metrics_names, values))))
        return self._scalar_or_list(values)

    def predict(self, x: Any, batch_size: int | None = None, verbose: int = 0,
                steps: Any = None, callbacks: Any = None) -> Any:
        """The model's outputs for `x`, computed `batch_size` samples (or one batch of a
        dataset or a generator) at a time."""
        if training_generator.is_step_input(x):
            outputs = training_generator.predict(
                self, x, batch_size, steps,
                self._callback_list(callbacks, verbose, batch_size=None, steps=steps,
                                    samples=None))
        else:
            xs, _ = self._standardize(x)
            batch_size = batch_size or 32
            outputs = self._predict_loop(xs, batch_size, self._callback_list(
                callbacks, verbose, batch_size=batch_size, steps=None, samples=len(xs[0])))
        return outputs[0] if len(outputs) == 1 else outputs

    def fit(self, x: Any = None, y: Any = None, batch_size: int | None = None, epochs: int = 1,
            verbose: int = 1, callbacks: list[Callback] | None = None,
            validation_split: float = 0.0, validation_data: Any = None, shuffle: bool = True,
            class_weight: Any = None, sample_weight: Any = None, initial_epoch: int = 0,
            steps_per_epoch: Any = None, validation_steps: Any = None,
            validation_freq: Any = 1, max_queue_size: int = 10, workers: int = 1,
            use_multiprocessing: bool = False, **kwargs: Any) -> History:
        """Train for `epochs` epochs of `batch_size`-sample steps (of `steps_per_epoch`
        batches of a dataset or a generator), validating after the epochs `validation_freq`
        picks (every n-th, or those listed, counted from 1); see the module docstring. The
        queue and worker arguments are accepted and ignored: batches are drawn on the calling
        thread."""
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {kwargs}")
        _should_validate(validation_freq, 0)
        self._assert_compiled()
        if training_generator.is_step_input(x):
            return training_generator.fit(
                self, x, y, batch_size, epochs, verbose, callbacks, validation_split,
                validation_data, sample_weight, initial_epoch, steps_per_epoch,
                validation_steps, validation_freq, class_weight, shuffle)
        if steps_per_epoch:
            raise ValueError("tensorweave's Keras fit takes steps_per_epoch with a dataset or a "
                             "generator only")
        batch_size = batch_size or 32
        xs, ys = self._standardize(x, y)
        ws = self._standardize_weights(sample_weight, ys, class_weight)
        validate, validation_size = None, None
        if validation_data is not None:
            validate, validation_size = training_generator.validator(
                self, validation_data, validation_steps, batch_size)
        elif validation_split:
            split = int(len(xs[0]) * (1.0 - validation_split))
            tail, head = slice(split, None), slice(0, split)
            val = (slice_arrays(xs, tail), slice_arrays(ys, tail), batch_size,
                   slice_arrays(ws, tail))
            xs, ys, ws = slice_arrays(xs, head), slice_arrays(ys, head), slice_arrays(ws, head)
            validate = lambda callbacks=None: self._test_loop(*val, callbacks)  # noqa: E731
            validation_size = len(val[0][0])
        train_fetches = self._train_fetches()

        def run_epoch(epoch: int, callback_list: CallbackList) -> tuple[list[float], str]:
            order = np.random.permutation(len(xs[0])) if shuffle else np.arange(len(xs[0]))
            totals, seen = np.zeros(len(self._eval_fetches)), 0
            for batch, start in enumerate(range(0, len(order), batch_size)):
                index = order[start:start + batch_size]
                callback_list.on_train_batch_begin(batch, {"batch": batch,
                                                           "size": len(index)})
                values = self._run(self._eval_fetches, train_fetches, slice_arrays(xs, index),
                                   slice_arrays(ys, index), training=True,
                                   weights=slice_arrays(ws, index))
                totals += np.asarray(values, dtype=np.float64) * len(index)
                seen += len(index)
                callback_list.on_train_batch_end(batch, {
                    "batch": batch, "size": len(index),
                    **dict(zip(self.metrics_names, map(float, values)))})
                if self.stop_training:
                    break
            return list(totals / max(seen, 1)), f"{seen}/{len(xs[0])}"

        banner = f"Train on {len(xs[0])} samples" + (
            f", validate on {validation_size} samples" if validation_size is not None else "")
        return self._fit_epochs({"batch_size": batch_size, "steps": None,
                                 "samples": len(xs[0])}, callbacks, epochs, initial_epoch,
                                verbose, run_epoch, validate, banner, validation_freq)

    def _fit_epochs(self, params: dict[str, Any], callbacks: list[Callback] | None,
                    epochs: int, initial_epoch: int, verbose: int,
                    run_epoch: Callable[[int, CallbackList], tuple[list[float], str]],
                    validate: Callable[[CallbackList], list[float]] | None, banner: str,
                    validation_freq: Any = 1) -> History:
        """The epochs of `fit`: `run_epoch` trains one (its mean metrics and a progress text),
        `validate` evaluates the validation data (with the test hooks of the callbacks it
        gets); callbacks and History see every epoch."""
        history = History()
        params = {**params, "epochs": epochs, "verbose": verbose,
                  "do_validation": validate is not None}
        callback_list = CallbackList([*(callbacks or []), history], self, params)
        if verbose and banner:
            print(banner)
        self.stop_training = False
        callback_list.on_train_begin()
        for epoch in range(initial_epoch, epochs):
            started = time.time()
            callback_list.on_epoch_begin(epoch, {})
            values, progress = run_epoch(epoch, callback_list)
            names = list(self.metrics_names)  # a model built from its first batch has them now
            params["metrics"] = names + ([f"val_{n}" for n in names] if validate else [])
            logs = {n: float(v) for n, v in zip(names, values)}
            if validate is not None and not self.stop_training and \
                    _should_validate(validation_freq, epoch):
                logs.update({f"val_{n}": float(v) for n, v in zip(names, validate(callback_list))})
            callback_list.on_epoch_end(epoch, logs)
            if verbose:
                if verbose == 1:
                    print(f"Epoch {epoch + 1}/{epochs}")
                print(f"{progress} - {time.time() - started:.0f}s - " + _format_logs(logs))
            if self.stop_training:
                break
        callback_list.on_train_end()
        self.history = history
        return history

    def fit_generator(self, generator: Any, steps_per_epoch: Any = None, epochs: int = 1,
                      verbose: int = 1, callbacks: list[Callback] | None = None,
                      validation_data: Any = None, validation_steps: Any = None,
                      class_weight: Any = None, max_queue_size: int = 10, workers: int = 1,
                      use_multiprocessing: bool = False, shuffle: bool = True,
                      initial_epoch: int = 0, validation_freq: Any = 1) -> History:
        """`fit` on a generator, a Sequence or a dataset (the queue and worker arguments are
        accepted and ignored: batches are drawn on the calling thread)."""
        return self.fit(generator, epochs=epochs, verbose=verbose, callbacks=callbacks,
                        validation_data=validation_data, class_weight=class_weight,
                        shuffle=shuffle,
                        initial_epoch=initial_epoch, steps_per_epoch=steps_per_epoch,
                        validation_steps=validation_steps, validation_freq=validation_freq)

    def evaluate_generator(self, generator: Any, steps: Any = None, callbacks: Any = None,
                           max_queue_size: int = 10, workers: int = 1,
                           use_multiprocessing: bool = False, verbose: int = 0) -> Any:
        """`evaluate` on a generator or a dataset."""
        return self.evaluate(generator, steps=steps, verbose=verbose, callbacks=callbacks)

    def predict_generator(self, generator: Any, steps: Any = None, callbacks: Any = None,
                          max_queue_size: int = 10, workers: int = 1,
                          use_multiprocessing: bool = False, verbose: int = 0) -> Any:
        """`predict` on a generator or a dataset."""
        return self.predict(generator, steps=steps, verbose=verbose, callbacks=callbacks)

    # -- whole-model files (`saving` imports this module, hence the local imports) --------------

    def get_config(self) -> dict[str, Any]:
        """The architecture as `saving.model_config` describes it (its ``config`` part)."""
        from tensorweave.keras.saving import model_config

        return model_config(self)["config"]

    @classmethod
    def from_config(cls, config: dict[str, Any],
                    custom_objects: dict[str, Any] | None = None) -> Model:
        from tensorweave.keras.saving import model_from_config
        from tensorweave.keras.sequential import Sequential

        kind = "Sequential" if issubclass(cls, Sequential) else "Model"
        return model_from_config({"class_name": kind, "config": config}, custom_objects)

    def to_json(self, **kwargs: Any) -> str:
        """The architecture as JSON (`json.dumps` keyword arguments pass through)."""
        from tensorweave.keras.saving import model_config

        return json.dumps(model_config(self), **kwargs)

    def save(self, filepath: Any, overwrite: bool = True, include_optimizer: bool = True,
             save_format: str | None = None) -> None:
        """`saving.save_model`: the architecture, weights and compile arguments in the
        directory `filepath`."""
        from tensorweave.keras.saving import save_model

        save_model(self, filepath, overwrite, include_optimizer, save_format)

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

