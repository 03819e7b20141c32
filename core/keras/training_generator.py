"""The step loops of ``tw.keras.Model``: `fit`, `evaluate` and `predict` over batches that a
``tw.data.Dataset``, a Python generator or a ``keras.utils.Sequence`` yields (see
`data_adapter`), as TF 1.15's graph-mode Keras runs them.

Contract: an epoch is `steps` batches, or, for a dataset given without `steps`, one full pass:
its iterator is restarted at the start of every call and, without `steps`, of every epoch (with
`steps` it runs on across epochs). Running out of batches before `steps` (or a generator that
stops) logs TF's warning and stops training after that epoch; a dataset that repeats forever
needs `steps`, a generator always does; a Sequence's steps default to its length, and `fit`
draws its batches in a new random order per pass when `shuffle`. Validation data (arrays, a
dataset restarted before each validation, a Sequence started again, or a generator with
`validation_steps`) is evaluated after each epoch unless
training was stopped. An epoch's loss is the mean of its batch losses and each metric the mean
over its samples (TF's stateful metrics); `predict` concatenates the batch outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from tensorweave.keras.callbacks import Callback, CallbackList, History
from tensorweave.keras.data_adapter import (
    INFINITE,
    Batch,
    SequenceBatches,
    cardinality,
    check_batch_size,
    check_dataset_arguments,
    check_generator_arguments,
    check_not_iterator,
    generator_batch,
    is_dataset,
    is_generator,
    is_sequence,
)
from tensorweave.platform import tf_logging as logging

__all__ = ["evaluate", "fit", "is_step_input", "predict", "validator"]


def is_step_input(data: Any) -> bool:
    """Whether `data` is read batch by batch here (a dataset or a generator)."""
    check_not_iterator(data)
    return is_dataset(data) or is_generator(data) or is_sequence(data)


@attrs.define
class _Source:
    """The batches of one call: `restart` goes back to the start (a no-op for generators)."""

    next: Callable[[], Batch | None]
    restart: Callable[[], None]
    steps: int | None
    steps_name: str
    from_dataset: bool


def _source(model: Any, data: Any, steps: int | None, steps_name: str,
            missing_steps: str, shuffle: bool = False) -> _Source:
    if is_dataset(data):
        if steps is None and cardinality(data) == INFINITE:
            raise ValueError("When passing an infinitely repeating dataset, you must specify "
                             f"the `{steps_name}` argument.")
        batches = model._dataset_batches(data)
        return _Source(batches.next, batches.restart, steps, steps_name, True)
    if is_sequence(data):
        sequence = SequenceBatches(data, shuffle)
        return _Source(sequence.next, sequence.restart, steps or len(data), steps_name, False)
    if steps is None:
        raise ValueError(missing_steps)

    def next_batch() -> Batch | None:
        try:
            return generator_batch(next(data))
        except StopIteration:
            return None

    return _Source(next_batch, lambda: None, steps, steps_name, False)


def _ran_out(model: Any, source: _Source, epochs: int) -> None:
    model.stop_training = True
    wanted = source.steps * epochs
    if source.from_dataset:
        logging.warning("Your dataset ran out of data; interrupting training. Make sure that "
                        f"your dataset can generate at least `{source.steps_name} * epochs` "
                        f"batches (in this case, {wanted} batches). You may need to use the "
                        "repeat() function when building your dataset.")
    else:
        logging.warning("Your dataset iterator ran out of data; interrupting training. Make "
                        f"sure that your iterator can generate at least `{source.steps_name} * "
                        f"epochs` batches (in this case, {wanted} batches). You may need to use "
                        "the repeat() function when building your dataset.")


def _run_pass(model: Any, source: _Source, mode: str, epochs: int = 1,
              callbacks: CallbackList | None = None,
              class_weight: Any = None) -> tuple[list[Any], int]:
    """One epoch of `mode` (``train``, ``test``, ``predict``): the results and the steps run;
    `callbacks` see the mode's batch hooks (and, testing or predicting, its begin and end)."""
    loss, totals, samples, outputs = 0.0, None, 0, []
    step = 0
    if callbacks is not None and mode != "train":
        getattr(callbacks, f"on_{mode}_begin")()
    while source.steps is None or step < source.steps:
        batch = source.next()
        if batch is None:
            if source.steps is not None:
                _ran_out(model, source, epochs)
            break
        if callbacks is not None:
            getattr(callbacks, f"on_{mode}_batch_begin")(step, {"batch": step,
                                                                "size": _size(batch)})
        values, size = model._batch_step(batch, mode, class_weight)
        step += 1
        if mode == "predict":
            outputs.append(values)
            if callbacks is not None:
                callbacks.on_predict_batch_end(step - 1, {"batch": step - 1, "size": size,
                                                          "outputs": values})
            continue
        loss += values[0]
        weighted = np.asarray(values[1:], np.float64) * size
        totals = weighted if totals is None else totals + weighted
        samples += size
        if callbacks is not None:
            getattr(callbacks, f"on_{mode}_batch_end")(step - 1, {
                "batch": step - 1, "size": size, **dict(zip(model.metrics_names, values))})
            if mode == "train" and model.stop_training:
                break
    if callbacks is not None and mode != "train":
        getattr(callbacks, f"on_{mode}_end")()
    if mode == "predict":
        return model._concatenate_outputs(outputs), step
    if not step:
        raise ValueError("Empty training data.")
    return [loss / step, *(totals / samples)], step


