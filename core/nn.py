"""``tw.nn``: neural-network ops."""

from tensorweave.api import rnn_cell  # noqa: F401 - tw.nn.rnn_cell
from tensorweave.api.nn_conv_ops import *  # noqa: F403
from tensorweave.api.nn_ops import *  # noqa: F403
from tensorweave.api.rnn import *  # noqa: F403
from tensorweave.api.sparse_ops import embedding_lookup_sparse  # noqa: F401
