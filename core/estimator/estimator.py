"""`Estimator`: trains, evaluates and predicts with a `model_fn`, as
``tf.compat.v1.estimator.Estimator``.

Contract: every call builds a fresh graph (seeded with ``config.tf_random_seed``, with a
global step), calls ``input_fn`` (with the ``mode``/``params``/``config`` it names) then
``model_fn(features, labels, mode, params, config)`` (the last four only if named; ``features``
is required) and runs the resulting `EstimatorSpec`.

- `train` runs ``train_op`` in a `MonitoredTrainingSession` on `model_dir`: it restores the
  newest checkpoint (so ``steps`` adds to the saved global step, and a ``max_steps`` already
  reached returns at once without building anything), saves checkpoints as the `RunConfig`
  says (a `CheckpointSaverHook`, which also carries `saving_listeners`) and at the end, writes
  summaries (a ``loss`` scalar is added if the model made none) and stops at ``steps``/
  ``max_steps``, at the end of the input, or when a hook asks; a NaN loss raises
  `NanLossDuringTrainingError`.
- `evaluate` restores ``checkpoint_path`` (default: the newest; none: freshly initialized
  variables), runs the metrics' update ops for ``steps`` batches or to the end of the input,
  and returns the metrics, ``loss`` (the mean of the batch losses) and ``global_step``; the
  numeric results are also written as summaries to ``model_dir/eval`` (``eval_<name>``).
- `predict` yields the evaluated predictions one example at a time (a dict per example when
  ``predictions`` is a dict, optionally narrowed to ``predict_keys``), or per batch with
  ``yield_single_examples=False``.

- `export_saved_model` (TF1 alias `export_savedmodel`) calls ``serving_input_receiver_fn`` for
  a `ServingInputReceiver`, builds the PREDICT graph on its features, restores
  ``checkpoint_path`` (default: the newest; else the warm-start checkpoint; else
  ``ValueError``) with the scaffold's saver and writes a SavedModel tagged ``serve`` whose
  signatures come from the spec's ``export_outputs`` (`tensorweave.estimator.export`) and
  whose main op is the scaffold's local init op. It is written to ``temp-<seconds>`` and
  renamed to ``<export_dir_base>/<unix seconds>``, whose path it returns as bytes;
  ``assets_extra`` files are copied under its ``assets.extra/``. With ``experimental_mode``
  TRAIN or EVAL it exports that mode's graph instead, as
  `experimental_export_all_saved_models` does for several modes at once
  (`tensorweave.estimator.export_all`).

`warm_start_from` (a checkpoint path or directory, or `WarmStartSettings`) initializes matching
variables from that checkpoint whenever a model is initialized rather than restored from
`model_dir`.

In a ps/worker cluster (``TF_CONFIG``, see `RunConfig`) the default device function is
`replica_device_setter`: variables on the ps tasks, everything else on this task. `train`
opens its session on ``config.master`` as ``config.is_chief``: the chief initializes or
restores the model and alone writes checkpoints and summaries; other workers wait for it.
Not implemented: distribution strategies, and TF's move of the summaries from a legacy
``master`` task to worker 0.
"""

from __future__ import annotations

import copy
import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

from tensorweave.api.control_flow_ops import group
from tensorweave.api.metrics import mean
from tensorweave.api.random_ops import set_random_seed
from tensorweave.api.summary_ops import scalar
from tensorweave.engine import errors
from tensorweave.engine.graph.graph import Graph, GraphKeys, Tensor, get_default_graph
from tensorweave.estimator import evaluation, export_all
from tensorweave.estimator.model_fn import LOSS_METRIC_KEY, EstimatorSpec, ModeKeys
from tensorweave.estimator.run_config import RunConfig
from tensorweave.estimator.util import fn_args, parse_input_fn_result
from tensorweave.estimator.warm_starting import (
    WarmStartSettings,
    warm_start_scaffold,
    warm_start_settings,
)
from tensorweave.train.basic_session_run_hooks import (
    CheckpointSaverHook,
    CheckpointSaverListener,
    LoggingTensorHook,
    NanTensorHook,
    StopAtStepHook,
)
from tensorweave.train.checkpoint_management import (
    latest_checkpoint,
    list_variables,
    load_variable,
)
from tensorweave.train.device_setter import STANDARD_PS_OPS, replica_device_setter
from tensorweave.train.monitored_session import (
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
    Scaffold,
)
from tensorweave.train.saver import Saver
from tensorweave.train.session_run_hook import SessionRunHook
from tensorweave.train.training_util import create_global_step, get_global_step

