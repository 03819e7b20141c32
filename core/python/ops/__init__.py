"""Alias of ``tensorflow.python.ops``: tensorweave's objects under TF's private paths."""
