"""Alias of ``tensorflow.python.training.momentum``: re-exports ``tf.train.MomentumOptimizer``."""

from tensorweave.train.optimizers import MomentumOptimizer
