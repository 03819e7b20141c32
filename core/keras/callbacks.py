"""``tw.keras.callbacks``: hooks into `Model.fit`, `evaluate` and `predict`, as TF 1.15's
graph-mode Keras calls them.

Contract: `Callback` is the base (every hook a no-op; ``on_train_batch_*`` forward to
``on_batch_*``). `fit` calls ``on_train_begin``, per epoch ``on_epoch_begin``, per batch
``on_train_batch_begin``/``_end`` (logs: ``batch``, ``size``, then the batch's metrics) and
``on_epoch_end`` (the epoch's means, ``val_`` ones included), and ``on_train_end``; its validation
runs ``on_test_begin``, ``on_test_batch_*`` and ``on_test_end`` on the same callbacks, as does
`evaluate`; `predict` runs ``on_predict_begin``, ``on_predict_batch_*`` (end logs: ``outputs``)
and ``on_predict_end``. `History` records the per-epoch logs (every fit gets one, returned by
`fit` and set as ``model.history``).

The standard callbacks: `BaseLogger` and `ProgbarLogger` (epoch means and a printed line per
epoch), `EarlyStopping`, `TerminateOnNaN`, `ReduceLROnPlateau` and `LearningRateScheduler`
(through the optimizer's ``lr`` variable; a plain ``tw.train`` optimizer has none, a
`ValueError`), `ModelCheckpoint` (`save_weights` or `save` to a path formatted with ``epoch``
(from 1) and the logs), `CSVLogger` (one row per epoch) and `TensorBoard` (the logs as scalar
summaries, ``epoch_<name>`` per epoch and ``batch_<name>`` every `update_freq` samples, through
``tw.summary.FileWriter``, with the graph when `write_graph`; histograms, images, embeddings and
profiling are not written), and `LambdaCallback` for plain functions.
"""

from __future__ import annotations

import collections
import csv
import os
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from tensorweave.formats.summary_proto import Summary
from tensorweave.keras import backend
from tensorweave.namespaces.summary import FileWriter
from tensorweave.platform import tf_logging as logging

__all__ = [
    "BaseLogger", "CSVLogger", "Callback", "CallbackList", "EarlyStopping", "History",
    "LambdaCallback", "LearningRateScheduler", "ModelCheckpoint", "ProgbarLogger",
    "ReduceLROnPlateau", "TensorBoard", "TerminateOnNaN",
]

Logs = dict[str, Any]


class Callback:
    """The base class: `model` and `params` are set before the first hook of a call."""

    def __init__(self) -> None:
        self.model: Any = None
        self.params: dict[str, Any] = {}

    def set_model(self, model: Any) -> None:
        self.model = model

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = params

    def on_train_begin(self, logs: Logs | None = None) -> None:
        """Called once before the first epoch."""

    def on_train_end(self, logs: Logs | None = None) -> None:
        """Called once after the last epoch."""

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        """Called before epoch `epoch` (0-based)."""

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        """Called after epoch `epoch` with its mean training (and ``val_``) metrics."""

    def on_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        """Called before each training batch."""

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        """Called after each training batch with its metrics."""

    def on_train_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        self.on_batch_begin(batch, logs)

    def on_train_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        self.on_batch_end(batch, logs)

    def on_test_begin(self, logs: Logs | None = None) -> None:
        """Called before `evaluate` (or a validation in `fit`) runs its batches."""

    def on_test_end(self, logs: Logs | None = None) -> None:
        """Called after `evaluate` (or a validation in `fit`) ran its batches."""

    def on_test_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        """Called before each evaluation batch."""

    def on_test_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        """Called after each evaluation batch with its metrics."""

    def on_predict_begin(self, logs: Logs | None = None) -> None:
        """Called before `predict` runs its batches."""

    def on_predict_end(self, logs: Logs | None = None) -> None:
        """Called after `predict` ran its batches."""

    def on_predict_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        """Called before each prediction batch."""

    def on_predict_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        """Called after each prediction batch; ``logs["outputs"]`` are its outputs."""


class CallbackList:
    """Calls each callback in order."""

    def __init__(self, callbacks: Iterable[Callback], model: Any,
                 params: dict[str, Any]) -> None:
        self.callbacks = list(callbacks)
        for callback in self.callbacks:
            callback.set_model(model)
            callback.set_params(params)

    def __getattr__(self, event: str) -> Callable[..., None]:
        if not event.startswith("on_"):
            raise AttributeError(event)

        def dispatch(*args: Any) -> None:
            for callback in self.callbacks:
                getattr(callback, event)(*args)

        return dispatch


class History(Callback):
    """`epoch` (the epochs run) and `history` (metric name -> one value per epoch)."""

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self.epoch: list[int] = []
        self.history: dict[str, list[Any]] = {}

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


