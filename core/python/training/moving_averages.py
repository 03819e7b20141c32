"""Alias of ``tensorflow.python.training.moving_averages``: re-exports
``tf.train.ExponentialMovingAverage``.
"""

from tensorweave.train.moving_averages import *
