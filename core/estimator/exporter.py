"""Exporters: what `train_and_evaluate` exports after an evaluation, as ``tf.estimator``'s
`Exporter`, `LatestExporter`, `BestExporter` and `FinalExporter`.

Contract: an `Exporter` has a `name` and ``export(estimator, export_path, checkpoint_path,
eval_result, is_the_final_export)``, which writes (or not) a SavedModel under `export_path`
and returns its path (bytes) or ``None``. `train_and_evaluate` calls every exporter of the
`EvalSpec` after each evaluation with ``export_path = <model_dir>/export/<name>``, the
evaluated checkpoint, its metrics and whether the evaluated global step reached
``TrainSpec.max_steps`` (`export_eval_result`).

- `LatestExporter` exports every time, then keeps the `exports_to_keep` newest exports
  (``None``: all).
- `BestExporter` exports when ``compare_fn(best_eval_result, current_eval_result)`` says the
  current metrics beat the best so far (default `_loss_smaller`: a smaller ``loss``), then
  keeps `exports_to_keep` exports. The first time it sees an estimator it recovers the best
  result from the event files matching `event_file_pattern` under its `model_dir` (by default
  the evaluations' summaries), so a restarted job does not export a worse model.
- `FinalExporter` exports only the final evaluation.

Exports are directories named by a Unix timestamp (`Estimator.export_saved_model`); the
garbage collection removes the oldest of those and leaves anything else alone.
"""

from __future__ import annotations

import abc
import glob
import logging
import os
import shutil
from collections.abc import Callable
from typing import Any

from tensorweave.estimator.model_fn import LOSS_METRIC_KEY
from tensorweave.estimator.util import fn_args
from tensorweave.formats.event_file import summary_iterator

__all__ = ["BestExporter", "Exporter", "FinalExporter", "LatestExporter"]

_log = logging.getLogger(__name__)

EXPORT_DIRECTORY = "export"


class Exporter(abc.ABC):
    """Writes a model for serving after an evaluation; see the module docstring."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The exporter's name: its exports go to ``<model_dir>/export/<name>``."""

    @abc.abstractmethod
    def export(self, estimator: Any, export_path: str, checkpoint_path: str,
               eval_result: dict[str, Any], is_the_final_export: bool) -> bytes | None:
        """Export `checkpoint_path` under `export_path`; the export's path or ``None``."""


class _SavedModelExporter(Exporter):
    """Exports every time it is asked: one `Estimator.export_saved_model`."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable[[], Any],
                 assets_extra: dict[str, str] | None = None, as_text: bool = False) -> None:
        self._name = name
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    @property
    def name(self) -> str:
        return self._name

    def export(self, estimator: Any, export_path: str, checkpoint_path: str,
               eval_result: dict[str, Any], is_the_final_export: bool) -> bytes:
        return estimator.export_saved_model(
            export_path, self._serving_input_receiver_fn, assets_extra=self._assets_extra,
            as_text=self._as_text, checkpoint_path=checkpoint_path)


def _check_exports_to_keep(exports_to_keep: int | None) -> None:
    if exports_to_keep is not None and exports_to_keep <= 0:
        raise ValueError("`exports_to_keep`, if provided, must be a positive number. Got "
                         f"{exports_to_keep}")


def _garbage_collect_exports(export_dir_base: str, exports_to_keep: int | None) -> None:
    """Delete all but the `exports_to_keep` newest timestamped exports."""
    if exports_to_keep is None or not os.path.isdir(export_dir_base):
        return
    versions = sorted(int(entry) for entry in os.listdir(export_dir_base) if entry.isdigit())
    for version in versions[:-exports_to_keep]:
        shutil.rmtree(os.path.join(export_dir_base, str(version)), ignore_errors=True)


class LatestExporter(Exporter):
    """Exports after every evaluation and keeps the newest `exports_to_keep`."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable[[], Any],
                 assets_extra: dict[str, str] | None = None, as_text: bool = False,
                 exports_to_keep: int | None = 5) -> None:
        self._saved_model_exporter = _SavedModelExporter(name, serving_input_receiver_fn,
                                                         assets_extra, as_text)
        _check_exports_to_keep(exports_to_keep)
        self._exports_to_keep = exports_to_keep

    @property
    def name(self) -> str:
        return self._saved_model_exporter.name

    def export(self, estimator: Any, export_path: str, checkpoint_path: str,
               eval_result: dict[str, Any], is_the_final_export: bool) -> bytes:
        result = self._saved_model_exporter.export(estimator, export_path, checkpoint_path,
                                                   eval_result, is_the_final_export)
        _garbage_collect_exports(export_path, self._exports_to_keep)
        return result


def _loss_smaller(best_eval_result: dict[str, Any],
                  current_eval_result: dict[str, Any]) -> bool:
    """Whether `current_eval_result` has a smaller ``loss`` than `best_eval_result`."""
    for result, which in ((best_eval_result, "best_eval_result"),
                          (current_eval_result, "current_eval_result")):
        if not result or LOSS_METRIC_KEY not in result:
            raise ValueError(f"{which} cannot be empty or no loss is found in it.")
    return best_eval_result[LOSS_METRIC_KEY] > current_eval_result[LOSS_METRIC_KEY]


