"""``tw.estimator.experimental``: the early stopping hooks
(`tensorweave.estimator.early_stopping`), `InMemoryEvaluatorHook`
(`tensorweave.estimator.hooks`) and the raw supervised input receiver fn of TRAIN/EVAL exports
(`tensorweave.estimator.export_all`), under TF 1.15's names."""

from tensorweave.estimator.early_stopping import (
    make_early_stopping_hook,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from tensorweave.estimator.export_all import build_raw_supervised_input_receiver_fn
from tensorweave.estimator.hooks import InMemoryEvaluatorHook

__all__ = ["InMemoryEvaluatorHook", "build_raw_supervised_input_receiver_fn",
           "make_early_stopping_hook", "stop_if_higher_hook", "stop_if_lower_hook",
           "stop_if_no_decrease_hook", "stop_if_no_increase_hook"]
