"""Alias of ``tensorflow.python.layers.normalization``: re-exports
``tf.layers.batch_normalization``.
"""

from tensorweave.api.layers import BatchNormalization, batch_normalization
