"""Alias of ``tensorflow.core.framework``: TF's ``*_pb2`` modules over tensorweave's classes."""
