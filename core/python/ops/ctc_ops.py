"""Alias of ``tensorflow.python.ops.ctc_ops``: re-exports the CTC loss and decoders."""

from tensorweave.api.ctc_ops import *
