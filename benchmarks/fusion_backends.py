"""The fusion plugin's backend, chosen by measurement: numpy (unfused) vs numexpr vs numba.

Run ``python benchmarks/fusion_backends.py [--sizes 1000 100000 1000000] [--rounds 5]``.
For each chain (``tanh(x*w+b)*0.5+1``, a 10-op chain, Adam's dense update) on float32 arrays
of each size it prints, as medians over alternated rounds: the time per call of numpy's
op-by-op evaluation (the unfused baseline), of numexpr's compiled expression and of a numba
``vectorize``d scalar function (each backend's time as a ratio to numpy's), the per-call
overhead (a call on 1 element), and the first-call compile time of each backend. Needs both
backends installed (``pip install numexpr numba``); nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

# name -> (numpy function, numexpr expression, numba scalar body, input names)
CHAINS: dict[str, tuple[Callable[..., Any], str, str, tuple[str, ...]]] = {
    "x*w+b (arithmetic only)": (
        lambda x, w, b: x * w + b, "x*w+b", "x*w+b", ("x", "w", "b")),
    "tanh(x*w+b)*0.5+1": (
        lambda x, w, b, h, o: np.tanh(x * w + b) * h + o,
        "tanh(x*w+b)*h+o", "math.tanh(x*w+b)*h+o", ("x", "w", "b", "h", "o")),
    "10-op chain": (
        lambda x, w, b, h, o: np.maximum(np.sqrt(np.abs(np.exp(-(x * w + b)) + h) * o) / w
                                         + b, h),
        "where(sqrt(abs(exp(-(x*w+b))+h)*o)/w+b>h, sqrt(abs(exp(-(x*w+b))+h)*o)/w+b, h)",
        "max(math.sqrt(abs(math.exp(-(x*w+b))+h)*o)/w+b, h)", ("x", "w", "b", "h", "o")),
    "Adam's update": (
        lambda w, g, m, v, lr, b1, b2, eps, o: w - lr * (m + (g - m) * (o - b1))
        / (np.sqrt(v + (g * g - v) * (o - b2)) + eps),
        "w-lr*(m+(g-m)*(o-b1))/(sqrt(v+(g*g-v)*(o-b2))+eps)",
        "w-lr*(m+(g-m)*(o-b1))/(math.sqrt(v+(g*g-v)*(o-b2))+eps)",
        ("w", "g", "m", "v", "lr", "b1", "b2", "eps", "o")),
}
SCALARS = {"h": 0.5, "o": 1.0, "lr": 1e-3, "b1": 0.9, "b2": 0.999, "eps": 1e-8}


def _inputs(names: tuple[str, ...], size: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    out = {}
    for name in names:
        if name in SCALARS:
            out[name] = np.float32(SCALARS[name])
        else:
            out[name] = rng.uniform(0.1, 1.0, size).astype(np.float32)
    return out


def _numba_ufunc(body: str, names: tuple[str, ...]) -> Any:
    import numba

    source = f"def f({', '.join(names)}):\n    return {body}\n"
    scope: dict[str, Any] = {"math": __import__("math")}
    exec(source, scope)  # the benchmark's own fixed text
    sig = numba.float32(*([numba.float32] * len(names)))
    # the plain numpy ufunc: numba's DUFunc wrapper adds a Python call to each use
    return numba.vectorize([sig], nopython=True)(scope["f"]).ufunc


def _median_time(fn: Callable[..., Any], args: list[Any], size: int) -> float:
    n = max(3, min(2000, int(2e6 / max(size, 1))))
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            fn(*args)
        times.append((time.perf_counter() - start) / n)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 1000, 100_000, 1_000_000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import numexpr

    numexpr.set_num_threads(1)
    start = time.perf_counter()
    import numba

    print(f"import numba: {time.perf_counter() - start:.2f} s")
    print(f"numexpr {numexpr.__version__} (1 thread), numba "
          f"{numba.__version__}, numpy {np.__version__}")
    for chain, (np_fn, ne_expr, nb_body, names) in CHAINS.items():
        start = time.perf_counter()
        numexpr.NumExpr(ne_expr, [(n, float) for n in names])
        ne_compile = time.perf_counter() - start
        start = time.perf_counter()
        ufunc = _numba_ufunc(nb_body, names)
        nb_compile = time.perf_counter() - start
        print(f"\n{chain}: first-call compile numexpr {ne_compile * 1e3:.2f} ms, "
              f"numba {nb_compile * 1e3:.0f} ms")
        for size in args.sizes:
            values = _inputs(names, size)
            ordered = [values[n] for n in names]
            ne_fn = numexpr.NumExpr(ne_expr, [(n, float) for n in names])
            got = {"numpy": [], "numexpr": [], "numba": []}
            for _ in range(args.rounds):
                got["numpy"].append(_median_time(np_fn, ordered, size))
                got["numexpr"].append(_median_time(ne_fn, ordered, size))
                got["numba"].append(_median_time(ufunc, ordered, size))
            base = statistics.median(got["numpy"])
            cells = [f"numpy {base * 1e6:9.1f} us"]
            for name in ("numexpr", "numba"):
                t = statistics.median(got[name])
                cells.append(f"{name} {t * 1e6:9.1f} us ({t / base:.2f}x)")
            print(f"  n={size:>8}: " + "  ".join(cells))
            assert np.allclose(ne_fn(*ordered), np_fn(*ordered), rtol=1e-4, atol=1e-5)
            assert np.allclose(ufunc(*ordered), np_fn(*ordered), rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    main()
