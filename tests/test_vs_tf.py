"""`benchmarks/vs_tf.py` without TensorFlow: one small wide-graph group runs and its figures are
printed (a smoke check; nothing is asserted about speed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_tensorweave_figures_alone_are_printed() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "vs_tf.py"), "--rounds", "1",
                           "--groups", "graph", "--sizes", "1000"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines()}
    assert rows["figure"] == ["tw"]
    for figure in ("graph1k_first_run_ms", "graph1k_second_run_ms"):
        assert float(rows[figure][0]) > 0


def test_a_baseline_checkout_without_its_own_venv_is_refused(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "vs_tf.py"),
                           "--tw-base", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "does not import tensorweave from" in proc.stderr
