"""``tw.image``: image ops under ``tf.compat.v1.image``'s names."""

from tensorweave.api.image_ops import *  # noqa: F403
