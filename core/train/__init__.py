"""``tw.train``: optimizers (synchronous replicas included), learning-rate schedules,
checkpoints, cluster specs and servers, monitored sessions and their hooks, moving averages,
thread coordination, queue runners, queue-based input pipelines, the ``Example`` protos, graph
files and meta graphs."""

from tensorweave.formats.event_file import summary_iterator  # noqa: F401
from tensorweave.formats.example_proto import *  # noqa: F403
from tensorweave.train.adadelta import *  # noqa: F403
from tensorweave.train.basic_session_run_hooks import *  # noqa: F403
from tensorweave.train.checkpoint_reader import *  # noqa: F403
from tensorweave.train.checkpoint_utils import *  # noqa: F403
from tensorweave.train.cluster import *  # noqa: F403
from tensorweave.train.coordinator import *  # noqa: F403
from tensorweave.train.device_setter import *  # noqa: F403
from tensorweave.train.ftrl import *  # noqa: F403
from tensorweave.train.graph_io import *  # noqa: F403
from tensorweave.train.input import *  # noqa: F403
from tensorweave.train.learning_rate_decay import *  # noqa: F403
from tensorweave.train.meta_graph import *  # noqa: F403
from tensorweave.train.monitored_session import *  # noqa: F403
from tensorweave.train.moving_averages import *  # noqa: F403
from tensorweave.train.optimizers import *  # noqa: F403
from tensorweave.train.queue_runner import *  # noqa: F403
from tensorweave.train.saver import *  # noqa: F403
from tensorweave.train.server_lib import *  # noqa: F403
from tensorweave.train.session_run_hook import *  # noqa: F403
from tensorweave.train.supervisor import *  # noqa: F403
from tensorweave.train.sync_replicas_optimizer import *  # noqa: F403
from tensorweave.train.training_util import *  # noqa: F403
