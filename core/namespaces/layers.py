"""``tw.layers``: the layers of ``tf.compat.v1.layers``, as objects (``Layer``, ``Dense``,
``Conv2D``, ``Conv2DTranspose``, pooling, ``Flatten``, ``Dropout``, ``BatchNormalization``) and
as functions."""

from tensorweave.api.conv_transpose_layers import *  # noqa: F403
from tensorweave.api.layers import *  # noqa: F403
from tensorweave.api.layers3d import *  # noqa: F403
