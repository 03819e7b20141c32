"""``tw.losses``: the loss functions and loss collections of ``tf.compat.v1.losses``."""

from tensorweave.api.losses import *  # noqa: F403
