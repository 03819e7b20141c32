"""``tw.nn``: neural-network ops."""

from tensorweave.api.nn_ops import *  # noqa: F403
