"""Alias of ``tensorflow.python``: TF's private module paths over tensorweave's public objects.

TF 1 scripts often import ``from tensorflow.python.X import Y``; with tensorweave they write
``from tensorweave.python.X import Y``. Every module below re-exports the tensorweave objects
behind the TF module of the same path (the very same objects, never copies), and leaves out the
names tensorweave does not have. ``keras``, ``estimator`` and ``saved_model`` are tensorweave's
own packages under a second name (see `package_alias`).
"""

from tensorweave.python.package_alias import install

install({
    "tensorweave.python.estimator": "tensorweave.estimator",
    "tensorweave.python.keras": "tensorweave.keras",
    "tensorweave.python.saved_model": "tensorweave.saved_model",
})
