"""``tw.app``: ``tf.compat.v1.app``, the entry point of TF 1.x scripts.

Contract: ``run(main=None, argv=None)`` parses the known flags out of `argv` (``sys.argv``
when None) into `tw.flags.FLAGS`, leaving unknown ``--x`` arguments to the script, calls
``main(remaining_argv)`` (the ``__main__`` module's ``main`` when none is given) and exits the
process with its return value, as ``tf.app.run`` does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from tensorweave.platform import flags

__all__ = ["flags", "run"]


def run(main: Callable[[list[str]], Any] | None = None,
        argv: Sequence[str] | None = None) -> NoReturn:
    """Parse flags, run `main` with the remaining arguments, then ``sys.exit`` its result."""
    main = main or sys.modules["__main__"].main
    remaining = flags.FLAGS(sys.argv if argv is None else argv, known_only=True)
    sys.exit(main(remaining))