class EarlyStopping(Callback):
    """Stop when `monitor` has not improved by more than `min_delta` for `patience` epochs;
    `mode` ``"auto"`` maximizes metrics named like accuracies and minimizes the rest.
    `restore_best_weights` puts back the weights of the best epoch when stopping."""

    def __init__(self, monitor: str = "val_loss", min_delta: float = 0.0, patience: int = 0,
                 verbose: int = 0, mode: str = "auto", baseline: float | None = None,
                 restore_best_weights: bool = False) -> None:
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"EarlyStopping mode {mode} is unknown, fallback to auto mode.",
                          RuntimeWarning, stacklevel=2)
            mode = "auto"
        if mode == "auto":
            mode = "max" if "acc" in monitor else "min"
        self.monitor, self.patience, self.verbose = monitor, patience, verbose
        self.baseline, self.restore_best_weights = baseline, restore_best_weights
        self._better = np.greater if mode == "max" else np.less
        self.min_delta = abs(min_delta) if mode == "max" else -abs(min_delta)
        self.stopped_epoch = 0

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights: list[Any] | None = None
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = -np.inf if self._better is np.greater else np.inf

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs or {})}",
                          RuntimeWarning, stacklevel=2)
            return
        if self._better(current - self.min_delta, self.best):
            self.best = current
            self.wait = 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs: Logs | None = None) -> None:
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1:05d}: early stopping")


class BaseLogger(Callback):
    """Replaces each metric of ``params["metrics"]`` in the epoch logs by its mean over the
    epoch's batches, weighted by their sizes (`stateful_metrics` are taken as last reported)."""

    def __init__(self, stateful_metrics: Iterable[str] | None = None) -> None:
        super().__init__()
        self.stateful_metrics = set(stateful_metrics or [])

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        self.seen = 0
        self.totals: dict[str, float] = {}

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        logs = logs or {}
        size = logs.get("size", 0)
        self.seen += size
        for key, value in logs.items():
            if key in ("batch", "size"):
                continue
            if key in self.stateful_metrics:
                self.totals[key] = value
            else:
                self.totals[key] = self.totals.get(key, 0.0) + value * size

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if logs is None:
            return
        for key in self.params.get("metrics", []):
            if key in self.totals:
                logs[key] = self.totals[key] if key in self.stateful_metrics else \
                    self.totals[key] / self.seen


def format_logs(logs: Logs) -> str:
    return " - ".join(f"{key}: {value:.4f}" for key, value in logs.items()
                      if key not in ("batch", "size"))


class ProgbarLogger(Callback):
    """Prints ``Epoch i/n`` before each epoch (with `verbose` 1, or for several epochs) and
    ``seen/target - time - metrics`` after it, counting `count_mode` ``"samples"`` or
    ``"steps"``."""

    def __init__(self, count_mode: str = "samples",
                 stateful_metrics: Iterable[str] | None = None) -> None:
        super().__init__()
        if count_mode not in ("samples", "steps"):
            raise ValueError(f"Unknown `count_mode`: {count_mode}")
        self.use_steps = count_mode == "steps"
        self.stateful_metrics = set(stateful_metrics or [])

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        self.seen, self.started = 0, time.time()
        verbose, epochs = self.params.get("verbose", 1), self.params.get("epochs", 1)
        if verbose and (verbose == 1 or epochs > 1):
            print(f"Epoch {epoch + 1}/{epochs}")

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        self.seen += 1 if self.use_steps else (logs or {}).get("size", 0)

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if not self.params.get("verbose", 1):
            return
        target = self.params.get("steps" if self.use_steps else "samples") or self.seen
        print(f"{self.seen}/{target} - {time.time() - self.started:.0f}s - "
              + format_logs(logs or {}))


def _monitor_op(mode: str, monitor: str, kind: str) -> Callable[[Any, Any], Any]:
    """`np.greater` or `np.less` for `mode` (``"auto"``: greater for accuracies)."""
    if mode not in ("auto", "min", "max"):
        logging.warning(f"{kind} mode {mode} is unknown, fallback to auto mode.")
        mode = "auto"
    if mode == "auto":
        mode = "max" if "acc" in monitor or monitor.startswith("fmeasure") else "min"
    return np.greater if mode == "max" else np.less


class TerminateOnNaN(Callback):
    """Stops training when a batch's loss is NaN or infinite."""

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        loss = (logs or {}).get("loss")
        if loss is not None and not np.isfinite(loss):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


def _learning_rate(model: Any) -> Any:
    if not hasattr(model.optimizer, "lr"):
        raise ValueError('Optimizer must have a "lr" attribute.')
    return model.optimizer.lr


