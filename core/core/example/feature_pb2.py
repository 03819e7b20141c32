"""Alias of ``tensorflow.core.example.feature_pb2``: the feature messages of an ``Example``."""

from tensorweave.formats.example_proto import (  # noqa: F401 - re-exported under TF's path
    BytesList,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
)
