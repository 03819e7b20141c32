"""Saving and restoring a 100 MiB checkpoint, against writing and reading the same bytes raw, in
the same run.

Run ``python benchmarks/checkpoint.py`` (``--quick`` for 8 MiB, a smoke check). The model is
float32 variables of 4 MiB each, 100 MiB in all. `Saver.save` (TF's V2 format: the values
fetched through the session, CRC32C'd, written to temporary files, fsynced, renamed, plus the
state file) is timed against the baseline of writing the variables' arrays to one file and
fsyncing it; `Saver.restore` (index read, data read and checked, values fed to the variables'
``Assign`` ops) against reading that file into numpy arrays. Both read from the page cache. Each
side is the fastest of `repeats` runs, the two interleaved so both see the same machine load.
The restored values are checked against the saved ones. Nothing is asserted about speed.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable

import attrs
import numpy as np

import tensorweave as tf

MIB = 1 << 20
VARIABLE_BYTES = 4 * MIB


@attrs.frozen
class Times:
    """Fastest seconds of each operation."""

    save: float
    raw_write: float
    restore: float
    raw_read: float


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def save_and_restore(total_bytes: int = 100 * MIB, repeats: int = 3) -> Times:
    """Time a checkpoint of `total_bytes` of variables; see the module docstring."""
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(VARIABLE_BYTES // 4, dtype=np.float32)
              for _ in range(total_bytes // VARIABLE_BYTES)]
    graph = tf.Graph()
    with graph.as_default():
        variables = [tf.Variable(v, name=f"v{i}") for i, v in enumerate(values)]
        saver = tf.train.Saver(max_to_keep=1)
    with tempfile.TemporaryDirectory() as directory, tf.Session(graph=graph) as sess:
        sess.run([v.initializer for v in variables])
        prefix, raw = os.path.join(directory, "model.ckpt"), os.path.join(directory, "raw")

        def save() -> None:
            saver.save(sess, prefix, write_meta_graph=False)

        def raw_write() -> None:
            with open(raw, "wb") as f:
                for v in values:
                    f.write(memoryview(v))
                f.flush()
                os.fsync(f.fileno())

        def raw_read() -> list[np.ndarray]:
            out = [np.empty_like(v) for v in values]
            with open(raw, "rb") as f:
                for array in out:
                    f.readinto(memoryview(array).cast("B"))
            return out

        times: dict[str, list[float]] = {"save": [], "raw_write": [], "restore": [],
                                         "raw_read": []}
        for _ in range(repeats):
            times["save"].append(_seconds(save))
            times["raw_write"].append(_seconds(raw_write))
            times["restore"].append(_seconds(lambda: saver.restore(sess, prefix)))
            times["raw_read"].append(_seconds(raw_read))
        restored = sess.run(variables)
        if not all(np.array_equal(a, b) for a, b in zip(restored, values)):
            raise AssertionError("the restored variables differ from the saved ones")
        if not all(np.array_equal(a, b) for a, b in zip(raw_read(), values)):
            raise AssertionError("the raw file differs from the variables")
    return Times(**{name: min(seconds) for name, seconds in times.items()})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="8 MiB: a smoke check")
    quick = parser.parse_args(argv).quick
    total = 8 * MIB if quick else 100 * MIB
    t = save_and_restore(total, repeats=2 if quick else 3)
    mib = total // MIB
    print(f"{'figure':<28}  {'tensorweave':>12}  {'baseline':>22}  {'ratio':>7}")
    for name, ours, base_name, base in (
            (f"save {mib} MiB checkpoint", t.save, "raw write + fsync", t.raw_write),
            (f"restore {mib} MiB checkpoint", t.restore, "raw read", t.raw_read)):
        print(f"{name:<28}  {ours * 1e3:>9.1f} ms  {base_name:>14} {base * 1e3:>4.0f} ms  "
              f"{ours / base:>6.2f}x")
    if quick:
        print("(--quick: small sizes; the figures mean little)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
