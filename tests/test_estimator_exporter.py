"""tw.estimator's exporters: `LatestExporter`, `FinalExporter` and `BestExporter`, run by
`train_and_evaluate` after each evaluation into ``<model_dir>/export/<name>``; the exports load
back and serve the evaluated checkpoint's predictions."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.estimator.exporter import _loss_smaller
from tests.estimator_support import (
    FEATURES,
    closed_writer_cache,  # noqa: F401 - autouse fixture
    data,
    estimator,
    eval_input_fn,
    train_input_fn,
)


def serving_fn() -> Any:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, FEATURES], name="x")
    return tf.estimator.export.build_raw_serving_input_receiver_fn({"x": x})


def exports_in(directory: str) -> list[str]:
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else []


def serve(path: Any, x: np.ndarray) -> np.ndarray:
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.SERVING], path)
        sig = meta.signature_def["serving_default"]
        return sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: x})


def weights_of(path: str) -> tuple[np.ndarray, np.ndarray]:
    return tf.train.load_variable(path, "w"), tf.train.load_variable(path, "b")


class RecordingExporter(tf.estimator.Exporter):
    """A user-defined exporter: records what it is called with, exports nothing."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int, bool]] = []

    @property
    def name(self) -> str:
        return "recorder"

    def export(self, estimator: Any, export_path: str, checkpoint_path: str,
               eval_result: dict[str, Any], is_the_final_export: bool) -> None:
        self.calls.append((export_path, os.path.basename(checkpoint_path),
                           int(eval_result["global_step"]), is_the_final_export))


def test_train_and_evaluate_runs_latest_and_final_exporters(tmp_path: Any) -> None:
    est = estimator(tmp_path, save_checkpoints_steps=5)
    latest = tf.estimator.LatestExporter("latest", serving_fn(), exports_to_keep=2)
    final = tf.estimator.FinalExporter("final", serving_fn())
    recorder = RecordingExporter()
    metrics, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_input_fn(), max_steps=15),
        tf.estimator.EvalSpec(eval_input_fn(), steps=None,
                              exporters=[latest, final, recorder], throttle_secs=0))
    assert metrics["global_step"] == 15
    base = os.path.join(str(tmp_path), "export")
    assert recorder.calls == [(os.path.join(base, "recorder"), f"model.ckpt-{step}", step,
                               step == 15) for step in (5, 10, 15)]
    assert exports[2] is None
    exports = exports[:2]
    assert exports_in(base) == ["final", "latest"]
    # Evaluations at steps 5, 10 and 15: three latest exports, the oldest collected.
    kept = exports_in(os.path.join(base, "latest"))
    assert len(kept) == 2 and all(name.isdigit() for name in kept)
    (final_export,) = exports_in(os.path.join(base, "final"))
    assert [os.fsdecode(e) for e in exports] == [
        os.path.join(base, "latest", kept[-1]), os.path.join(base, "final", final_export)]
    x, _ = data()
    w, b = weights_of(str(tmp_path))  # the step-15 checkpoint
    for path in exports:
        np.testing.assert_allclose(serve(path, x), x @ w + b, rtol=1e-5, atol=1e-6)


