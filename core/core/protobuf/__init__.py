"""Alias of ``tensorflow.core.protobuf``: TF's ``*_pb2`` modules over tensorweave's objects."""
