"""Alias of ``tensorflow.python.data.ops``: tensorweave's objects under TF's private paths."""