def test_final_exporter_exports_only_the_final_evaluation(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    est.train(train_input_fn(), steps=3)
    final = tf.estimator.FinalExporter("final", serving_fn())
    path = str(tmp_path / "out")
    assert final.export(est, path, est.latest_checkpoint(), {"loss": 1.0}, False) is None
    assert exports_in(path) == []
    exported = final.export(est, path, est.latest_checkpoint(), {"loss": 1.0}, True)
    assert exports_in(path) == [os.path.basename(os.fsdecode(exported))]


def test_best_exporter_exports_only_improvements_and_keeps_the_best(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    est.train(train_input_fn(), steps=2)
    early = est.latest_checkpoint()
    est.train(train_input_fn(), steps=20)
    late = est.latest_checkpoint()
    best = tf.estimator.BestExporter(serving_input_receiver_fn=serving_fn(),
                                     event_file_pattern=None, exports_to_keep=1)
    assert best.name == "best_exporter"
    path = str(tmp_path / "best")
    first = best.export(est, path, early, {"loss": 3.0}, False)
    assert first is not None
    assert best.export(est, path, late, {"loss": 5.0}, False) is None  # worse: no export
    assert best.export(est, path, late, {"loss": 3.0}, False) is None  # equal: no export
    second = best.export(est, path, late, {"loss": 1.0}, False)
    assert second is not None
    assert exports_in(path) == [os.path.basename(os.fsdecode(second))]  # first collected
    x, _ = data()
    w, b = weights_of(late)
    np.testing.assert_allclose(serve(second, x), x @ w + b, rtol=1e-5, atol=1e-6)


def test_best_exporter_recovers_the_best_loss_from_eval_event_files(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    est.train(train_input_fn(), steps=20)
    evaluated = est.evaluate(eval_input_fn())  # written to model_dir/eval
    best = tf.estimator.BestExporter("b", serving_fn())
    path = str(tmp_path / "best")
    checkpoint = est.latest_checkpoint()
    worse = {"loss": float(evaluated["loss"]) * 2}
    assert best.export(est, path, checkpoint, worse, False) is None
    better = {"loss": float(evaluated["loss"]) / 2}
    assert best.export(est, path, checkpoint, better, False) is not None
    assert len(exports_in(path)) == 1


def test_best_exporter_with_a_custom_compare_fn(tmp_path: Any) -> None:
    est = estimator(tmp_path)
    est.train(train_input_fn(), steps=2)

    def mae_smaller(best_eval_result: dict[str, Any], current_eval_result: dict[str, Any]
                    ) -> bool:
        return current_eval_result["mae"] < best_eval_result["mae"]

    best = tf.estimator.BestExporter("b", serving_fn(), compare_fn=mae_smaller,
                                     event_file_pattern=None)
    path = str(tmp_path / "best")
    checkpoint = est.latest_checkpoint()
    assert best.export(est, path, checkpoint, {"mae": 2.0, "loss": 0.0}, False) is not None
    assert best.export(est, path, checkpoint, {"mae": 3.0, "loss": -1.0}, False) is None


def test_exporter_argument_errors() -> None:
    with pytest.raises(ValueError, match="`exports_to_keep`, if provided, must be a positive"):
        tf.estimator.LatestExporter("l", serving_fn(), exports_to_keep=0)
    with pytest.raises(ValueError, match="`compare_fn` must not be None"):
        tf.estimator.BestExporter(compare_fn=None)
    with pytest.raises(ValueError, match="must include"):
        tf.estimator.BestExporter(compare_fn=lambda a, b: True)
    with pytest.raises(ValueError, match="best_eval_result cannot be empty or no loss"):
        _loss_smaller({}, {"loss": 1.0})
    with pytest.raises(ValueError, match="current_eval_result cannot be empty or no loss"):
        _loss_smaller({"loss": 1.0}, {"mae": 1.0})
    assert _loss_smaller({"loss": 2.0}, {"loss": 1.0})
    assert not _loss_smaller({"loss": 1.0}, {"loss": 1.0})
    with pytest.raises(TypeError, match="Can't instantiate abstract class"):
        tf.estimator.Exporter()


def test_eval_spec_checks_its_exporters() -> None:
    fn = eval_input_fn()
    latest = tf.estimator.LatestExporter("same", serving_fn())
    assert tf.estimator.EvalSpec(fn, exporters=latest).exporters == (latest,)
    assert tf.estimator.EvalSpec(fn).exporters == ()
    with pytest.raises(TypeError, match="`exporters` must be an Exporter, given 3"):
        tf.estimator.EvalSpec(fn, exporters=[3])
    with pytest.raises(ValueError, match="`exporters` must have unique names"):
        tf.estimator.EvalSpec(fn, exporters=[latest, tf.estimator.FinalExporter("same",
                                                                                serving_fn())])
    with pytest.raises(ValueError, match="cannot have a name that is `None` or empty"):
        tf.estimator.EvalSpec(fn, exporters=[tf.estimator.FinalExporter("", serving_fn())])
