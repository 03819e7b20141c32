"""``tw.layers``: the functional layers of ``tf.compat.v1.layers`` (``dense``, ``conv2d``,
pooling, ``flatten``, ``dropout``, ``batch_normalization``)."""

from tensorweave.api.layers import *  # noqa: F403
