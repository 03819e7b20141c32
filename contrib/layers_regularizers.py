"""``tf.contrib.layers``' ``regularizers`` submodule (``slim.regularizers``): the contrib
weight regularizers under their module path (``slim.regularizers.l2_regularizer(4e-5)``)."""

from __future__ import annotations

from tensorweave.contrib.layers import (
    apply_regularization,
    l1_l2_regularizer,
    l1_regularizer,
    l2_regularizer,
    sum_regularizer,
)

__all__ = ["apply_regularization", "l1_l2_regularizer", "l1_regularizer", "l2_regularizer",
           "sum_regularizer"]
