"""``tw.app.run``: parse known flags, call main with the rest, exit with its result."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import tensorweave as tw


def test_run_passes_remaining_args_and_exits_with_main_result() -> None:
    script = textwrap.dedent("""
        import tensorweave as tf
        tf.app.flags.DEFINE_integer("steps", 1, "")
        def main(argv):
            print(argv[1:], tf.app.flags.FLAGS.steps)
            return 3
        tf.app.run()
    """)
    done = subprocess.run([sys.executable, "-c", script, "--steps=5", "--unknown", "x"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == "['--unknown', 'x'] 5"


def test_run_with_explicit_main_and_argv() -> None:
    seen = []
    with pytest.raises(SystemExit) as exit_info:
        tw.app.run(main=seen.append, argv=["prog", "a", "b"])
    assert exit_info.value.code is None
    assert seen == [["prog", "a", "b"]]
