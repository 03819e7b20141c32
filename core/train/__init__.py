"""``tw.train``: optimizers, checkpoints, cluster specs and servers."""

from tensorweave.train.cluster import *  # noqa: F403
from tensorweave.train.device_setter import *  # noqa: F403
from tensorweave.train.optimizers import *  # noqa: F403
from tensorweave.train.saver import *  # noqa: F403
from tensorweave.train.server_lib import *  # noqa: F403
from tensorweave.train.training_util import *  # noqa: F403
