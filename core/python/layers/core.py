"""Alias of ``tensorflow.python.layers.core``: re-exports the dense, dropout and flatten layers."""

from tensorweave.api.layers import Dense, Dropout, Flatten, dense, dropout, flatten