__all__ = ["Estimator"]

_log = logging.getLogger(__name__)

_VALID_MODEL_FN_ARGS = {"features", "labels", "mode", "params", "self", "config"}


class Estimator:
    """Trains, evaluates and predicts with a `model_fn`; see the module docstring."""

    def __init__(self, model_fn: Callable[..., EstimatorSpec], model_dir: Any = None,
                 config: RunConfig | None = None, params: dict[str, Any] | None = None,
                 warm_start_from: str | WarmStartSettings | None = None) -> None:
        _assert_members_are_not_overridden(self)
        self._config = _config_with_model_dir(config, model_dir)
        self._model_dir: str = self._config.model_dir
        self._session_config = self._config.session_config
        self._device_fn = self._config.device_fn or _replica_device_setter(self._config)
        if model_fn is None:
            raise ValueError("model_fn must be provided to Estimator.")
        _verify_model_fn_args(model_fn, params)
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._warm_start_settings = warm_start_settings(warm_start_from)

    @property
    def model_dir(self) -> str:
        return self._model_dir

    @property
    def config(self) -> RunConfig:
        return copy.deepcopy(self._config)

    @property
    def params(self) -> dict[str, Any]:
        return copy.deepcopy(self._params)

    @property
    def model_fn(self) -> Callable[..., EstimatorSpec]:
        """The `model_fn` bound to this estimator's params: ``(features, labels, mode,
        config)``."""
        def public_model_fn(features: Any, labels: Any, mode: str,
                            config: RunConfig) -> EstimatorSpec:
            return self._call_model_fn(features, labels, mode, config)

        return public_model_fn

    # -- checkpoints --------------------------------------------------------------------------

    def get_variable_value(self, name: str) -> Any:
        """The value of variable `name` in the newest checkpoint, as a numpy array."""
        _check_checkpoint_available(self._model_dir)
        return load_variable(self._model_dir, name)

    def get_variable_names(self) -> list[str]:
        """The names of the variables in the newest checkpoint."""
        _check_checkpoint_available(self._model_dir)
        return [name for name, _ in list_variables(self._model_dir)]

    def latest_checkpoint(self) -> str | None:
        """The path of the newest checkpoint in `model_dir`, or ``None``."""
        return latest_checkpoint(self._model_dir)

    def eval_dir(self, name: str | None = None) -> str:
        """Where `evaluate` writes its summaries."""
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    # -- train --------------------------------------------------------------------------------

    def train(self, input_fn: Callable[..., Any], hooks: Any = None, steps: int | None = None,
              max_steps: int | None = None, saving_listeners: Any = None) -> Estimator:
        """Train for `steps` more steps, up to the global step `max_steps`, or to the end of
        the input; returns ``self``."""
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None and max_steps <= _global_step_of_checkpoint(self._model_dir):
            _log.info("Skipping training since max_steps has already saved.")
            return self
        hooks = _check_hooks_type(hooks)
        if steps is not None or max_steps is not None:
            hooks.append(StopAtStepHook(steps, max_steps))
        listeners = _check_listeners_type(saving_listeners)
        loss = self._train_model(input_fn, hooks, listeners)
        _log.info("Loss for final step: %s.", loss)
        return self

    def _train_model(self, input_fn: Callable[..., Any], hooks: list[SessionRunHook],
                     saving_listeners: list[CheckpointSaverListener]) -> Any:
        with Graph().as_default() as g, g.device(self._device_fn):
            set_random_seed(self._config.tf_random_seed)
            global_step = self._create_and_assert_global_step(g)
            features, labels, worker_hooks = parse_input_fn_result(
                self._call_input_fn(input_fn, ModeKeys.TRAIN))
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self.config)
            return self._train_with_estimator_spec(spec, worker_hooks, hooks, global_step,
                                                   saving_listeners)

    def _train_with_estimator_spec(self, spec: EstimatorSpec, worker_hooks: list[SessionRunHook],
                                   hooks: list[SessionRunHook], global_step: Any,
                                   saving_listeners: list[CheckpointSaverListener]) -> Any:
        graph = get_default_graph()
        scaffold = warm_start_scaffold(spec.scaffold, self._warm_start_settings)
        if not any(s.op.name == "loss" for s in graph.get_collection(GraphKeys.SUMMARIES)):
            scalar("loss", spec.loss)
        graph.add_to_collection(GraphKeys.LOSSES, spec.loss)
        worker_hooks.extend(hooks)
        worker_hooks.append(NanTensorHook(spec.loss))
        if self._config.log_step_count_steps is not None:
            worker_hooks.append(LoggingTensorHook(
                {"loss": spec.loss, "step": global_step},
                every_n_iter=self._config.log_step_count_steps))
        worker_hooks.extend(spec.training_hooks)
        if not (scaffold.saver or graph.get_collection(GraphKeys.SAVERS)):
            graph.add_to_collection(GraphKeys.SAVERS, Saver(
                sharded=True, max_to_keep=self._config.keep_checkpoint_max,
                keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours,
                defer_build=True))
        chief_hooks: list[SessionRunHook] = []
        saver_hooks = [h for h in worker_hooks + list(spec.training_chief_hooks)
                       if isinstance(h, CheckpointSaverHook)]
        if (self._config.save_checkpoints_secs or self._config.save_checkpoints_steps) \
                and not saver_hooks:
            chief_hooks = [CheckpointSaverHook(
                self._model_dir, save_secs=self._config.save_checkpoints_secs,
                save_steps=self._config.save_checkpoints_steps, scaffold=scaffold)]
            saver_hooks = chief_hooks
        if saving_listeners:
            if not saver_hooks:
                raise ValueError(
                    "There should be a CheckpointSaverHook to use saving_listeners. Please set "
                    "one of the RunConfig.save_checkpoints_steps or "
                    "RunConfig.save_checkpoints_secs.")
            # As TF: the listeners join the first saver hook's own.
            own = saver_hooks[0]._listeners
            own.extend(listener for listener in saving_listeners if listener not in own)
        with MonitoredTrainingSession(
                master=self._config.master, is_chief=self._config.is_chief,
                checkpoint_dir=self._model_dir, scaffold=scaffold, hooks=worker_hooks,
                chief_only_hooks=tuple(chief_hooks) + tuple(spec.training_chief_hooks),
                save_checkpoint_secs=0,  # the saver hook above saves
                save_summaries_steps=self._config.save_summary_steps,
                config=self._session_config,
                max_wait_secs=self._config.session_creation_timeout_secs,
                log_step_count_steps=self._config.log_step_count_steps) as mon_sess:
            loss = None
            any_step_done = False
            while not mon_sess.should_stop():
                _, loss = mon_sess.run([spec.train_op, spec.loss])
                any_step_done = True
        if not any_step_done:
            _log.warning("Training with estimator made no steps. Perhaps input is empty or "
                         "misspecified.")
        return loss

    # -- evaluate -----------------------------------------------------------------------------

    def evaluate(self, input_fn: Callable[..., Any], steps: int | None = None, hooks: Any = None,
                 checkpoint_path: str | None = None, name: str | None = None) -> dict[str, Any]:
        """Evaluate the model's metrics on `input_fn`; see the module docstring."""
        hooks = _check_hooks_type(hooks)
        if steps is not None:
            if steps <= 0:
                raise ValueError(f"Must specify steps > 0, given: {steps}")
            hooks.append(evaluation.StopAfterNEvalsHook(num_evals=steps))
        if not checkpoint_path:
            checkpoint_path = latest_checkpoint(self._model_dir)
            if not checkpoint_path:
                _log.info("Could not find trained model in model_dir: %s, running "
                          "initialization to evaluate.", self._model_dir)
        with Graph().as_default():
            scaffold, update_op, eval_dict, all_hooks = self._evaluate_build_graph(
                input_fn, hooks, checkpoint_path)
            return self._evaluate_run(checkpoint_path, scaffold, update_op, eval_dict,
                                      all_hooks, self.eval_dir(name))

    def _evaluate_build_graph(self, input_fn: Callable[..., Any], hooks: list[SessionRunHook],
                              checkpoint_path: str | None
                              ) -> tuple[Scaffold, Any, dict[str, Any], list[SessionRunHook]]:
        """Build the EVAL graph in the default graph: its scaffold, the metrics' update op,
        the values to report and every hook of the evaluation."""
        g = get_default_graph()
        set_random_seed(self._config.tf_random_seed)
        global_step = self._create_and_assert_global_step(g)
        features, labels, input_hooks = parse_input_fn_result(
            self._call_input_fn(input_fn, ModeKeys.EVAL))
        spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self.config)
        eval_metric_ops = dict(spec.eval_metric_ops)
        if LOSS_METRIC_KEY in eval_metric_ops:
            raise ValueError(f'Metric with name "{LOSS_METRIC_KEY}" is not allowed, because '
                             "Estimator already defines a default metric with the same "
                             "name.")
        eval_metric_ops[LOSS_METRIC_KEY] = mean(spec.loss)
        # Sorted, so that the graph is the same every time.
        update_op = group(*[eval_metric_ops[k][1] for k in sorted(eval_metric_ops)])
        eval_dict = {k: value for k, (value, _) in eval_metric_ops.items()}
        if GraphKeys.GLOBAL_STEP in eval_dict:
            raise ValueError("Metric with name `global_step` is not allowed, because "
                             "Estimator already defines a default metric with the same "
                             "name.")
        eval_dict[GraphKeys.GLOBAL_STEP] = global_step.value()
        scaffold = spec.scaffold
        if checkpoint_path is None:
            scaffold = warm_start_scaffold(scaffold, self._warm_start_settings)
        evaluation.get_or_create_eval_step()
        if scaffold.local_init_op is not None:
            # The metric variables and the eval step are new local variables.
            scaffold = Scaffold(local_init_op=group(scaffold.local_init_op,
                                                    Scaffold.default_local_init_op()),
                                copy_from_scaffold=scaffold)
        return scaffold, update_op, eval_dict, input_hooks + hooks + list(
            spec.evaluation_hooks)

    def _evaluate_run(self, checkpoint_path: str | None, scaffold: Scaffold, update_op: Any,
                      eval_dict: dict[str, Any], all_hooks: list[SessionRunHook],
                      output_dir: str) -> dict[str, Any]:
        """Run the evaluation built by `_evaluate_build_graph` and write its results as
        summaries to `output_dir`."""
        results = evaluation.evaluate_once(
            checkpoint_path=checkpoint_path, master=self._config.evaluation_master,
            scaffold=scaffold, eval_ops=update_op, final_ops=eval_dict, hooks=all_hooks,
            config=self._session_config)
        evaluation.write_dict_to_summary(output_dir, results,
                                         int(results[GraphKeys.GLOBAL_STEP]))
        return results

    # -- predict ------------------------------------------------------------------------------

    def predict(self, input_fn: Callable[..., Any], predict_keys: Any = None, hooks: Any = None,
                checkpoint_path: str | None = None,
                yield_single_examples: bool = True) -> Iterator[Any]:
        """Yield the model's predictions on `input_fn`; see the module docstring."""
        hooks = _check_hooks_type(hooks)
        if not checkpoint_path:
            checkpoint_path = latest_checkpoint(self._model_dir)
        if not checkpoint_path:
            _log.info("Could not find trained model in model_dir: %s, running initialization "
                      "to predict.", self._model_dir)
        with Graph().as_default() as g:
            set_random_seed(self._config.tf_random_seed)
            self._create_and_assert_global_step(g)
            features, _, input_hooks = parse_input_fn_result(
                self._call_input_fn(input_fn, ModeKeys.PREDICT))
            if not _has_dataset_or_queue_runner(features):
                _log.warning("Input graph does not use tf.data.Dataset or contain a "
                             "QueueRunner. That means predict yields forever. This is probably "
                             "a mistake.")
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self.config)
            scaffold = spec.scaffold
            if checkpoint_path is None:
                scaffold = warm_start_scaffold(scaffold, self._warm_start_settings)
            predictions = _extract_keys(spec.predictions, predict_keys)
            creator = ChiefSessionCreator(checkpoint_filename_with_path=checkpoint_path,
                                          master=self._config.master, scaffold=scaffold,
                                          config=self._session_config)
            all_hooks = input_hooks + hooks + list(spec.prediction_hooks)
            with MonitoredSession(session_creator=creator, hooks=all_hooks) as mon_sess:
                while not mon_sess.should_stop():
                    evaluated = mon_sess.run(predictions)
                    if not yield_single_examples:
                        yield evaluated
                    elif not isinstance(predictions, dict):
                        yield from evaluated
                    else:
                        for i in range(_extract_batch_length(evaluated)):
                            yield {key: value[i] for key, value in evaluated.items()}

    # -- export -------------------------------------------------------------------------------

    def export_saved_model(self, export_dir_base: str | bytes,
                           serving_input_receiver_fn: Callable[[], Any],
                           assets_extra: dict[str, str] | None = None, as_text: bool = False,
                           checkpoint_path: str | None = None,
                           experimental_mode: str = ModeKeys.PREDICT) -> bytes:
        """Export the model for serving as a SavedModel in a new ``<export_dir_base>/<unix
        seconds>`` directory; returns its path (bytes); see the module docstring."""
        return self._export_saved_model(export_dir_base, serving_input_receiver_fn,
                                        assets_extra, as_text, checkpoint_path,
                                        strip_default_attrs=True, mode=experimental_mode)

    def export_savedmodel(self, export_dir_base: str | bytes,
                          serving_input_receiver_fn: Callable[[], Any],
                          assets_extra: dict[str, str] | None = None, as_text: bool = False,
                          checkpoint_path: str | None = None,
                          strip_default_attrs: bool = False) -> bytes:
        """TF1's name of `export_saved_model`."""
        return self._export_saved_model(export_dir_base, serving_input_receiver_fn,
                                        assets_extra, as_text, checkpoint_path,
                                        strip_default_attrs)

    def _export_saved_model(self, export_dir_base: str | bytes,
                            serving_input_receiver_fn: Callable[[], Any],
                            assets_extra: dict[str, str] | None, as_text: bool,
                            checkpoint_path: str | None, strip_default_attrs: bool,
                            mode: str = ModeKeys.PREDICT) -> bytes:
        if serving_input_receiver_fn is None:
            raise ValueError("An input_receiver_fn must be defined.")
        return export_all.export_all_saved_models(
            self, export_dir_base, {mode: serving_input_receiver_fn}, assets_extra, as_text,
            checkpoint_path, strip_default_attrs)

    def experimental_export_all_saved_models(
            self, export_dir_base: str | bytes,
            input_receiver_fn_map: dict[str, Callable[[], Any]],
            assets_extra: dict[str, str] | None = None, as_text: bool = False,
            checkpoint_path: str | None = None) -> bytes:
        """Export the graphs of every mode of `input_receiver_fn_map` (TRAIN and EVAL with
        `export_all.SupervisedInputReceiver`s, PREDICT with a serving receiver) into one new
        ``<export_dir_base>/<unix seconds>`` SavedModel; returns its path (bytes)."""
        return export_all.export_all_saved_models(self, export_dir_base, input_receiver_fn_map,
                                                  assets_extra, as_text, checkpoint_path)

    def _checkpoint_to_export(self) -> str:
        path = latest_checkpoint(self._model_dir)
        if path:
            return path
        if self._warm_start_settings:
            path = self._warm_start_settings.ckpt_to_initialize_from
            return latest_checkpoint(path) if os.path.isdir(path) else path
        raise ValueError(f"Couldn't find trained model at {self._model_dir}.")

    # -- calling the user's functions ---------------------------------------------------------

    def _create_and_assert_global_step(self, graph: Graph) -> Any:
        step = create_global_step(graph)
        assert step is get_global_step(graph)
        return step

    def _call_input_fn(self, input_fn: Callable[..., Any], mode: str) -> Any:
        args = fn_args(input_fn)
        kwargs: dict[str, Any] = {}
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = self.config
        with get_default_graph().device("/cpu:0"):
            return input_fn(**kwargs)

    def _call_model_fn(self, features: Any, labels: Any, mode: str,
                       config: RunConfig) -> EstimatorSpec:
        args = fn_args(self._model_fn)
        kwargs: dict[str, Any] = {}
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = config
        _log.info("Calling model_fn.")
        result = self._model_fn(features=features, **kwargs)
        _log.info("Done calling model_fn.")
        if not isinstance(result, EstimatorSpec):
            raise ValueError("model_fn should return an EstimatorSpec.")
        return result


