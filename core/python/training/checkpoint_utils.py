"""Alias of ``tensorflow.python.training.checkpoint_utils``: re-exports reading checkpoints without
a graph and initializing variables from them.
"""

from tensorweave.train.checkpoint_management import list_variables, load_variable
from tensorweave.train.checkpoint_utils import init_from_checkpoint, load_checkpoint
