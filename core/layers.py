"""``tw.layers``: the layers of ``tf.compat.v1.layers``, as objects (``Layer``, ``Dense``,
``Conv2D``, pooling, ``Flatten``, ``Dropout``, ``BatchNormalization``) and as functions."""

from tensorweave.api.layers import *  # noqa: F403
