"""Alias of ``tensorflow.core.framework.summary_pb2``: the very classes ``tw.Summary`` and
friends are."""

from tensorweave.formats.summary_proto import (  # noqa: F401 - re-exported under TF's path
    HistogramProto,
    Summary,
    SummaryDescription,
    SummaryMetadata,
)
