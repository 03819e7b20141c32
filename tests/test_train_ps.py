"""The main job's ``--local`` mode: it converges, checkpoints, and a second run resumes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def train(checkpoint_dir: Path, steps: int) -> str:
    result = subprocess.run(
        [sys.executable, str(REPO / "examples" / "train_ps.py"), "--local", "--steps",
         str(steps), "--checkpoint-dir", str(checkpoint_dir)],
        env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
        timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_local_training_converges_and_resumes(tmp_path) -> None:
    first = train(tmp_path, 200)
    assert "Starting from scratch" in first
    assert re.search(r"step 200/200\s+loss [0-9.]+\s+acc [0-9.]+", first)
    accuracy = float(re.search(r"Final accuracy: train ([0-9.]+)", first).group(1))
    assert accuracy > 0.98
    second = train(tmp_path, 50)
    assert f"Resumed from {tmp_path / 'model.ckpt-200'}" in second
    assert "step 250/250" in second and "global step 250" in second
    assert (tmp_path / "model.ckpt-250").exists()

