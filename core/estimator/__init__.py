"""``tw.estimator``: ``tf.compat.v1.estimator``'s core API: `Estimator` with a `model_fn`
returning an `EstimatorSpec`, `RunConfig`, `TrainSpec`/`EvalSpec`/`train_and_evaluate` (locally,
or on a ps/chief/worker/evaluator cluster described by ``TF_CONFIG``), `WarmStartSettings`,
``inputs.numpy_input_fn`` and the canned estimators (linear, DNN, DNN-linear combined and
baseline classifiers and regressors), and SavedModel export (``Estimator.export_saved_model``
with the receivers and outputs of ``export``). Distribution strategies are not implemented."""

from tensorweave.estimator import export, inputs
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
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorweave.estimator.run_config import RunConfig
from tensorweave.estimator.training import EvalSpec, TrainSpec, train_and_evaluate
from tensorweave.estimator.warm_starting import WarmStartSettings

__all__ = ["BaselineClassifier", "BaselineRegressor", "DNNClassifier",
           "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor", "DNNRegressor",
           "Estimator", "EstimatorSpec", "EvalSpec", "LinearClassifier", "LinearRegressor",
           "ModeKeys", "RunConfig", "TrainSpec", "WarmStartSettings", "export", "inputs",
           "train_and_evaluate"]
