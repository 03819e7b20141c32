"""``tw.estimator``: ``tf.compat.v1.estimator``'s core API: `Estimator` with a `model_fn`
returning an `EstimatorSpec`, `RunConfig`, `TrainSpec`/`EvalSpec`/`train_and_evaluate` (locally,
or on a ps/chief/worker/evaluator cluster described by ``TF_CONFIG``), `WarmStartSettings`,
``inputs.numpy_input_fn`` and the canned estimators (linear, DNN, DNN-linear combined and
baseline classifiers and regressors), and SavedModel export (``Estimator.export_saved_model``
with the receivers and outputs of ``export``, and of every mode with
``Estimator.experimental_export_all_saved_models``), the exporters `train_and_evaluate` runs
after each evaluation (`LatestExporter`, `BestExporter`, `FinalExporter`), `add_metrics`, and
``experimental``'s early stopping hooks and
`InMemoryEvaluatorHook`. Distribution strategies are not implemented."""

from tensorweave.estimator import experimental, export, inputs
from tensorweave.estimator.canned import (
    BaselineClassifier,
    BaselineRegressor,
    DNNClassifier,
    DNNLinearCombinedClassifier,
    DNNLinearCombinedRegressor,
    DNNRegressor,
    LinearClassifier,
    LinearRegressor,
)
from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.exporter import BestExporter, Exporter, FinalExporter, LatestExporter
from tensorweave.estimator.extenders import add_metrics
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorweave.estimator.run_config import RunConfig
from tensorweave.estimator.training import EvalSpec, TrainSpec, train_and_evaluate
from tensorweave.estimator.warm_starting import WarmStartSettings

__all__ = ["BaselineClassifier", "BaselineRegressor", "BestExporter", "DNNClassifier",
           "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor", "DNNRegressor",
           "Estimator", "EstimatorSpec", "EvalSpec", "Exporter", "FinalExporter",
           "LatestExporter", "LinearClassifier", "LinearRegressor", "ModeKeys", "RunConfig",
           "TrainSpec", "WarmStartSettings", "add_metrics", "experimental", "export", "inputs",
           "train_and_evaluate"]
