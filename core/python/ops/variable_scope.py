"""Alias of ``tensorflow.python.ops.variable_scope``: re-exports ``tf.variable_scope`` and
``tf.get_variable``.
"""

from tensorweave.api.variable_scope import *
