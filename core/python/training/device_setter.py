"""Alias of ``tensorflow.python.training.device_setter``: re-exports
``tf.train.replica_device_setter``.
"""

from tensorweave.train.device_setter import *
