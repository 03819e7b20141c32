"""``tf.parse_example`` of a batch of serialized ``tf.train.Example``s, beside a baseline measured
in the same run.

Run ``python benchmarks/example_parsing.py [--tf PYTHON] [--tw-base DIR [--rounds 3]]``. The
batch: 1024 Examples, each with three dense features (int64 ``[1]``, float ``[3]``, bytes
``[1]``) and two sparse ones (int64, bytes). tensorweave's figure is one ``Session.run`` of
``parse_example`` on the fed batch. The baseline is, with ``--tf``, TF's ``parse_example`` timed
the same way in a subprocess (TF 1 style: graph mode, ``Session.run``), else the protobuf
package and numpy called directly: each record parsed by ``Example.FromString`` and its
features gathered into the same arrays in a Python loop. ``--tw-base`` names a directory where
``import tensorweave`` finds a baseline tensorweave (put first on ``PYTHONPATH``): one more row
times it and this tensorweave on the same bytes, in fresh processes, alternated for
``--rounds`` rounds (medians), so a before/after comparison runs in one run. Ratios only (no
target); ``--quick`` runs a small batch as a smoke check. Nothing is asserted about speed; the
exit code is 0 unless a figure fails to compute or tensorweave's outputs differ from the
protobuf loop's (checked first).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from common import timed  # the sibling module: a script's own folder is on sys.path

import tensorweave as tf

DENSE = {"age": (tf.int64, [1]), "score": (tf.float32, [3]), "name": (tf.string, [1])}
SPARSE = {"ids": tf.int64, "tags": tf.string}


def records(count: int) -> list[bytes]:
    """`count` serialized Examples holding the features of `DENSE` and `SPARSE`."""
    out = []
    for i in range(count):
        example = tf.train.Example()
        feature = example.features.feature
        feature["age"].int64_list.value.append(i)
        feature["score"].float_list.value.extend([0.5 * i, 1.0, 2.0])
        feature["name"].bytes_list.value.append(b"name%d" % i)
        feature["ids"].int64_list.value.extend(range(i % 5))
        feature["tags"].bytes_list.value.extend([b"a", b"bb"][: i % 3])
        out.append(example.SerializeToString())
    return out


def tensorweave_seconds(batch: list[bytes], repeats: int) -> float:
    """Seconds per ``Session.run`` of ``parse_example`` on `batch`, after checking that its
    outputs are `library_parse`'s."""
    graph = tf.Graph()
    with graph.as_default():
        serialized = tf.placeholder(tf.string, [None])
        features = {key: tf.FixedLenFeature(shape, dtype) for key, (dtype, shape) in DENSE.items()}
        features.update({key: tf.VarLenFeature(dtype) for key, dtype in SPARSE.items()})
        parsed = tf.parse_example(serialized, features)
    with tf.Session(graph=graph) as sess:
        got, expected = sess.run(parsed, {serialized: batch}), library_parse(batch)
        for key in DENSE:
            np.testing.assert_array_equal(got[key], expected[key])
        for key in SPARSE:
            np.testing.assert_array_equal(got[key].indices, expected[key][0])
            np.testing.assert_array_equal(got[key].values, expected[key][1])
        return float(np.median(timed(lambda: sess.run(parsed, {serialized: batch}), repeats)))


def library_parse(batch: list[bytes]) -> dict[str, object]:
    """The outputs of `tensorweave_seconds`'s ``parse_example``, by protobuf and numpy."""
    dense: dict[str, list] = {key: [] for key in DENSE}
    sparse: dict[str, tuple[list, list]] = {key: ([], []) for key in SPARSE}
    for b, data in enumerate(batch):
        feature = tf.train.Example.FromString(data).features.feature
        for key, rows in dense.items():
            kind = feature[key].WhichOneof("kind")
            rows.append(list(getattr(feature[key], kind).value))
        for key, (indices, values) in sparse.items():
            found = feature.get(key)
            kind = found.WhichOneof("kind") if found is not None else None
            got = list(getattr(found, kind).value) if kind else []
            indices.extend((b, j) for j in range(len(got)))
            values.extend(got)
    out: dict[str, object] = {}
    for key, rows in dense.items():
        dtype = DENSE[key][0]
        out[key] = np.array(rows, dtype=object if dtype == tf.string else dtype.as_numpy_dtype)
    for key, (indices, values) in sparse.items():
        dtype = object if SPARSE[key] == tf.string else SPARSE[key].as_numpy_dtype
        out[key] = (np.array(indices, np.int64).reshape(-1, 2), np.array(values, dtype))
    return out


