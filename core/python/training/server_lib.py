"""Alias of ``tensorflow.python.training.server_lib``: re-exports ``tf.train.Server`` and
``tf.train.ClusterSpec``.
"""

from tensorweave.train.cluster import *
from tensorweave.train.server_lib import *
