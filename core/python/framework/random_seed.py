"""Alias of ``tensorflow.python.framework.random_seed``: re-exports the graph-level seed."""

from tensorweave.api.random_ops import get_seed, set_random_seed
