"""Alias of ``tensorflow.python.summary``: tensorweave's objects under TF's private paths."""
