"""Alias of ``tensorflow.python.tools``: tensorweave's objects under TF's private paths."""
