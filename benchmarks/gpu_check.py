"""The GPU check: the GPU tests, a matmul chain against cupy, copy throughput against cupy.

Run ``python benchmarks/gpu_check.py`` on a machine with cupy and a CUDA device. It runs
``pytest -q tests/test_gpu.py``; times a chain of 8 float32 4096x4096 matmuls through a
tensorweave session against the same chain called on cupy directly (target: at most 1.1x); and
measures host->device, device->host and (with two GPUs) device->device throughput through
tensorweave's copy path (the ``tensorweave_copy_tensor`` hook, as ``_Recv`` uses it) against
cupy's own copy of the same arrays (target: at least 70 %). Both sides of every ratio are
measured in this run. A summary closes the output; the exit code is 1 when a target is missed.
Without cupy or a CUDA device it says why it cannot run and exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import common
import numpy as np

import tensorweave as tf
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.plugins.gpu import devices
from tensorweave.plugins.gpu.cuda import probe

ROOT = Path(__file__).resolve().parent.parent
MATMUL_SIZE, MATMUL_CHAIN = 4096, 8
MATMUL_TARGET, COPY_TARGET = 1.1, 0.70


def median_seconds(fn: Callable[[], object], repeats: int, warmup: int = 2) -> float:
    return statistics.median(common.timed(fn, repeats, warmup))


def run_tests() -> tuple[bool, str]:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/test_gpu.py"], cwd=ROOT,
                          capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    print(proc.stdout[-4000:], proc.stderr[-2000:], sep="\n")
    return proc.returncode == 0, lines[-1] if lines else f"pytest exited {proc.returncode}"


def matmul_chain(cupy: object, repeats: int) -> tuple[float, float, str]:
    """(tensorweave seconds, cupy seconds, where the matmuls ran) for one chain."""
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((MATMUL_SIZE, MATMUL_SIZE), dtype=np.float32)
    # N(0, 1/n) weights keep every product's entries near N(0, 1): no overflow along the chain.
    w0 = (rng.standard_normal((MATMUL_SIZE, MATMUL_SIZE), dtype=np.float32)
          / np.float32(np.sqrt(MATMUL_SIZE)))

    tf.reset_default_graph()
    x, w = tf.Variable(x0), tf.Variable(w0)
    h = x
    for _ in range(MATMUL_CHAIN):
        h = tf.matmul(h, w)
    total = tf.reduce_sum(h)
    meta = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tw_value = sess.run(total, options=tf.RunOptions(output_partition_graphs=True),
                            run_metadata=meta)
        tw_seconds = median_seconds(lambda: sess.run(total), repeats)
    placed = sorted({n.device.rsplit("/", 1)[-1] for g in meta.partition_graphs for n in g.node
                     if n.op == "MatMul"})

    xg, wg = cupy.asarray(x0), cupy.asarray(w0)

    def direct() -> float:
        hg = xg
        for _ in range(MATMUL_CHAIN):
            hg = hg @ wg
        return float(hg.sum())

    cupy_value = direct()
    if not np.isclose(tw_value, cupy_value, rtol=1e-3):
        raise AssertionError(f"matmul chain differs: tensorweave {tw_value}, cupy {cupy_value}")
    return tw_seconds, median_seconds(direct, repeats), ", ".join(placed)


def copy_rates(cupy: object, nbytes: int,
               repeats: int) -> list[tuple[str, float, float, float | None]]:
    """(direction, tensorweave GB/s, cupy GB/s, cupy GB/s with pinned host memory) for each copy
    this machine can make. The ratio's baseline is cupy's own call on the same pageable array
    (``cupy.asarray``, ``ndarray.get``); the pinned figure is the ceiling, for reference."""
    import cupyx  # only importable where cupy is, which `main` has checked

    hook = get_registries().manager.hook.tensorweave_copy_tensor
    cpu = Device.create(TaskSpec(), "CPU", 0, np)
    gpus = devices.create_devices(TaskSpec(), tf.ConfigProto())
    host = np.random.default_rng(1).standard_normal(nbytes // 4, dtype=np.float32)
    on_gpu = cupy.asarray(host)
    sync = cupy.cuda.runtime.deviceSynchronize

    def rate(fn: Callable[[], object]) -> float:
        def timed() -> None:
            fn()
            sync()

        return nbytes / median_seconds(timed, repeats) / 1e9

    pinned = cupyx.empty_pinned(host.shape, host.dtype)
    pinned[...] = host
    rows = [
        ("host->device", rate(lambda: hook(src=cpu, dst=gpus[0], value=host)),
         rate(lambda: cupy.asarray(host)),
         rate(lambda: on_gpu.data.copy_from_host_async(pinned.ctypes.data, nbytes))),
        ("device->host", rate(lambda: hook(src=gpus[0], dst=cpu, value=on_gpu)),
         rate(lambda: on_gpu.get()),
         rate(lambda: on_gpu.data.copy_to_host_async(pinned.ctypes.data, nbytes))),
    ]
    if len(gpus) > 1:
        def cupy_peer() -> None:
            with cupy.cuda.Device(1):
                out = cupy.empty_like(on_gpu)
                out.data.copy_from_device_async(on_gpu.data, on_gpu.nbytes)
                cupy.cuda.get_current_stream().synchronize()

        rows.append(("device->device", rate(lambda: hook(src=gpus[0], dst=gpus[1],
                                                         value=on_gpu)), rate(cupy_peer), None))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-tests", action="store_true", help="do not run the GPU tests")
    parser.add_argument("--copy-mib", type=int, default=256, help="array size of the copies")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)

    status = probe()
    if not status.available:
        print(f"gpu_check: cannot run here: {status.reason}.")
        print("SUMMARY: skipped (needs cupy and a CUDA device)")
        return 0
    cupy = status.cupy
    summary: list[tuple[str, bool | None, str]] = []
    print(f"gpu_check on cupy {cupy.__version__}: "
          + ", ".join(f"GPU:{i} {name}" for i, name in enumerate(status.device_names)))

    if args.skip_tests:
        summary.append(("GPU tests", None, "skipped (--skip-tests)"))
    else:
        ok, line = run_tests()
        summary.append(("GPU tests", ok, line))

    tw_s, cupy_s, placed = matmul_chain(cupy, args.repeats)
    ratio = tw_s / cupy_s
    summary.append((f"matmul chain {MATMUL_CHAIN}x{MATMUL_SIZE}^2 f32", ratio <= MATMUL_TARGET,
                    f"tensorweave {tw_s * 1e3:.2f} ms, cupy {cupy_s * 1e3:.2f} ms, "
                    f"ratio {ratio:.3f}x (target <= {MATMUL_TARGET}x), MatMul on {placed}"))

    nbytes = args.copy_mib << 20
    for direction, tw_rate, cupy_rate, ceiling in copy_rates(cupy, nbytes, args.repeats):
        share = tw_rate / cupy_rate
        pinned = "" if ceiling is None else f"; cupy on pinned memory {ceiling:.2f} GB/s"
        summary.append((f"copy {direction} {args.copy_mib} MiB", share >= COPY_TARGET,
                        f"tensorweave {tw_rate:.2f} GB/s, cupy {cupy_rate:.2f} GB/s, "
                        f"{share:.0%} (target >= {COPY_TARGET:.0%}){pinned}"))
    if len(status.device_names) < 2:
        summary.append(("copy device->device", None, "skipped: needs two CUDA devices"))

    print("\nSUMMARY")
    for name, ok, detail in summary:
        verdict = "SKIP" if ok is None else "PASS" if ok else "FAIL"
        print(f"  {verdict:4}  {name}: {detail}")
    return 0 if all(ok is not False for _, ok, _ in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
