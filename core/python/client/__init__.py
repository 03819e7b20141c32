"""Alias of ``tensorflow.python.client``: tensorweave's objects under TF's private paths."""
