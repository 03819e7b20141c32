"""Alias of ``tensorflow.python.training.gradient_descent``: re-exports
``tf.train.GradientDescentOptimizer``.
"""

from tensorweave.train.optimizers import GradientDescentOptimizer
