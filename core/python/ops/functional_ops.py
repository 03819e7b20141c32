"""Alias of ``tensorflow.python.ops.functional_ops``: re-exports ``tf.map_fn``, ``tf.scan``,
``tf.foldl``, ``tf.foldr``.
"""

from tensorweave.api.functional_ops import *
