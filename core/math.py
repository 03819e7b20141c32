"""``tw.math``: the math ops under TF's ``tf.math`` names."""

from tensorweave.api.math_ops import *  # noqa: F403
