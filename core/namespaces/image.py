"""``tw.image``: image ops under ``tf.compat.v1.image``'s names."""

from tensorweave.api.image_box_ops import *  # noqa: F403
from tensorweave.api.image_color_ops import *  # noqa: F403
from tensorweave.api.image_io_ops import (  # noqa: F401
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    is_jpeg,
)
from tensorweave.api.image_measure_ops import *  # noqa: F403
from tensorweave.api.image_nms_ops import *  # noqa: F403
from tensorweave.api.image_ops import *  # noqa: F403
from tensorweave.api.image_resize_ops import *  # noqa: F403
