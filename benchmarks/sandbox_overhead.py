"""What the model sandbox costs: the bundled XGBoost model predicting N rows in-process vs in its worker process.

    .venv/bin/python benchmarks/sandbox_overhead.py                 # 300,000 rows, 5 repeats
    .venv/bin/python benchmarks/sandbox_overhead.py --rows 1000000 --repeat 3

Both paths load the same file bytes (``sample_data/loans_model.json``) through ``tcrex.intake.load_model``:
``sandbox=False`` in this process, ``sandbox=True`` in a sandbox worker process with the default limits. The rows come from
the loans generator. Printed: load time (the worker's start-up and the file's parse), ``predict`` and ``predict`` medians, and the ratio sandboxed / in-process in the same run. Outputs must be identical.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tcrex import datasets  # noqa: E402
from tcrex.intake import load_model  # noqa: E402


def _median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    blob = (ROOT / "sample_data" / datasets.LOANS_MODEL).read_bytes()
    X = datasets.make_loans(args.rows, random_state=1)
    X = X[[c for c in X.columns if c != "approved"]]

    t = time.perf_counter()
    here = load_model(blob, "loans_model.json", sandbox=False)
    load_here = time.perf_counter() - t
    t = time.perf_counter()
    boxed = load_model(blob, "loans_model.json", sandbox=True)
    load_boxed = time.perf_counter() - t
    assert np.array_equal(np.asarray(here.predict(X)), np.asarray(boxed.predict(X)))  # warm-up, and same outputs

    p_here = _median_seconds(lambda: here.predict(X), args.repeat)
    p_boxed = _median_seconds(lambda: boxed.predict(X), args.repeat)
    print(f"{args.rows:,} rows x {X.shape[1]} features, bundled XGBoost model, median of {args.repeat}")
    print(f"load:          in-process {load_here * 1000:8.1f} ms   sandboxed {load_boxed * 1000:8.1f} ms "
          f"(worker start-up + parse)")
    print(f"predict:       in-process {p_here * 1000:8.1f} ms   sandboxed {p_boxed * 1000:8.1f} ms   "
          f"ratio {p_boxed / p_here:.2f}x  (+{(p_boxed - p_here) * 1000:.0f} ms)")
    boxed.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
