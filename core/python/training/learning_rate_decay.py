"""Alias of ``tensorflow.python.training.learning_rate_decay``: re-exports the learning-rate
schedules.
"""

from tensorweave.train.learning_rate_decay import *
