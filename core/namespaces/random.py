"""``tw.random``: random ops under TF's ``tf.random`` names, with the TF2-style aliases."""

from tensorweave.api.array_ops_extra import categorical, multinomial
from tensorweave.api.candidate_sampling_ops import (
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from tensorweave.api.random_distributions import random_gamma, random_poisson
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
gamma = random_gamma

__all__ = ["categorical", "multinomial",
           "gamma", "get_seed", "normal", "random_gamma", "random_normal", "random_poisson",
           "random_shuffle", "random_uniform", "set_random_seed", "set_seed", "shuffle",
           "truncated_normal", "uniform",
           "all_candidate_sampler", "fixed_unigram_candidate_sampler",
           "learned_unigram_candidate_sampler", "log_uniform_candidate_sampler",
           "uniform_candidate_sampler"]