TF_SCRIPT = r'''
import json, sys, time
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
path, repeats = sys.argv[1], int(sys.argv[2])
batch = [bytes.fromhex(h) for h in json.load(open(path))]
graph = tf.Graph()
with graph.as_default():
    serialized = tf.placeholder(tf.string, [None])
    features = {"age": tf.FixedLenFeature([1], tf.int64),
                "score": tf.FixedLenFeature([3], tf.float32),
                "name": tf.FixedLenFeature([1], tf.string),
                "ids": tf.VarLenFeature(tf.int64), "tags": tf.VarLenFeature(tf.string)}
    parsed = tf.parse_example(serialized, features)
with tf.Session(graph=graph) as sess:
    sess.run(parsed, {serialized: batch})
    times = []
    for _ in range(repeats):
        start = time.perf_counter(); sess.run(parsed, {serialized: batch})
        times.append(time.perf_counter() - start)
print(float(np.median(times)))
'''


def subprocess_seconds(command: list[str], pythonpath: str | None = None) -> float:
    """The seconds a subprocess prints last (`pythonpath` first on its ``PYTHONPATH``)."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    proc = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    return float(proc.stdout.strip().splitlines()[-1])


def read_batch(path: Path) -> list[bytes]:
    return [bytes.fromhex(h) for h in json.loads(path.read_text())]


def figures(args: argparse.Namespace, path: Path, count: int, repeats: int) -> list[str]:
    """The printed rows: tensorweave against the baseline (and against ``--tw-base``)."""
    batch = read_batch(path)
    worker = [sys.executable, __file__, "--worker", str(path), str(repeats)]
    rows = []
    if args.tw_base:
        # alternated rounds, each in a fresh process, so both meet the same machine load
        base, ours = [], []
        for _ in range(args.rounds):
            base.append(subprocess_seconds(worker, os.path.abspath(args.tw_base)))
            ours.append(subprocess_seconds(worker))
        rows.append(row(f"parse_example of {count} Examples, against --tw-base",
                        float(np.median(ours)), float(np.median(base))))
    ours_here = tensorweave_seconds(batch, repeats)
    if args.tf:
        theirs = subprocess_seconds([args.tf, "-c", TF_SCRIPT, str(path), str(repeats)])
        baseline = "TensorFlow's parse_example"
    else:
        theirs = float(np.median(timed(lambda: library_parse(batch), repeats, warmup=1)))
        baseline = "protobuf's Example.FromString + numpy, in a Python loop"
    return [f"baseline: {baseline}", row(f"parse_example of {count} Examples", ours_here, theirs),
            *rows]


def row(name: str, ours: float, theirs: float) -> str:
    return f"{name}  {ours * 1e3:10.4g} ms  {theirs * 1e3:10.4g} ms  {ours / theirs:.3g}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="a small batch: a smoke check")
    parser.add_argument("--tf", metavar="PYTHON", help="a Python with TensorFlow: TF's baseline")
    parser.add_argument("--tw-base", metavar="DIR",
                        help="a directory where `import tensorweave` finds a baseline to compare")
    parser.add_argument("--rounds", type=int, default=3, help="alternated --tw-base rounds")
    parser.add_argument("--worker", nargs=2, metavar=("BATCH", "REPEATS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(tensorweave_seconds(read_batch(Path(args.worker[0])), int(args.worker[1])))
        return 0
    count, repeats = (64, 3) if args.quick else (1024, 15)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "batch.json"
        path.write_text(json.dumps([data.hex() for data in records(count)]))
        print("\n".join(figures(args, path, count, repeats)))
    if args.quick:
        print("(--quick: a small batch; the result means nothing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
