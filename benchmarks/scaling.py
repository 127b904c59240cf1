"""How T-CREx's fit time, grid cells and explain throughput grow with rows, features, rho and tree count.

All on Adult (../shared/datasets/adult.csv) with one XGBoost model (paper settings) trained once on the whole
file; its outputs are computed outside the timings. tau=0.9 throughout.

* rows: Adult resampled with replacement to 1k ... 1M rows (both growers; "exact" up to --max-exact-rows);
  explain throughput is measured on the same N rows;
* features: the first k of Adult's 11 columns, and Adult plus 10 or 30 uniform noise columns (30k rows);
* rho in {0.005, 0.01, 0.02, 0.05, 0.1} and surrogate trees in {1, 2, 5, 10, 20} (30k rows).

Each configuration runs --repeat times (the fastest is kept; one run above 100k rows). Writes
results/scaling.csv and results/scaling.html (+ .png with kaleido).

    .venv/bin/python benchmarks/scaling.py                 # ~5 min on 2 cores
    .venv/bin/python benchmarks/scaling.py --quick         # up to 100k rows, fewer settings
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from tcrex import TCREx  # noqa: E402
from tcrex.errors import CellLimitError, NoValidRuleError  # noqa: E402

ROWS = [1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000]


def measure(X, y, grower, repeat=1, explain=True, **params) -> dict:
    best = None
    for _ in range(repeat):
        rec = {"grower": grower, "rows": len(X), "features": X.shape[1], "status": "ok"}
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ex = TCREx(tau=0.9, grower=grower, **params).fit(X, y_pred=y)
        except (NoValidRuleError, CellLimitError) as exc:
            rec.update(status=type(exc).__name__, fit_s=time.perf_counter() - t0)
            return rec
        rec["fit_s"] = time.perf_counter() - t0
        rec.update({f"{k}_s": v for k, v in ex.timings_.items() if k != "total"})
        rec.update(nodes=ex.surrogate_.n_nodes_, rules=sum(s.n_rules for s in ex.targets_),
                   cells=sum(s.n_cells for s in ex.targets_))
        if explain:
            t1 = time.perf_counter()
            ex.explain(X, y_pred=y)
            rec["explain_s"] = time.perf_counter() - t1
            rec["explain_rows_per_s"] = len(X) / rec["explain_s"]
        if best is None or rec["fit_s"] < best["fit_s"]:
            best = rec
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=common.SHARED_DATA / "adult.csv")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--max-exact-rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--replot", action="store_true", help="only redraw the plot from results/scaling.csv")
    parser.add_argument("--no-png", action="store_true")
    args = parser.parse_args()
    if args.replot:
        for p in common.save_figures({"scaling": figure(pd.read_csv(common.results_dir() / "scaling.csv"))},
                                     png=not args.no_png):
            print("wrote", p)
        return
    if not args.data.exists():
        sys.exit(f"{args.data} not found: this benchmark needs the shared Adult CSV")
    print("machine:", common.machine())
    ds = common.load(args.data)
    model = common.train_model(ds.X, ds.y)
    rng = np.random.default_rng(common.SEED)
    rows_list = [n for n in ROWS if n <= (100_000 if args.quick else ROWS[-1])]
    recs = []

    def add(experiment, value, rec):
        rec = {"experiment": experiment, "value": value, **rec}
        recs.append(rec)
        cells = rec.get("cells", np.nan)
        print(f"  {experiment:8s} {value!s:>9} {rec['grower']:5s} {rec['status']:16s} fit {rec['fit_s']:8.3f} s"
              + (f"  surrogate {rec.get('surrogate_s', np.nan):7.3f} s  rules {rec.get('rules', 0):4}  cells "
                 f"{cells:7.0f}" if rec["status"] == "ok" else "")
              + (f"  explain {rec['explain_rows_per_s'] / 1e6:6.2f} M rows/s" if "explain_rows_per_s" in rec else ""),
              flush=True)

    print("\n== rows (Adult resampled)")
    for n in rows_list:
        idx = rng.integers(0, len(ds.X), n)
        X = ds.X.iloc[idx].reset_index(drop=True)
        y = model.predict(X)
        for grower in ("exact", "hist"):
            if grower == "exact" and n > args.max_exact_rows:
                continue
            add("rows", n, measure(X, y, grower, repeat=args.repeat if n <= 100_000 else 1))

    base_y = model.predict(ds.X)
    print("\n== features (first k of Adult's columns; Adult + uniform noise columns)")
    ks = [2, 6, 11] if args.quick else [2, 4, 6, 8, 11]
    for k in ks:
        for grower in ("exact", "hist"):
            add("features", k, measure(ds.X.iloc[:, :k], base_y, grower, repeat=args.repeat))
    for extra in ([10] if args.quick else [10, 30]):
        noise = pd.DataFrame(rng.random((len(ds.X), extra)), columns=[f"noise{i}" for i in range(extra)])
        X = pd.concat([ds.X.reset_index(drop=True), noise], axis=1)
        for grower in ("exact", "hist"):
            add("features", 11 + extra, measure(X, base_y, grower, repeat=args.repeat))

    print("\n== rho")
    for rho in ([0.01, 0.02, 0.05] if args.quick else [0.005, 0.01, 0.02, 0.05, 0.1]):
        for grower in ("exact", "hist"):
            add("rho", rho, measure(ds.X, base_y, grower, repeat=args.repeat, rho=rho))

    print("\n== surrogate trees")
    for n_trees in ([1, 2, 5] if args.quick else [1, 2, 5, 10, 20]):
        for grower in ("exact", "hist"):
            add("trees", n_trees, measure(ds.X, base_y, grower, repeat=1 if n_trees > 5 else args.repeat,
                                          n_trees=n_trees))

    df = pd.DataFrame(recs)
    out = common.results_dir()
    df.to_csv(out / "scaling.csv", index=False)
    print(f"\nwrote {out / 'scaling.csv'}")
    rows = df[df.experiment == "rows"].pivot(index="value", columns="grower", values="fit_s")
    if "exact" in rows and "hist" in rows:
        print("\n== fit time by rows (s) and the hist speed-up")
        rows["speedup"] = rows["exact"] / rows["hist"]
        print(common.md_table(rows.reset_index().rename(columns={"value": "rows"})))
    if not args.no_plots:
        for p in common.save_figures({"scaling": figure(df)}, png=not args.no_png):
            print("wrote", p)


def figure(df: pd.DataFrame):
    from plotly.subplots import make_subplots
    import plotly.graph_objects as go

    panels = [("rows", "fit_s", "fit s / rows"), ("rows", "cells", "cells / rows"),
              ("rows", "explain_rows_per_s", "explained rows per s / rows"),
              ("features", "fit_s", "fit s / features"), ("features", "cells", "cells / features"),
              ("rho", "fit_s", "fit s / rho"), ("rho", "cells", "cells / rho"),
              ("trees", "fit_s", "fit s / trees"), ("trees", "cells", "cells / trees")]
    fig = make_subplots(rows=3, cols=3, subplot_titles=[p[2] for p in panels])
    colors = {"exact": "#1f77b4", "hist": "#d62728"}
    for i, (exp, col, _) in enumerate(panels):
        r, c = divmod(i, 3)
        d = df[(df.experiment == exp) & (df.status == "ok")]
        for grower, g in d.groupby("grower"):
            if col in g:
                fig.add_trace(go.Scatter(x=g.value, y=g[col], mode="lines+markers", name=grower,
                                         line_color=colors.get(grower), legendgroup=grower,
                                         showlegend=i == 0), row=r + 1, col=c + 1)
        fig.update_yaxes(type="log", row=r + 1, col=c + 1)
        if exp in ("rows", "trees", "rho"):
            fig.update_xaxes(type="log", row=r + 1, col=c + 1)
    fig.update_layout(height=900, width=1200, title="T-CREx scaling on Adult (tau=0.9; rho=0.02 unless varied)")
    return fig


if __name__ == "__main__":
    main()
