"""``tw.keras.callbacks``: hooks into `Model.fit`. `Callback` is the base (every method a
no-op); `History` records the per-epoch logs (every fit gets one, returned by `fit` and set as
``model.history``); `EarlyStopping` stops training when a monitored quantity has stopped
improving for `patience` epochs; `LambdaCallback` wraps plain functions."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Callback", "CallbackList", "EarlyStopping", "History", "LambdaCallback"]

Logs = dict[str, Any]


class Callback:
    """The base class: `model` and `params` are set by `fit` before ``on_train_begin``."""

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

    on_train_batch_begin = on_batch_begin
    on_train_batch_end = on_batch_end


class CallbackList:
    """Calls each callback in order."""

    def __init__(self, callbacks: list[Callback], model: Any, params: dict[str, Any]) -> None:
        self.callbacks = callbacks
        for callback in callbacks:
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


class LambdaCallback(Callback):
    """A callback from functions: ``on_epoch_begin(epoch, logs)``, ``on_epoch_end(epoch,
    logs)``, ``on_batch_begin(batch, logs)``, ``on_batch_end(batch, logs)``,
    ``on_train_begin(logs)``, ``on_train_end(logs)``."""

    def __init__(self, on_epoch_begin: Callable[..., Any] | None = None,
                 on_epoch_end: Callable[..., Any] | None = None,
                 on_batch_begin: Callable[..., Any] | None = None,
                 on_batch_end: Callable[..., Any] | None = None,
                 on_train_begin: Callable[..., Any] | None = None,
                 on_train_end: Callable[..., Any] | None = None) -> None:
        super().__init__()
        given = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                 "on_batch_begin": on_batch_begin, "on_batch_end": on_batch_end,
                 "on_train_begin": on_train_begin, "on_train_end": on_train_end}
        for event, fn in given.items():
            if fn is not None:
                setattr(self, event, fn)