# -- helpers ----------------------------------------------------------------------------------

def _assert_members_are_not_overridden(obj: Estimator) -> None:
    """As TF: subclasses configure an `Estimator` through its `model_fn`, never by overriding
    its methods."""
    allowed = {"model_fn", "_create_and_assert_global_step", "latest_checkpoint"}
    members = {m for m in dir(Estimator) if not m.startswith("__")}
    common = members & set(type(obj).__dict__) - allowed
    overridden = [m for m in common if getattr(Estimator, m) != getattr(type(obj), m)]
    if overridden:
        raise ValueError("Subclasses of Estimator cannot override members of Estimator. "
                         f"{type(obj)} does override {overridden}")


def _config_with_model_dir(config: RunConfig | None, model_dir: Any) -> RunConfig:
    if config is None:
        config = RunConfig()
        _log.info("Using default config.")
    if not isinstance(config, RunConfig):
        raise ValueError(f"config must be an instance of `RunConfig`, but provided {config}.")
    model_dir = os.fspath(model_dir) if model_dir is not None else None
    if model_dir is not None and config.model_dir is not None and config.model_dir != model_dir:
        raise ValueError("`model_dir` are set both in constructor and `RunConfig`, but with "
                         f"different values. In constructor: '{model_dir}', in `RunConfig`: "
                         f"'{config.model_dir}' ")
    if model_dir:
        return config.replace(model_dir=model_dir)
    if config.model_dir is None:
        model_dir = tempfile.mkdtemp()
        _log.warning("Using temporary folder as model directory: %s", model_dir)
        return config.replace(model_dir=model_dir)
    return config


