"""Alias of ``tensorflow.python.training.monitored_session``: re-exports
``tf.train.MonitoredSession`` and friends.
"""

from tensorweave.train.monitored_session import *
