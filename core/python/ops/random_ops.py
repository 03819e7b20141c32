"""Alias of ``tensorflow.python.ops.random_ops``: re-exports tensorweave's random ops."""

from tensorweave.api.array_ops_extra import multinomial
from tensorweave.api.random_distributions import *
from tensorweave.api.random_ops import *
