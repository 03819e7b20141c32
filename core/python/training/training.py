"""Alias of ``tensorflow.python.training.training``: re-exports `tensorweave.train` (``tf.train``).
"""

from tensorweave.train import *
