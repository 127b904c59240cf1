"""Metacounterfactuals checked on the model: how many the model confirms, and what checking costs.

Per dataset — the bundled loans sample with its bundled XGBoost model, and the CSVs of ``../shared/datasets``
(default: Adult and Credit) with the paper's XGBoost trained on the first fold's training rows — T-CREx is fitted
with the model (``--rho``, ``--tau``) and ``explain_one(x, model=...)`` is asked for ``--rows`` rows the model does
not give class 1 (the test rows; the loans sample's own rows). Printed:

* alternatives with a rule (the others say "no actionable recourse" and are not checked), how many the model
  confirms (``verified``) and their share;
* verified points the model does not confirm when asked again, or that change a feature the alternative does not
  name (both must be 0);
* the time of ``explain_one`` with verified alternatives against the same call of the version in
  ``--baseline-tree`` (a checkout of the code before, e.g. ``git worktree add /tmp/before 1f696d4``: ``explain_one(model=...)`` whose alternatives carry no check),
  loaded in this process as ``tcrex_baseline``, fitted on the same rows and timed alternately row by row (median
  of ``--repeat`` passes), and the ratio (target: at most 2).

    .venv/bin/python benchmarks/alternatives.py [--datasets adult credit] [--rows 30] [--repeat 3] [--trees 5]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from common import dataset_paths, folds, load, machine, md_table, train_model
from recourse import load_baseline

from tcrex import TCREx
from tcrex.datasets import LOANS_TARGET, load_bundled_loans, load_bundled_model


def datasets(names):
    """(name, fit rows, rows to explain, model) per dataset."""
    if "loans" in names:
        df = load_bundled_loans()
        X = df.drop(columns=[LOANS_TARGET])
        yield "loans (bundled)", X, X, load_bundled_model()
    shared = [n for n in names if n != "loans"]
    if shared:
        for path in dataset_paths(names=shared):
            ds = load(path)
            _, tr, te = next(folds(len(ds.X)))
            model = train_model(ds.X.iloc[tr], ds.y[tr])
            yield ds.name, ds.X.iloc[tr], ds.X.iloc[te], model


def check(ex, X, rows, model) -> dict:
    """Counts over the alternatives of ``rows`` (the new explainer's answers)."""
    n_checked = n_verified = wrong = unnamed = 0
    for i in rows:
        x = X.iloc[[i]]
        exp = ex.explain_one(x, model=model)
        for alt in exp.alternatives:
            if alt["rule"] is None or alt["rule"] < 0:
                continue
            n_checked += 1
            if not alt["verified"]:
                continue
            n_verified += 1
            point = pd.DataFrame([alt["point"]])[list(X.columns)].astype(X.dtypes.to_dict())
            wrong += not ex.targets_[exp.target].target.contains(np.asarray(model.predict(point)))[0]
            named = {c["feature"] for c in alt["metachanges"]} | {c["feature"] for c in alt["changes"]}
            unnamed += bool({f for f in X.columns if alt["point"][f] != x.iloc[0][f]} - named)
    return {"alternatives with a rule": n_checked, "verified": n_verified,
            "verified share": n_verified / n_checked if n_checked else float("nan"),
            "not confirmed when asked again": wrong, "changing an unnamed feature": unnamed}


def timing(new, old, X, rows, model, repeat: int) -> tuple[float, float]:
    """Median over ``repeat`` passes of the total seconds of ``explain_one(model=...)`` on ``rows``, the two
    versions alternating row by row (so both see the same load)."""
    t_new, t_old = [], []
    for _ in range(repeat):
        a = b = 0.0
        for i in rows:
            x = X.iloc[[i]]
            t0 = time.perf_counter()
            old.explain_one(x, model=model)
            t1 = time.perf_counter()
            new.explain_one(x, model=model)
            t2 = time.perf_counter()
            a, b = a + (t2 - t1), b + (t1 - t0)
        t_new.append(a), t_old.append(b)
    return float(np.median(t_new)), float(np.median(t_old))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["loans", "adult", "credit"])
    parser.add_argument("--rows", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rho", type=float, default=0.02)
    parser.add_argument("--tau", type=float, default=0.9)
    parser.add_argument("--trees", type=int, default=1, help="surrogate trees (more trees, more rules and metarules)")
    parser.add_argument("--baseline-tree", required=True,
                        help="a checkout of the code before verified alternatives, e.g. `git worktree add "
                             "/tmp/before 1f696d4`")
    args = parser.parse_args()
    baseline = load_baseline(args.baseline_tree)
    print(machine())
    out = []
    for name, fit_X, X, model in datasets([n.lower() for n in args.datasets]):
        new = TCREx(rho=args.rho, tau=args.tau, n_trees=args.trees).fit(fit_X, model)
        old = baseline.TCREx(rho=args.rho, tau=args.tau, n_trees=args.trees).fit(fit_X, model)
        rejected = np.flatnonzero(np.asarray(model.predict(X)) != 1)
        rows = np.random.default_rng(0).choice(rejected, size=min(args.rows, len(rejected)), replace=False)
        counts = check(new, X, rows, model)
        t_new, t_old = timing(new, old, X, rows, model, args.repeat)
        out.append({"dataset": name, "rows": len(rows), **counts,
                    "explain_one before (ms/row)": 1000 * t_old / len(rows),
                    "with verified alternatives (ms/row)": 1000 * t_new / len(rows), "ratio": t_new / t_old})
        print(f"{name}: done", flush=True)
    print(md_table(pd.DataFrame(out)))


if __name__ == "__main__":
    main()
