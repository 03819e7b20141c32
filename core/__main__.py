"""``python -m tensorweave``: the `tensorweave` command."""

import sys

from tensorweave.cli import main

sys.exit(main())
