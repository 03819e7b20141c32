"""Alias of ``tensorflow.python.client.session``: re-exports ``tf.Session``."""

from tensorweave.engine.client.session import InteractiveSession, Session
