"""``examples/sequence_classifier.py``: an LSTM (``dynamic_rnn``, so a ``While`` node and its
gradient) trained with a MonitoredTrainingSession, in one process and on a 1 ps + 1 worker
cluster.

The label is the sign of a sequence's sum, so an untrained classifier scores about 50 %; a
trained one scores about 96 % after 100 steps. The run is seeded, and the same graph on the
cluster must print the very losses the local run prints.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import tensorweave as tf

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "examples" / "sequence_classifier.py"


def run(tmp_path: Path, *flags: str) -> str:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--steps", "100", "--checkpoint-dir", str(tmp_path),
         *flags], env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
        timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def test_local_and_cluster_runs_learn_the_same_way(tmp_path: Path) -> None:
    local = run(tmp_path / "local", "--local")
    cluster = run(tmp_path / "cluster")
    losses = [re.findall(r"loss = ([0-9.]+), step = (\d+)", out) for out in (local, cluster)]
    assert [step for _, step in losses[0]] == ["1", "51"]  # read after the update, as TF
    assert losses[0] == losses[1]
    assert float(losses[0][-1][0]) < 0.5 * float(losses[0][0][0])
    for out, directory in ((local, "local"), (cluster, "cluster")):
        assert float(re.search(r"held-out accuracy: ([0-9.]+)", out).group(1)) > 0.9
        assert tf.train.latest_checkpoint(str(tmp_path / directory)).endswith("model.ckpt-100")
