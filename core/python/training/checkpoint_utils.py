"""Alias of ``tensorflow.python.training.checkpoint_utils``: re-exports reading checkpoints without
a graph.
"""

from tensorweave.train.checkpoint_management import list_variables, load_variable
from tensorweave.train.checkpoint_reader import NewCheckpointReader as load_checkpoint  # noqa: N813
