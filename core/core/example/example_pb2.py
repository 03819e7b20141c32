"""Alias of ``tensorflow.core.example.example_pb2``: ``Example`` and ``SequenceExample``."""

from tensorweave.formats.example_proto import (  # noqa: F401 - re-exported under TF's path
    Example,
    SequenceExample,
)
