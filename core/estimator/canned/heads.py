"""Which head a canned classifier or regressor uses (TF's ``head_utils``): binary for
``n_classes == 2``, multi-class above, regression for regressors."""

from __future__ import annotations

from typing import Any

from tensorweave.estimator.canned.binary_head import BinaryClassHead
from tensorweave.estimator.canned.head import Head
from tensorweave.estimator.canned.multi_class_head import MultiClassHead
from tensorweave.estimator.canned.regression_head import RegressionHead

__all__ = ["binary_or_multi_class_head", "regression_head"]


def binary_or_multi_class_head(n_classes: int, weight_column: Any, label_vocabulary: Any,
                               loss_reduction: str) -> Head:
    if n_classes == 2:
        return BinaryClassHead(weight_column=weight_column, label_vocabulary=label_vocabulary,
                               loss_reduction=loss_reduction)
    return MultiClassHead(n_classes, weight_column=weight_column,
                          label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)


def regression_head(label_dimension: int, weight_column: Any, loss_reduction: str) -> Head:
    return RegressionHead(label_dimension=label_dimension, weight_column=weight_column,
                          loss_reduction=loss_reduction)