def _verify_compare_fn_args(compare_fn: Callable[..., bool]) -> None:
    args = set(fn_args(compare_fn))
    missing = {"best_eval_result", "current_eval_result"} - args
    if missing:
        raise ValueError(f"compare_fn ({compare_fn}) must include {sorted(missing)} "
                         "argument(s).")
    extra = args - {"best_eval_result", "current_eval_result"}
    if extra:
        raise ValueError(f"compare_fn ({compare_fn}) has following not expected args: "
                         f"{sorted(extra)}")


def read_eval_results(event_file_glob: str) -> list[tuple[int, dict[str, float]]]:
    """``(step, {tag: simple_value})`` of each summary event in the files matching
    `event_file_glob`, in file then record order; events without scalars are left out."""
    results = []
    for path in sorted(glob.glob(event_file_glob)):
        for event in summary_iterator(path):
            scalars = {value.tag: value.simple_value for value in event.summary.value
                       if value.HasField("simple_value")}
            if scalars:
                results.append((event.step, scalars))
    return results


class BestExporter(Exporter):
    """Exports when an evaluation beats the best so far; see the module docstring."""

    def __init__(self, name: str = "best_exporter",
                 serving_input_receiver_fn: Callable[[], Any] | None = None,
                 event_file_pattern: str | None = "eval/*.tfevents.*",
                 compare_fn: Callable[..., bool] = _loss_smaller,
                 assets_extra: dict[str, str] | None = None, as_text: bool = False,
                 exports_to_keep: int | None = 5) -> None:
        if not callable(compare_fn):
            raise ValueError("`compare_fn` must not be None.")
        _verify_compare_fn_args(compare_fn)
        _check_exports_to_keep(exports_to_keep)
        self._saved_model_exporter = _SavedModelExporter(name, serving_input_receiver_fn,
                                                         assets_extra, as_text)
        self._event_file_pattern = event_file_pattern
        self._model_dir: str | None = None
        self._best_eval_result: dict[str, Any] | None = None
        self._compare_fn = compare_fn
        self._exports_to_keep = exports_to_keep

    @property
    def name(self) -> str:
        return self._saved_model_exporter.name

    def export(self, estimator: Any, export_path: str, checkpoint_path: str,
               eval_result: dict[str, Any], is_the_final_export: bool) -> bytes | None:
        if self._model_dir != estimator.model_dir and self._event_file_pattern:
            _log.info("Loading best metric from event files.")
            self._model_dir = estimator.model_dir
            self._best_eval_result = self._best_in_event_files(
                os.path.join(self._model_dir, self._event_file_pattern))
        if self._best_eval_result is not None and not self._compare_fn(
                best_eval_result=self._best_eval_result, current_eval_result=eval_result):
            return None
        _log.info("Performing best model export.")
        self._best_eval_result = eval_result
        result = self._saved_model_exporter.export(estimator, export_path, checkpoint_path,
                                                   eval_result, is_the_final_export)
        _garbage_collect_exports(export_path, self._exports_to_keep)
        return result

    def _best_in_event_files(self, event_file_glob: str) -> dict[str, Any] | None:
        best = None
        for _, result in read_eval_results(event_file_glob):
            if best is None or self._compare_fn(best_eval_result=best,
                                                current_eval_result=result):
                best = result
        return best


class FinalExporter(Exporter):
    """Exports only the final evaluation, the one at ``TrainSpec.max_steps``."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable[[], Any],
                 assets_extra: dict[str, str] | None = None, as_text: bool = False) -> None:
        self._saved_model_exporter = _SavedModelExporter(name, serving_input_receiver_fn,
                                                         assets_extra, as_text)

    @property
    def name(self) -> str:
        return self._saved_model_exporter.name

    def export(self, estimator: Any, export_path: str, checkpoint_path: str,
               eval_result: dict[str, Any], is_the_final_export: bool) -> bytes | None:
        if not is_the_final_export:
            return None
        _log.info("Performing the final export in the end of training.")
        return self._saved_model_exporter.export(estimator, export_path, checkpoint_path,
                                                 eval_result, is_the_final_export)


def check_exporters(exporters: Any) -> tuple[Exporter, ...]:
    """`EvalSpec`'s `exporters` as a tuple: `Exporter`s with distinct, non-empty string
    names (``TypeError``/``ValueError`` otherwise); one exporter may be given alone."""
    if exporters is None:
        return ()
    if not isinstance(exporters, (list, tuple)):
        exporters = [exporters]
    names: set[str] = set()
    for exporter in exporters:
        if not isinstance(exporter, Exporter):
            raise TypeError(f"`exporters` must be an Exporter, given {exporter}")
        all_names = [e.name for e in exporters]
        if not exporter.name:
            raise ValueError("An Exporter cannot have a name that is `None` or empty. All "
                             f"exporter names: {all_names}")
        if not isinstance(exporter.name, str):
            raise ValueError(f"An Exporter must have a string name. Given: "
                             f"{type(exporter.name)}")
        if exporter.name in names:
            raise ValueError("`exporters` must have unique names. Such a name cannot be `None`."
                             f" All exporter names: {all_names}")
        names.add(exporter.name)
    return tuple(exporters)


def export_eval_result(estimator: Any, exporters: tuple[Exporter, ...], checkpoint_path: str,
                       eval_result: dict[str, Any], is_the_final_export: bool) -> list[Any]:
    """Run each exporter on one evaluation, into ``<model_dir>/export/<name>``; their
    results."""
    export_dir_base = os.path.join(estimator.model_dir, EXPORT_DIRECTORY)
    return [exporter.export(estimator, os.path.join(export_dir_base, exporter.name),
                            checkpoint_path, eval_result, is_the_final_export)
            for exporter in exporters]
