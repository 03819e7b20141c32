"""``tw.nn``: neural-network ops."""

from tensorweave.api import rnn_cell  # noqa: F401 - tw.nn.rnn_cell
from tensorweave.api.array_ops_extra import (  # noqa: F401 - tf.nn's v1 aliases
    batch_to_space,
    depth_to_space,
    space_to_batch,
    space_to_depth,
)
from tensorweave.api.candidate_sampling_ops import *  # noqa: F403
from tensorweave.api.ctc_ops import *  # noqa: F403
from tensorweave.api.nn_conv3d_ops import *  # noqa: F403
from tensorweave.api.nn_conv_ops import *  # noqa: F403
from tensorweave.api.nn_extra import *  # noqa: F403
from tensorweave.api.nn_fractional_ops import *  # noqa: F403
from tensorweave.api.nn_ops import *  # noqa: F403
from tensorweave.api.rnn import *  # noqa: F403
from tensorweave.api.sampled_losses import *  # noqa: F403
from tensorweave.api.sparse_ops import embedding_lookup_sparse  # noqa: F401
