"""Large metarule grids: what the grid preview costs against the fit it previews, and the measured cost
per grid cell behind its time estimate (``tcrex.SECONDS_PER_CELL``).

    .venv/bin/python benchmarks/grid_preview.py [--rows 1000] [--csv ../shared/datasets/credit.csv]

The credit data (its 14 columns, yes/no as 0/1) padded to 20 features with rounded normal noise columns, the first
``--rows`` rows of a seeded sample, a scikit-learn random forest (50 trees) as the model; T-CREx with 3 surrogate
trees at several (rho, tau). Per setting: ``TCREx.grid_sizes`` (the surrogate grown, the grid counted, nothing
per cell) against ``fit`` in the same process (both grow the same surrogate), the cells, and the fit's seconds per
cell. The ratio preview / fit is what Apply would have cost had the preview said "too big" first.
Prints the machine's load average: on the shared 2-core machine the per-cell cost rises with it.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_CSV = ROOT.parent / "shared" / "datasets" / "credit.csv"
SETTINGS = [(0.01, 0.7), (0.008, 0.8), (0.007, 0.75)]


def data(csv: Path, rows: int, n_features: int = 20):
    frame = pd.read_csv(csv).sample(rows, random_state=0)
    y = frame.pop("target").to_numpy()
    for c in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[c]):
            frame[c] = (frame[c] == "yes").astype(int)
    rng = np.random.default_rng(0)
    for k in range(n_features - frame.shape[1]):
        frame[f"noise{k}"] = rng.normal(size=len(frame)).round(2)
    return frame, y


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--rows", type=int, default=1000)
    args = parser.parse_args()
    if not args.csv.is_file():
        print(f"SKIP: {args.csv} not found (the credit data is not part of the project)")
        return 0
    from sklearn.ensemble import RandomForestClassifier

    from tcrex import SECONDS_PER_CELL, TCREx

    X, y = data(args.csv, args.rows)
    y_pred = RandomForestClassifier(50, random_state=0).fit(X, y).predict(X)
    print(f"{args.rows:,} rows x {X.shape[1]} features, 3 surrogate trees; load average {os.getloadavg()[0]:.2f}; "
          f"tcrex.SECONDS_PER_CELL = {SECONDS_PER_CELL * 1e6:.0f} us")
    print(f"{'rho':>6} {'tau':>5} {'cells':>11} {'preview s':>10} {'fit s':>8} {'preview/fit':>12} {'us/cell':>8}")
    for rho, tau in SETTINGS:
        ex = TCREx(rho=rho, tau=tau, n_trees=3, max_cells=5_000_000, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            sizes = ex.grid_sizes(X, y_pred=y_pred)
            t1 = time.perf_counter()
            ex.fit(X, y_pred=y_pred)
            t2 = time.perf_counter()
        cells = sum(s.n_cells for s in sizes)
        assert cells == sum(t.n_cells for t in ex.targets_), "the preview counts the fitted grid"
        print(f"{rho:6.3f} {tau:5.2f} {cells:11,} {t1 - t0:10.3f} {t2 - t1:8.2f} {(t1 - t0) / (t2 - t1):12.4f} "
              f"{(t2 - t1) / max(cells, 1) * 1e6:8.1f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
