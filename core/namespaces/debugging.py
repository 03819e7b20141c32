"""``tw.debugging``: the checks ``tf.compat.v1.debugging`` offers (``assert_equal``, ...,
``Assert``), defined in `tensorweave.api.check_ops` and `tensorweave.api.logging_ops`."""

from tensorweave.api.check_ops import (
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_rank,
    assert_scalar,
    assert_type,
)
from tensorweave.api.logging_ops import Assert

__all__ = [
    "Assert", "assert_equal", "assert_greater", "assert_greater_equal", "assert_integer",
    "assert_less", "assert_less_equal", "assert_negative", "assert_non_negative",
    "assert_non_positive", "assert_none_equal", "assert_positive", "assert_rank",
    "assert_scalar", "assert_type",
]
