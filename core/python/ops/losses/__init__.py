"""Alias of ``tensorflow.python.ops.losses``: tensorweave's objects under TF's private paths."""
