"""Alias of ``tensorflow.core.framework.attr_value_pb2``: ``AttrValue`` and ``NameAttrList``."""

from tensorweave.engine.proto.framework import (  # noqa: F401 - re-exported under TF's path
    AttrValue,
    NameAttrList,
)