def _replica_device_setter(config: RunConfig) -> Callable[[Any], str] | None:
    """With ps tasks, variables go to the ps and the rest to this task, as TF's estimator."""
    if config.num_ps_replicas == 0:
        return None
    worker_device = (f"/job:{config.task_type}/task:{config.task_id}" if config.task_type
                     else "/job:worker")
    return replica_device_setter(ps_tasks=config.num_ps_replicas, worker_device=worker_device,
                                 merge_devices=True, ps_ops=list(STANDARD_PS_OPS),
                                 cluster=config.cluster_spec)


def _verify_model_fn_args(model_fn: Callable[..., Any], params: Any) -> None:
    args = set(fn_args(model_fn))
    if "features" not in args:
        raise ValueError(f"model_fn ({model_fn}) must include features argument.")
    if params is not None and "params" not in args:
        raise ValueError(f"model_fn ({model_fn}) does not include params argument, but params "
                         f"({params}) is passed to Estimator.")
    if params is None and "params" in args:
        _log.warning("Estimator's model_fn (%s) includes params argument, but params are not "
                     "passed to Estimator.", model_fn)
    unexpected = sorted(args - _VALID_MODEL_FN_ARGS)
    if unexpected:
        raise ValueError(f"model_fn ({model_fn}) has following not expected args: {unexpected}")


