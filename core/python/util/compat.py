"""Alias of ``tensorflow.python.util.compat``: re-exports the bytes/text helpers of
`tensorweave.compat`.
"""

from tensorweave.compat import as_bytes, as_str, as_text
