"""Alias of ``tensorflow.python.platform``: tensorweave's objects under TF's private paths."""