def _check_hooks_type(hooks: Any) -> list[SessionRunHook]:
    hooks = list(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"Hooks must be a SessionRunHook, given: {hook}")
    return hooks


def _check_listeners_type(saving_listeners: Any) -> list[CheckpointSaverListener]:
    listeners = list(saving_listeners or [])
    for listener in listeners:
        if not isinstance(listener, CheckpointSaverListener):
            raise TypeError("saving_listeners must be a list of CheckpointSaverListener, given: "
                            f"{listener}")
    return listeners


def _check_checkpoint_available(model_dir: str) -> None:
    if not latest_checkpoint(model_dir):
        raise ValueError(f"Could not find trained model in model_dir: {model_dir}.")


def _global_step_of_checkpoint(model_dir: str) -> int:
    """The global step saved in `model_dir`'s newest checkpoint, 0 if there is none."""
    path = latest_checkpoint(model_dir)
    if path is None:
        return 0
    try:
        return int(load_variable(path, GraphKeys.GLOBAL_STEP))
    except errors.NotFoundError:
        return 0


def _has_dataset_or_queue_runner(features: Any) -> bool:
    leaves = features.values() if isinstance(features, dict) else [features]
    if any(isinstance(t, Tensor) and t.op.type == "IteratorGetNext" for t in leaves):
        return True
    return bool(get_default_graph().get_collection(GraphKeys.QUEUE_RUNNERS))


def _extract_keys(predictions: Any, predict_keys: Any) -> Any:
    if not predict_keys:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict predictions.")
    selected = {k: v for k, v in predictions.items() if k in predict_keys}
    if not selected:
        raise ValueError(f"Expected to run at least one output from {list(predictions)}, "
                         f"provided {predict_keys}.")
    return selected


def _extract_batch_length(evaluated: dict[str, Any]) -> int:
    batch_length = None
    for key, value in evaluated.items():
        batch_length = batch_length or value.shape[0]
        if value.shape[0] != batch_length:
            raise ValueError(f"Batch length of predictions should be same. {key} has different "
                             "batch length than others.")
    return batch_length or 0
