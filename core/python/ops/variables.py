"""Alias of ``tensorflow.python.ops.variables``: re-exports ``tf.Variable`` and the variable
collections.
"""

from tensorweave.api.variables import *
