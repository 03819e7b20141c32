"""``tw.random``: random ops under TF's ``tf.random`` names, with the TF2-style aliases."""

from tensorweave.api.random_ops import (
    get_seed,
    random_normal,
    random_shuffle,
    random_uniform,
    set_random_seed,
    truncated_normal,
)

normal = random_normal
uniform = random_uniform
shuffle = random_shuffle
set_seed = set_random_seed

__all__ = ["get_seed", "normal", "random_normal", "random_shuffle", "random_uniform",
           "set_random_seed", "set_seed", "shuffle", "truncated_normal", "uniform"]