class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by `factor` (not below `min_lr`) once `monitor` has not
    improved by more than `min_delta` for `patience` epochs, then wait `cooldown` epochs; the
    epoch logs get the rate as ``lr``."""

    def __init__(self, monitor: str = "val_loss", factor: float = 0.1, patience: int = 10,
                 verbose: int = 0, mode: str = "auto", min_delta: float = 1e-4,
                 cooldown: int = 0, min_lr: float = 0, **kwargs: Any) -> None:
        super().__init__()
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0.")
        if "epsilon" in kwargs:
            min_delta = kwargs.pop("epsilon")
            logging.warning("`epsilon` argument is deprecated and will be removed, use "
                            "`min_delta` instead.")
        if kwargs:
            raise TypeError(f"Unexpected keyword arguments: {sorted(kwargs)}")
        self.monitor, self.factor, self.patience, self.verbose = monitor, factor, patience, \
            verbose
        self.mode, self.min_delta, self.cooldown, self.min_lr = mode, min_delta, cooldown, \
            min_lr
        self._reset()

    def _reset(self) -> None:
        better = _monitor_op(self.mode, self.monitor, "Learning Rate Plateau Reducing")
        if better is np.less:
            self.monitor_op = lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self._reset()

    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        logs = logs if logs is not None else {}
        rate = _learning_rate(self.model)
        logs["lr"] = float(backend.get_value(rate))
        current = logs.get(self.monitor)
        if current is None:
            logging.warning(f"Reduce LR on plateau conditioned on metric `{self.monitor}` which "
                            f"is not available. Available metrics are: {','.join(logs)}")
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old = logs["lr"]
                if old > self.min_lr:
                    new = max(old * self.factor, self.min_lr)
                    backend.set_value(rate, new)
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1:05d}: ReduceLROnPlateau reducing learning "
                              f"rate to {new}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class LearningRateScheduler(Callback):
    """Before each epoch, set the learning rate to ``schedule(epoch, lr)`` (or
    ``schedule(epoch)`` for a one-argument schedule); the epoch logs get it as ``lr``."""

    def __init__(self, schedule: Callable[..., Any], verbose: int = 0) -> None:
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        rate = _learning_rate(self.model)
        try:
            value = self.schedule(epoch, float(backend.get_value(rate)))
        except TypeError:  # a schedule of the epoch alone
            value = self.schedule(epoch)
        if not isinstance(value, (float, np.floating)):
            raise ValueError('The output of the "schedule" function should be float.')
        backend.set_value(rate, value)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1:05d}: LearningRateScheduler reducing learning rate to "
                  f"{value}.")

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if logs is not None:
            logs["lr"] = float(backend.get_value(_learning_rate(self.model)))


class ModelCheckpoint(Callback):
    """Save the model (`save_weights_only`: its weights) to `filepath` formatted with ``epoch``
    (from 1) and the logs, every `period` epochs or, with an integer `save_freq`, each time that
    many samples were trained; `save_best_only` saves only when `monitor` improved."""

    def __init__(self, filepath: str, monitor: str = "val_loss", verbose: int = 0,
                 save_best_only: bool = False, save_weights_only: bool = False,
                 mode: str = "auto", save_freq: Any = "epoch", **kwargs: Any) -> None:
        super().__init__()
        self.period = kwargs.pop("period", 1)
        if kwargs:
            raise TypeError(f"Unexpected keyword arguments: {sorted(kwargs)}")
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"Unrecognized save_freq: {save_freq}")
        self.filepath, self.monitor, self.verbose = os.fspath(filepath), monitor, verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        self.save_freq = save_freq
        self.monitor_op = _monitor_op(mode, monitor, "ModelCheckpoint")
        self.best = -np.inf if self.monitor_op is np.greater else np.inf
        self.epochs_since_last_save = 0
        self._samples_since_save = 0
        self._current_epoch = 0

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        self._current_epoch = epoch

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        if self.save_freq == "epoch":
            return
        self._samples_since_save += (logs or {}).get("size", 1)
        if self._samples_since_save >= self.save_freq:
            self._save(self._current_epoch, logs or {})
            self._samples_since_save = 0

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        self.epochs_since_last_save += 1
        if self.save_freq == "epoch" and self.epochs_since_last_save >= self.period:
            self._save(epoch, logs or {})

    def _save(self, epoch: int, logs: Logs) -> None:
        self.epochs_since_last_save = 0
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                logging.warning(f"Can save best model only with {self.monitor} available, "
                                "skipping.")
                return
            if not self.monitor_op(current, self.best):
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1:05d}: {self.monitor} did not improve from "
                          f"{self.best:0.5f}")
                return
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1:05d}: {self.monitor} improved from {self.best:0.5f} "
                      f"to {current:0.5f}, saving model to {path}")
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1:05d}: saving model to {path}")
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)


def _csv_value(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, Iterable) and not (isinstance(value, np.ndarray) and value.ndim == 0):
        return f'"[{", ".join(map(str, value))}]"'
    return value


class CSVLogger(Callback):
    """Append one row per epoch to the CSV file `filename`: ``epoch`` and the logs' keys in
    sorted order (a header first unless appending to a file that has content)."""

    def __init__(self, filename: str, separator: str = ",", append: bool = False) -> None:
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self.keys: list[str] | None = None
        self.writer: Any = None
        self._file: Any = None

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self.append_header = not (self.append and os.path.exists(self.filename)
                                  and os.path.getsize(self.filename) > 0)
        self._file = open(self.filename, "a" if self.append else "w",  # noqa: SIM115
                          newline="")
        self.keys, self.writer = None, None

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
        if self.model.stop_training:  # a stopped epoch may lack the validation metrics
            logs = {key: logs.get(key, "NA") for key in self.keys}
        if self.writer is None:
            self.writer = csv.DictWriter(self._file, fieldnames=["epoch", *self.keys],
                                         delimiter=self.sep, lineterminator="\n")
            if self.append_header:
                self.writer.writeheader()
        row = collections.OrderedDict(epoch=epoch)
        row.update((key, _csv_value(logs[key])) for key in self.keys)
        self.writer.writerow(row)
        self._file.flush()

    def on_train_end(self, logs: Logs | None = None) -> None:
        self._file.close()
        self.writer = None


class TensorBoard(Callback):
    """The logs as TensorBoard scalars in an event file under `log_dir` (see the module
    docstring); `update_freq` is ``"epoch"``, ``"batch"`` or a number of samples."""

    def __init__(self, log_dir: str = "./logs", histogram_freq: int = 0, batch_size: int = 32,
                 write_graph: bool = True, write_grads: bool = False,
                 write_images: bool = False, embeddings_freq: int = 0,
                 embeddings_layer_names: Any = None, embeddings_metadata: Any = None,
                 embeddings_data: Any = None, update_freq: Any = "epoch",
                 profile_batch: int = 2) -> None:
        super().__init__()
        if histogram_freq or write_grads or write_images or embeddings_freq:
            raise ValueError("tensorweave's Keras TensorBoard writes scalars (and the graph) "
                             "only: histogram_freq, write_grads, write_images and "
                             "embeddings_freq must be off")
        self.log_dir, self.write_graph = os.fspath(log_dir), write_graph
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self.writer: FileWriter | None = None

    def set_model(self, model: Any) -> None:
        super().set_model(model)
        if self.writer is None:
            self.writer = FileWriter(self.log_dir, model.graph if self.write_graph else None)

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self._samples_seen = 0
        self._samples_at_last_write = 0
        self._batches_seen = 0

    def _write(self, step: int, logs: Logs) -> None:
        summary = Summary()
        for name, value in logs.items():
            summary.value.add(tag=name, simple_value=float(np.asarray(value).item()))
        self.writer.add_summary(summary, step)
        self.writer.flush()

    @staticmethod
    def _scalars(prefix: str, logs: Logs | None) -> Logs:
        return {prefix + key: value for key, value in (logs or {}).items()
                if key not in ("batch", "size", "num_steps")}

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        self._samples_seen += (logs or {}).get("size", 1)
        if self.update_freq != "epoch" and \
                self._samples_seen - self._samples_at_last_write >= self.update_freq:
            self._write(self._batches_seen, self._scalars("batch_", logs))
            self._samples_at_last_write = self._samples_seen
        self._batches_seen += 1

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        step = epoch if self.update_freq == "epoch" else self._samples_seen
        self._write(step, self._scalars("epoch_", logs))

    def on_train_end(self, logs: Logs | None = None) -> None:
        self.writer.close()
        self.writer = None


class LambdaCallback(Callback):
    """A callback from functions: ``on_epoch_begin(epoch, logs)``, ``on_epoch_end(epoch,
    logs)``, ``on_batch_begin(batch, logs)``, ``on_batch_end(batch, logs)``,
    ``on_train_begin(logs)``, ``on_train_end(logs)``, and any other hook by keyword."""

    def __init__(self, on_epoch_begin: Callable[..., Any] | None = None,
                 on_epoch_end: Callable[..., Any] | None = None,
                 on_batch_begin: Callable[..., Any] | None = None,
                 on_batch_end: Callable[..., Any] | None = None,
                 on_train_begin: Callable[..., Any] | None = None,
                 on_train_end: Callable[..., Any] | None = None, **kwargs: Any) -> None:
        super().__init__()
        given = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                 "on_batch_begin": on_batch_begin, "on_batch_end": on_batch_end,
                 "on_train_begin": on_train_begin, "on_train_end": on_train_end, **kwargs}
        for event, fn in given.items():
            if fn is not None:
                setattr(self, event, fn)
