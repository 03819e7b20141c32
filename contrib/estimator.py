"""``tf.contrib.estimator``'s TF 1.15 subset: `add_metrics`, `forward_features`, the early
stopping hooks, `InMemoryEvaluatorHook`, and exporting TRAIN/EVAL/PREDICT graphs
(`export_all_saved_models`, `export_saved_model_for_mode`, the supervised input receiver fns);
each is the ``tw.estimator`` implementation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.estimator.early_stopping import (
    make_early_stopping_hook,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.export_all import (
    build_raw_supervised_input_receiver_fn,
    build_supervised_input_receiver_fn_from_input_fn,
)
from tensorweave.estimator.extenders import add_metrics, forward_features
from tensorweave.estimator.hooks import InMemoryEvaluatorHook
from tensorweave.estimator.model_fn import ModeKeys

__all__ = ["InMemoryEvaluatorHook", "add_metrics", "build_raw_supervised_input_receiver_fn",
           "build_supervised_input_receiver_fn_from_input_fn", "export_all_saved_models",
           "export_saved_model_for_mode", "forward_features", "make_early_stopping_hook",
           "stop_if_higher_hook", "stop_if_lower_hook", "stop_if_no_decrease_hook",
           "stop_if_no_increase_hook"]


def export_all_saved_models(estimator: Estimator, export_dir_base: str | bytes,
                            input_receiver_fn_map: dict[str, Callable[[], Any]],
                            assets_extra: dict[str, str] | None = None, as_text: bool = False,
                            checkpoint_path: str | None = None) -> bytes:
    """`Estimator.experimental_export_all_saved_models` as a function."""
    return estimator.experimental_export_all_saved_models(
        export_dir_base, input_receiver_fn_map, assets_extra=assets_extra, as_text=as_text,
        checkpoint_path=checkpoint_path)


def export_saved_model_for_mode(estimator: Estimator, export_dir_base: str | bytes,
                                input_receiver_fn: Callable[[], Any],
                                assets_extra: dict[str, str] | None = None,
                                as_text: bool = False, checkpoint_path: str | None = None,
                                mode: str = ModeKeys.PREDICT) -> bytes:
    """One mode's graph as a SavedModel: `Estimator.export_saved_model` with
    ``experimental_mode``."""
    return estimator.export_saved_model(export_dir_base, input_receiver_fn,
                                        assets_extra=assets_extra, as_text=as_text,
                                        checkpoint_path=checkpoint_path,
                                        experimental_mode=mode)
