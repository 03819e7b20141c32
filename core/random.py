"""``tw.random``: random ops under TF's ``tf.random`` names."""

from tensorweave.api.random_ops import *  # noqa: F403
