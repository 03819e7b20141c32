"""Alias of ``tensorflow.python.client.session``: re-exports ``tf.Session``."""

from tensorweave.client.session import InteractiveSession, Session
