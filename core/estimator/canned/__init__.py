"""TF 1.15's canned estimators: linear, DNN and combined DNN-linear classifiers and
regressors, baselines, and their heads."""

from tensorweave.estimator.canned.baseline import BaselineClassifier, BaselineRegressor
from tensorweave.estimator.canned.dnn import DNNClassifier, DNNRegressor
from tensorweave.estimator.canned.dnn_linear_combined import (
    DNNLinearCombinedClassifier,
    DNNLinearCombinedRegressor,
)
from tensorweave.estimator.canned.linear import LinearClassifier, LinearRegressor

__all__ = ["BaselineClassifier", "BaselineRegressor", "DNNClassifier",
           "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor", "DNNRegressor",
           "LinearClassifier", "LinearRegressor"]
