"""Speed and size of the navigable metarule tree (outline) and of the stakeholder report.

1. Outline: time to build ``metarule_outline`` + ``metarule_tree_html`` and the HTML size for synthetic trees of
   growing size (hundreds of metarules), next to the icicle at its node budget.
2. Report: ``build_report`` on Adult (``../shared/datasets/adult.csv``; skipped when absent) with the headline
   aggregates, the trees as outlines and one chosen individual: build time and size, without and with row data.

    python benchmarks/tree_view.py
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from common import SHARED_DATA, load, machine, train_model  # noqa: E402  (adds the repo root to sys.path)

from tcrex import TCREx  # noqa: E402
from tcrex import figures as F  # noqa: E402
from tcrex.report import ReportOptions, build_report  # noqa: E402


def best(fn, repeat: int = 3):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def outlines() -> None:
    print("| features | rho | trees | metarules (largest target) | outline build (s) | outline HTML (KB) "
          "| icicle build (s) | icicle nodes |")
    print("|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    n = 3000
    base = pd.DataFrame({f"x{i}": rng.uniform(0, 100, n) for i in range(6)})
    y = ((np.sin(base.x0 / 9) + np.cos(base.x1 / 7) + base.x2 / 60 - base.x3 / 80) > 0.6).astype(int).to_numpy()
    for feats, rho, trees in [(4, 0.01, 2), (3, 0.005, 3), (5, 0.01, 2), (4, 0.008, 3)]:
        X = base.iloc[:, :feats]
        ex = TCREx(rho=rho, tau=0.8, n_trees=trees, max_cells=300_000).fit(X, y_pred=y)
        t = max(range(len(ex.targets_)), key=lambda t: len(ex.targets_[t].metarules))
        secs, html = best(lambda: F.metarule_tree_html(ex, t, highlight_row=X.iloc[0]))
        isecs, fig = best(lambda: F.metarule_icicle(ex, t))
        print(f"| {feats} | {rho} | {trees} | {len(ex.targets_[t].metarules)} | {secs:.3f} | {len(html) / 1024:.0f} "
              f"| {isecs:.3f} | {len(fig.data[0].ids)} |")


def adult_report() -> None:
    from pathlib import Path
    path = next((p for p in (SHARED_DATA / "adult.csv", Path("/work/shared/datasets/adult.csv")) if p.exists()),
                SHARED_DATA / "adult.csv")
    if not path.exists():
        print("adult.csv not found; skipping the report benchmark")
        return
    ds = load(path)
    model = train_model(ds.X, ds.y)
    y_pred = model.predict(ds.X)
    t = time.perf_counter()
    ex = TCREx(rho=0.02, tau=0.9).fit(ds.X, y_pred=y_pred)
    fit = time.perf_counter() - t
    explanations = ex.explain(ds.X, y_pred=y_pred)
    actions = ex.feature_actions(ds.X, y_pred=y_pred)
    row = ds.X.index[5]
    individuals = {f"Row {row}": (ex.explain_one(ds.X.loc[[row]], y_pred=[y_pred[5]]), ds.X.loc[row])}
    common = dict(title="Adult", data_description=f"Adult: {ds.shape}", data_fingerprint="-",
                  model_description="XGBoost", model_fingerprint="-", params={"rho": 0.02, "tau": 0.9},
                  individuals=individuals, explanations=explanations, actions=actions)
    print(f"\nAdult: {ds.shape}, fit {fit:.1f} s, {sum(len(s.metarules) for s in ex.targets_)} metarules")
    print("| report | build (s) | size (KB) |")
    print("|---|---|---|")
    for label, extra in [("default (aggregates, rules, chosen individual)", {}),
                         ("include_rows=True", {"rows": ds.X, "include_rows": True})]:
        secs, html = best(lambda: build_report(ex, ReportOptions(**common, **extra)), repeat=2)
        print(f"| {label} | {secs:.2f} | {len(html.encode()) / 1024:.0f} |")


if __name__ == "__main__":
    print(machine())
    import sys
    if "--report-only" not in sys.argv:
        outlines()
    adult_report()
