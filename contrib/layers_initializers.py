"""``tf.contrib.layers``' ``initializers`` submodule (``slim.initializers``): the contrib
weight initializers under their module path, as TF1 model code spells them
(``slim.initializers.xavier_initializer()``)."""

from __future__ import annotations

from tensorweave.contrib.layers import (
    variance_scaling_initializer,
    xavier_initializer,
    xavier_initializer_conv2d,
)

__all__ = ["variance_scaling_initializer", "xavier_initializer", "xavier_initializer_conv2d"]
