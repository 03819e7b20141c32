"""Alias of ``tensorflow.core.example``: TF's ``*_pb2`` modules over tensorweave's classes."""
