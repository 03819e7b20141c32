"""Alias of ``tensorflow.core.util``: TF's ``*_pb2`` modules over tensorweave's classes."""
