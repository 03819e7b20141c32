"""`benchmarks/run.py --quick` and the other benchmarks' ``--quick`` runs: every figure computes and
is printed (a smoke check; nothing is asserted about speed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FIGURES = [
    "seed-graph step, local, Session.run",
    "seed-graph step, local, make_callable",
    "elementwise chain (tiny ops)",
    "first run, ",
    "8 matmuls of 128x128 float32",
    "LSTM training step, dynamic_rnn, 10 steps",
    "memory: step peak",
    "memory: RSS growth",
    "distributed small step (ps + worker)",
    "MiB ps -> worker",
    "MiB fetch to the client",
    "embedding step, 20k x 64 table on the ps",
]


def test_quick_run_prints_every_figure() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = proc.stdout.splitlines()
    for figure in FIGURES:
        matching = [row for row in rows if figure in row]
        assert len(matching) == 1, f"no single row for {figure!r} in:\n{proc.stdout}"
        assert matching[0].rstrip().endswith(("pass", "MISS")), matching[0]
    assert f"of {len(FIGURES)} targets met" in proc.stdout


def test_checkpoint_benchmark_prints_its_ratios() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "checkpoint.py"), "--quick"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for figure in ("save 8 MiB checkpoint", "restore 8 MiB checkpoint"):
        [row] = [row for row in proc.stdout.splitlines() if row.startswith(figure)]
        assert row.rstrip().endswith("x"), row


CODEC_FIGURES = ["decode_jpeg 128x128x3", "encode_jpeg 128x128x3", "decode_png 128x128x3",
                 "encode_png 128x128x3", "resize, num_parallel_calls=None",
                 "resize, num_parallel_calls=1", "resize, num_parallel_calls=2",
                 "num_parallel_calls=2 over 1", "decode_gif 4x64x64x3",
                 "TFRecordDataset num_parallel_reads=2 over 1",
                 "interleave(TFRecordDataset.map), 2 parallel calls over 1",
                 "regex_full_match (a+)+$", "TF's accept/reject on"]


def test_codecs_quick_run_prints_every_figure() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "codecs.py"), "--quick"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = proc.stdout.splitlines()
    for figure in CODEC_FIGURES:
        matching = [row for row in rows if figure in row]
        assert len(matching) == 1, f"no single row for {figure!r} in:\n{proc.stdout}"
        assert matching[0].rstrip().endswith(("pass", "MISS", "-")), matching[0]


def test_example_parsing_quick_run_prints_its_ratio() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "example_parsing.py"),
                           "--quick"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [row] = [row for row in proc.stdout.splitlines() if row.startswith("parse_example of 64")]
    assert row.rstrip().endswith("x"), row


def test_graph_def_benchmark_prints_its_ratios() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "graph_def.py"),
                           "--nodes", "400", "--repeats", "2"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = proc.stdout.splitlines()
    assert rows[0].startswith("402 nodes")
    for label in ("parse     tw/protobuf:", "serialize tw/protobuf:"):
        [row] = [r for r in rows if r.startswith(label)]
        assert row.endswith("(target <= 1.2x)"), row
