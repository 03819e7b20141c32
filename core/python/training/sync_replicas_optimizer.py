"""Alias of ``tensorflow.python.training.sync_replicas_optimizer``: re-exports
``tf.train.SyncReplicasOptimizer``.
"""

from tensorweave.train.sync_replicas_optimizer import *
