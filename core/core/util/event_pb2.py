"""Alias of ``tensorflow.core.util.event_pb2``: the very classes ``tw.Event`` and friends are."""

from tensorweave.formats.summary_proto import (  # noqa: F401 - re-exported under TF's path
    Event,
    LogMessage,
    SessionLog,
    TaggedRunMetadata,
)
