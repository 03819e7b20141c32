"""Image codecs and regexes (issue 15), each figure beside a baseline measured in the same run.

Run ``python benchmarks/codecs.py --tf /path/to/python`` where that Python has TensorFlow: the
baselines are then TF's own ops, timed in a subprocess on the same files (TF 1 style, graph
mode and ``Session.run``, as tensorweave is timed). Without ``--tf`` the baselines are the
libraries called directly (simplejpeg, Pillow, imagecodecs, RE2). Figures and targets:

- ``decode_jpeg`` and ``encode_jpeg`` (quality 95) of a 1024x1024 RGB image: <= 1.5x the
  baseline's time per call; ``decode_png``/``encode_png`` of the same image: ratio only;
- decode + resize of 200 JPEGs through ``tf.data`` ``map``: >= 0.8x the baseline's images per
  second, and with ``num_parallel_calls=2`` faster than with 1 (the kernels release the GIL);
- ``decode_gif`` of a 4-frame 512x512 animation (frames cropped to what changed): ratio only;
- reader scaling over TFRecord files of JPEGs (ratios of tensorweave's own rates, 2 over 1):
  ``TFRecordDataset(num_parallel_reads=1 vs 2)`` with the decode + resize in ``map``, and
  ``interleave(TFRecordDataset(f).map(decode + resize), num_parallel_calls=1 vs 2)``; the two
  settings alternate, three runs each, medians;
- ``regex_full_match`` with ``(a+)+$`` on 30 a's and a b: < 10 ms; and TF's accept/reject
  verdict on every pattern of ``tests/data/regex/verdicts.json``.

``--quick`` runs at small sizes as a smoke check (the results mean nothing). Nothing is
asserted; the exit code is 0 unless a figure fails to compute.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import imagecodecs
import numpy as np
import simplejpeg
from PIL import Image

import tensorweave as tf
from tensorweave.engine import errors
from tensorweave.plugins.kernels import re2_regex

ROOT = Path(__file__).resolve().parent.parent
VERDICTS = ROOT / "tests" / "data" / "regex" / "verdicts.json"


@attrs.frozen
class Sizes:
    side: int  # the square image of the codec figures
    repeats: int
    files: int  # JPEGs through the tf.data pipeline
    file_side: int
    resize: int


FULL = Sizes(side=1024, repeats=15, files=200, file_side=500, resize=224)
QUICK = Sizes(side=128, repeats=3, files=20, file_side=64, resize=32)
RECORD_FILES = 4  # the TFRecord files the JPEGs are spread over, for the reader figures


@attrs.frozen
class Figure:
    """One row: tensorweave's value, the baseline's, and the target (empty: ratio only)."""

    name: str
    value: float
    baseline: float
    unit: str
    target: str = ""
    met: bool | None = None


def picture(side: int, seed: int) -> np.ndarray:
    """Gradients, edges and mild noise, as a photograph has them."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:side, 0:side].astype(np.float32)
    planes = [128 + 100 * np.sin(x / 37.0 + seed) * np.cos(y / 53.0), 255 * (x + y) / (2 * side),
              np.where((x // 61 + y // 47) % 2 == 0, 60.0, 200.0)]
    image = np.stack(planes, -1) + rng.normal(0, 6, (side, side, 3))
    return np.clip(image, 0, 255).astype(np.uint8)


def jpeg_bytes(image: np.ndarray, quality: int = 95) -> bytes:
    out = io.BytesIO()
    Image.fromarray(image).save(out, "JPEG", quality=quality, dpi=(300, 300))
    return out.getvalue()


def gif_bytes(side: int) -> bytes:
    """A 4-frame animation as Pillow writes it: later frames cropped to what changed."""
    frames = []
    for i in range(4):
        image = picture(side, 7).copy()
        image[side // 4 + 8 * i:side // 2 + 8 * i, side // 8:side // 2] = (255, 40 * i, 0)
        frames.append(Image.fromarray(image).convert("P", palette=Image.ADAPTIVE, colors=256))
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:])
    return out.getvalue()


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def tensorweave_codecs(image: np.ndarray, jpeg: bytes, png: bytes, gif: bytes,
                       repeats: int) -> dict:
    """Seconds per ``Session.run`` of each codec op on fed data."""
    graph = tf.Graph()
    with graph.as_default():
        data = tf.placeholder(tf.string, [])
        pixels = tf.placeholder(tf.uint8, [None, None, 3])
        ops = {"decode_jpeg": (tf.image.decode_jpeg(data), {data: jpeg}),
               "encode_jpeg": (tf.image.encode_jpeg(pixels, quality=95), {pixels: image}),
               "decode_png": (tf.image.decode_png(data), {data: png}),
               "encode_png": (tf.image.encode_png(pixels), {pixels: image}),
               "decode_gif": (tf.image.decode_gif(data), {data: gif})}
    with tf.Session(graph=graph) as sess:
        return {name: median_seconds(lambda op=op, feed=feed: sess.run(op, feed), repeats)
                for name, (op, feed) in ops.items()}


def library_codecs(image: np.ndarray, jpeg: bytes, png: bytes, gif: bytes,
                   repeats: int) -> dict:
    """The same work, the libraries called directly."""
    return {"decode_jpeg": median_seconds(lambda: simplejpeg.decode_jpeg(jpeg, fastdct=True),
                                          repeats),
            "encode_jpeg": median_seconds(lambda: jpeg_bytes(image), repeats),
            "decode_png": median_seconds(lambda: imagecodecs.png_decode(png), repeats),
            "encode_png": median_seconds(lambda: imagecodecs.png_encode(image), repeats),
            "decode_gif": median_seconds(lambda: imagecodecs.gif_decode(gif), repeats)}


def tensorweave_pipeline(files: list[bytes], resize: int, parallel: int | None) -> float:
    """Images per second through ``from_tensor_slices -> map(decode, resize)``."""
    with tf.Graph().as_default():
        return _rate(tf.data.Dataset.from_tensor_slices(files).map(
            _decode_resize(resize), num_parallel_calls=parallel))


def _decode_resize(resize: int) -> Callable[[object], object]:
    return lambda x: tf.image.resize_images(tf.image.decode_jpeg(x, channels=3),
                                            [resize, resize])


def _rate(dataset: object) -> float:
    item = tf.data.make_one_shot_iterator(dataset).get_next()
    with tf.Session() as sess:
        start, count = time.perf_counter(), 0
        try:
            while True:
                sess.run(item)
                count += 1
        except errors.OutOfRangeError:
            pass
    return count / (time.perf_counter() - start)


def reader_rates(paths: list[str], resize: int, runs: int) -> dict:
    """Images per second of the two reader figures at 1 and 2, the settings alternating
    (``runs`` each, medians) so that a busy machine slows both alike."""
    def reads(parallel: int) -> float:
        with tf.Graph().as_default():
            return _rate(tf.data.TFRecordDataset(paths, num_parallel_reads=parallel).map(
                _decode_resize(resize)))

    def interleaved(parallel: int) -> float:
        with tf.Graph().as_default():
            return _rate(tf.data.Dataset.from_tensor_slices(paths).interleave(
                lambda name: tf.data.TFRecordDataset(name).map(_decode_resize(resize)),
                cycle_length=2, num_parallel_calls=parallel))

    rates: dict = {}
    for _ in range(runs):
        for name, fn in (("reads", reads), ("interleave", interleaved)):
            for parallel in (1, 2):
                rates.setdefault((name, parallel), []).append(fn(parallel))
    return {key: float(np.median(values)) for key, values in rates.items()}


def write_records(files: list[bytes], folder: Path) -> list[str]:
    """`files` spread over `RECORD_FILES` TFRecord files in `folder`, one JPEG a record."""
    paths = [str(folder / f"jpegs-{i}.tfrecord") for i in range(RECORD_FILES)]
    for i, path in enumerate(paths):
        with tf.python_io.TFRecordWriter(path) as writer:
            for data in files[i::RECORD_FILES]:
                writer.write(data)
    return paths


def library_pipeline(files: list[bytes], resize: int) -> float:
    """The same decode and bilinear resize, by the libraries in a Python loop."""
    start = time.perf_counter()
    for data in files:
        Image.fromarray(simplejpeg.decode_jpeg(data, fastdct=True)).resize((resize, resize),
                                                                           Image.BILINEAR)
    return len(files) / (time.perf_counter() - start)


TF_SCRIPT = r'''
import json, sys, time
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
folder, repeats, resize = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
image = np.load(folder + "/image.npy")
jpeg = open(folder + "/image.jpg", "rb").read()
png = open(folder + "/image.png", "rb").read()
gif = open(folder + "/image.gif", "rb").read()
files = json.load(open(folder + "/files.json"))
files = [open(name, "rb").read() for name in files]

def median(fn):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter(); fn(); times.append(time.perf_counter() - start)
    return float(np.median(times))

out = {}
graph = tf.Graph()
with graph.as_default():
    data = tf.placeholder(tf.string, [])
    pixels = tf.placeholder(tf.uint8, [None, None, 3])
    ops = {"decode_jpeg": (tf.image.decode_jpeg(data), {data: jpeg}),
           "encode_jpeg": (tf.image.encode_jpeg(pixels, quality=95), {pixels: image}),
           "decode_png": (tf.image.decode_png(data), {data: png}),
           "encode_png": (tf.image.encode_png(pixels), {pixels: image}),
           "decode_gif": (tf.image.decode_gif(data), {data: gif})}
with tf.Session(graph=graph) as sess:
    for name, (op, feed) in ops.items():
        out[name] = median(lambda: sess.run(op, feed))
for parallel in (None, 1, 2):
    graph = tf.Graph()
    with graph.as_default():
        dataset = tf.data.Dataset.from_tensor_slices(files).map(
            lambda x: tf.image.resize_images(tf.image.decode_jpeg(x, channels=3),
                                             [resize, resize]), num_parallel_calls=parallel)
        item = tf.data.make_one_shot_iterator(dataset).get_next()
    with tf.Session(graph=graph) as sess:
        start, count = time.perf_counter(), 0
        try:
            while True:
                sess.run(item); count += 1
        except tf.errors.OutOfRangeError:
            pass
    out["pipeline_%s" % parallel] = count / (time.perf_counter() - start)
print(json.dumps(out))
'''


def tf_figures(python: str, folder: Path, files: list[Path], sizes: Sizes) -> dict:
    (folder / "files.json").write_text(json.dumps([str(p) for p in files]))
    proc = subprocess.run([python, "-c", TF_SCRIPT, str(folder), str(sizes.repeats),
                           str(sizes.resize)], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def regex_figures(repeats: int) -> list[Figure]:
    graph = tf.Graph()
    with graph.as_default():
        match = tf.strings.regex_full_match(tf.constant("a" * 30 + "b"), "(a+)+$")
    with tf.Session(graph=graph) as sess:
        seconds = median_seconds(lambda: sess.run(match), repeats)
    regex = re2_regex.compile_pattern(b"(a+)+$")
    direct = median_seconds(lambda: re2_regex.full_match(regex, b"a" * 30 + b"b"), repeats)
    table = json.loads(VERDICTS.read_text())["table"]
    agree = 0
    for row in table:
        try:
            re2_regex.compile_pattern(row["pattern"].encode())
            agree += "error" not in row
        except ValueError:
            agree += "error" in row
    return [Figure("regex_full_match (a+)+$ on 30 a's + b, Session.run", seconds * 1e3,
                   direct * 1e3, "ms", "< 10 ms", seconds < 0.01),
            Figure(f"TF's accept/reject on {len(table)} patterns", agree, len(table), "agree",
                   "all", agree == len(table))]


def figures(sizes: Sizes, tf_python: str | None) -> tuple[list[Figure], str]:
    image = picture(sizes.side, 0)
    jpeg, png = jpeg_bytes(image), imagecodecs.png_encode(image)
    gif = gif_bytes(sizes.side // 2)
    files = [jpeg_bytes(picture(sizes.file_side, seed), 90) for seed in range(sizes.files)]
    ours = tensorweave_codecs(image, jpeg, png, gif, sizes.repeats)
    rates = {p: tensorweave_pipeline(files, sizes.resize, p) for p in (None, 1, 2)}
    with tempfile.TemporaryDirectory() as folder:
        readers = reader_rates(write_records(files, Path(folder)), sizes.resize, 3)
        if tf_python:
            base = Path(folder)
            np.save(base / "image.npy", image)
            (base / "image.jpg").write_bytes(jpeg)
            (base / "image.png").write_bytes(png)
            (base / "image.gif").write_bytes(gif)
            paths = []
            for i, data in enumerate(files):
                paths.append(base / f"{i}.jpg")
                paths[-1].write_bytes(data)
            theirs = tf_figures(tf_python, base, paths, sizes)
            baseline = "TensorFlow"
        else:
            theirs = library_codecs(image, jpeg, png, gif, sizes.repeats)
            theirs["pipeline_None"] = library_pipeline(files, sizes.resize)
            theirs["pipeline_1"] = theirs["pipeline_2"] = theirs["pipeline_None"]
            baseline = "the libraries directly"
    side = sizes.side
    rows = []
    for name, target in (("decode_jpeg", 1.5), ("encode_jpeg", 1.5), ("decode_png", None),
                         ("encode_png", None)):
        rows.append(Figure(f"{name} {side}x{side}x3", ours[name] * 1e3, theirs[name] * 1e3, "ms",
                           f"<= {target}x" if target else "",
                           ours[name] <= target * theirs[name] if target else None))
    rows.append(Figure(f"decode_gif 4x{side // 2}x{side // 2}x3", ours["decode_gif"] * 1e3,
                       theirs["decode_gif"] * 1e3, "ms"))
    for parallel in (None, 1, 2):
        value, other = rates[parallel], theirs[f"pipeline_{parallel}"]
        rows.append(Figure(f"{sizes.files} JPEGs decode+resize, num_parallel_calls={parallel}",
                           value, other, "img/s", ">= 0.8x", value >= 0.8 * other))
    rows.append(Figure("num_parallel_calls=2 over 1 (tensorweave)", rates[2], rates[1], "img/s",
                       "> 1x", rates[2] > rates[1]))
    rows.append(Figure(f"TFRecordDataset num_parallel_reads=2 over 1, {RECORD_FILES} files",
                       readers["reads", 2], readers["reads", 1], "img/s"))
    rows.append(Figure("interleave(TFRecordDataset.map), 2 parallel calls over 1",
                       readers["interleave", 2], readers["interleave", 1], "img/s"))
    return rows + regex_figures(sizes.repeats * 20), baseline


def table(rows: list[Figure], baseline: str) -> str:
    width = max(len(f.name) for f in rows)
    lines = [f"baseline: {baseline}",
             f"{'figure':<{width}}  {'tensorweave':>14}  {'baseline':>14}  {'ratio':>7}  "
             f"{'target':<9}  result"]
    for f in rows:
        ratio = f"{f.value / f.baseline:.3g}x" if f.baseline else "-"
        result = "-" if f.met is None else "pass" if f.met else "MISS"
        lines.append(f"{f.name:<{width}}  {f.value:>10.4g} {f.unit:<3}  {f.baseline:>10.4g} "
                     f"{f.unit:<3}  {ratio:>7}  {f.target:<9}  {result}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke check")
    parser.add_argument("--tf", metavar="PYTHON", help="a Python with TensorFlow: TF's baselines")
    args = parser.parse_args(argv)
    rows, baseline = figures(QUICK if args.quick else FULL, args.tf)
    print(table(rows, baseline))
    if args.quick:
        print("(--quick: small sizes against full-size targets; the results mean nothing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
