"""Alias of ``tensorflow.python.ops.parsing_ops``: re-exports ``tf.parse_example`` and the feature
specs.
"""

from tensorweave.api.parsing_ops import *
