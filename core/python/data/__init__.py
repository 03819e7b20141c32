"""Alias of ``tensorflow.python.data``: tensorweave's objects under TF's private paths."""