def _size(batch: Batch) -> int:
    x = batch[0]
    first = next(iter(x.values())) if isinstance(x, dict) else \
        x[0] if isinstance(x, (list, tuple)) else x
    return len(first)


def _check_arguments(data: Any, y: Any, batch_size: Any, sample_weight: Any,
                     validation_split: float = 0.0) -> None:
    check_batch_size(batch_size, data)
    if is_dataset(data):
        check_dataset_arguments(data, y, sample_weight, validation_split)
    else:
        check_generator_arguments(y, sample_weight, validation_split)


def validator(model: Any, data: Any, steps: int | None, batch_size: int
              ) -> tuple[Callable[[CallbackList | None], list[float]] | None, int | None]:
    """What evaluates `fit`'s `validation_data` after an epoch (None without it), and the
    number of validation samples when it is arrays (evaluated `batch_size` at a time)."""
    if data is None:
        if steps:
            raise ValueError("`validation_steps` should not be specified if `validation_data` "
                             "is None.")
        return None, None
    if not is_step_input(data):
        return model._array_validator(data, batch_size)
    if is_generator(data) and not steps:
        raise ValueError("Please specify the `validation_steps` argument.")
    source = _source(model, data, steps, "validation_steps", "")

    def validate(callbacks: CallbackList | None = None) -> list[float]:
        source.restart()
        return _run_pass(model, source, "test", callbacks=callbacks)[0]

    return validate, None


def fit(model: Any, x: Any, y: Any, batch_size: Any, epochs: int, verbose: int,
        callbacks: list[Callback] | None, validation_split: float, validation_data: Any,
        sample_weight: Any, initial_epoch: int, steps_per_epoch: int | None,
        validation_steps: int | None, validation_freq: Any, class_weight: Any = None,
        shuffle: bool = True) -> History:
    """`Model.fit` on a dataset, a generator or a Sequence (see the module docstring)."""
    _check_arguments(x, y, batch_size, sample_weight, validation_split)
    source = _source(model, x, steps_per_epoch, "steps_per_epoch",
                     "Please specify the number of steps via the `steps_per_epoch` argument.",
                     shuffle)
    validate, _ = validator(model, validation_data, validation_steps, 32)
    steps = source.steps
    if steps is None and source.from_dataset and cardinality(x) >= 0:
        steps = cardinality(x)
    source.restart()

    def run_epoch(epoch: int, callback_list: CallbackList) -> tuple[list[float], str]:
        if source.steps is None and epoch > initial_epoch:
            source.restart()
        values, done = _run_pass(model, source, "train", epochs, callback_list, class_weight)
        return values, f"{done}/{steps or done}"

    banner = f"Train on {steps} steps" if source.from_dataset and steps is not None else ""
    return model._fit_epochs({"batch_size": None, "steps": steps, "samples": None},
                             callbacks, epochs, initial_epoch, verbose, run_epoch, validate,
                             banner, validation_freq)


def evaluate(model: Any, x: Any, y: Any, batch_size: Any, sample_weight: Any,
             steps: int | None, callbacks: CallbackList | None = None
             ) -> tuple[list[float], int]:
    """`Model.evaluate` on a dataset or a generator: ``[loss, *metrics]`` and the steps run."""
    _check_arguments(x, y, batch_size, sample_weight)
    source = _source(model, x, steps, "steps",
                     "Please specify the number of steps via the `steps` argument.")
    source.restart()
    return _run_pass(model, source, "test", callbacks=callbacks)


def predict(model: Any, x: Any, batch_size: Any, steps: int | None,
            callbacks: CallbackList | None = None) -> list[np.ndarray]:
    """`Model.predict` on a dataset or a generator: one array per output."""
    check_batch_size(batch_size, x)
    source = _source(model, x, steps, "steps",
                     "Please specify the number of steps via the `steps` argument.")
    source.restart()
    return _run_pass(model, source, "predict", callbacks=callbacks)[0]
