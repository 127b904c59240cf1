"""Recourse across models on Adult, COMPAS, Credit and Pima: who keeps, loses or gains verified recourse
when the paper's XGBoost (model A, ``common.train_model``) is retrained or replaced, and what that costs.

Per dataset, on the first of the 10 shuffled folds (``common.folds``): model A and explainer A are fitted on the
training rows (TCREx defaults, ``target=1``: the favourable class of every file here, see the datasets' README);
the people compared are the test rows. Model B is

* ``bootstrap``: the same XGBoost retrained on a bootstrap resample of the training rows (seed 1);
* ``seed``: the same XGBoost with row subsampling 0.8 and seed 1 (with the paper's settings XGBoost's hist trees
  do not depend on the seed at all, so a retrain with another seed only differs with stochastic boosting);
* ``class``: another model class, scikit-learn's HistGradientBoostingClassifier (native categoricals).

Figures per (dataset, B): invalidation rate of A's verified advice under B, people who lose / gain verified
recourse, the largest clear per-group gap (the audit's bootstrap, 200 resamples) in the invalidation rate, and
the time of ``compare_models`` (explainer B fitted inside) against its baseline measured in the same process (the two
alternated ``--repeats`` times, medians compared, because other jobs load the machine): two
plain explainer fits (A and B) plus the verification of both models' points (``counterfactuals(X, model=...)``).
Target: at most 1.5x. Then ``rule_stability`` over 10 bootstrap retrains, on at most ``--stability-rows`` training
rows, against one retrain plus one explainer fit (what re-checking one retrain costs without reusing the boxes;
target: at most 10x), with the retraining's own share reported apart.

Usage::

    .venv/bin/python benchmarks/compare_models.py                      # all four when present
    .venv/bin/python benchmarks/compare_models.py --datasets pima compas
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import SHARED_DATA, folds, load, machine, md_table, train_model  # noqa: E402

from tcrex import TCREx  # noqa: E402
from tcrex.compare import rule_stability  # noqa: E402
from tcrex.compare import compare_models  # noqa: E402

DATASETS = ("adult", "compas", "credit", "pima")
#: The column each dataset is grouped by (a numeric column is cut into the bands given).
GROUPS = {"adult": ("age", [0, 35, 50, 200]), "compas": ("Race", None), "credit": ("isMale", None),
          "pima": ("age", [0, 30, 45, 200])}


def _xgb(X, y, seed, **extra):
    import os

    from xgboost import XGBClassifier
    params = dict(n_estimators=50, max_leaves=8, enable_categorical=True, tree_method="hist", random_state=seed,
                  n_jobs=os.cpu_count() or 1)
    return XGBClassifier(**{**params, **extra}).fit(X, y)


def _model_b(kind, X, y):
    if kind == "bootstrap":
        pick = np.random.default_rng(1).integers(0, len(X), len(X))
        return _xgb(X.iloc[pick], y[pick], 1)
    if kind == "seed":
        return _xgb(X, y, 1, subsample=0.8)
    from sklearn.ensemble import HistGradientBoostingClassifier
    return HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=0).fit(X, y)


def _groups(name, X):
    col, bands = GROUPS[name]
    values = X[col]
    if bands is not None:
        values = pd.cut(values, bands).astype(str)
    return pd.Series(np.asarray(values.astype(str)), index=X.index, name=col)


def run(name, stability_rows, n_boot, repeats):
    ds = load(SHARED_DATA / f"{name}.csv")
    _, tr, te = next(folds(len(ds.X)))
    X_tr, y_tr, X_te = ds.X.iloc[tr], ds.y[tr], ds.X.iloc[te]
    model_a = train_model(X_tr, y_tr)
    ex_a = TCREx(target=1).fit(X_tr, model_a)
    groups = _groups(name, X_te)
    rows = []
    for kind in ("bootstrap", "seed", "class"):
        model_b = _model_b(kind, X_tr, y_tr)
        # baseline, same process: two plain explainer fits plus the verification of both models' points; the
        # two are timed alternately `repeats` times and compared by their medians (other jobs load the machine)
        def baseline_once() -> float:
            t0 = time.perf_counter()
            TCREx(target=1).fit(X_tr, model_a)
            ex_b = TCREx(target=1).fit(X_tr, model_b)
            ex_a.counterfactuals(X_te, model=model_a, target=1)
            ex_b.counterfactuals(X_te, model=model_b, target=1)
            return time.perf_counter() - t0

        base_s, cmp_s = [], []
        for _ in range(repeats):
            base_s.append(baseline_once())
            t0 = time.perf_counter()
            res = compare_models(ex_a, X_te, model_b, target=1, groups=groups, n_boot=n_boot)
            cmp_s.append(time.perf_counter() - t0)
        secs, baseline = float(np.median(cmp_s)), float(np.median(base_s))
        s = res.summary
        gaps = res.gaps[res.gaps["metric"] == "invalidation_rate"]
        clear = gaps[gaps["significant"]]
        worst = clear.loc[clear["difference"].abs().idxmax()] if len(clear) else None
        rows.append({"dataset": name, "B": kind, "people": s["n"], "need A": s["n_need_a"],
                     "verified A": s["n_verified_a"], "invalidation": s["invalidation_rate"],
                     "lost": s["changes"]["lost"], "gained": s["changes"]["gained"],
                     "newly needed": s["changes"]["newly needed"],
                     "rules below tau": int((res.rules["holds_tau_b"] == False).sum()),  # noqa: E712
                     "largest clear gap": "none" if worst is None else
                     f"{worst.group} {worst.difference * 100:+.1f} pts vs {worst.reference}",
                     "compare s": secs, "baseline s": baseline, "ratio": secs / baseline})
        print(f"  {name:7s} B={kind:9s} invalidation {s['invalidation_rate']:.1%}, lost {s['changes']['lost']}, "
              f"gained {s['changes']['gained']}; compare {secs:.2f}s vs baseline {baseline:.2f}s "
              f"({secs / baseline:.2f}x)", flush=True)
    n = min(stability_rows, len(X_tr))
    perm = np.random.default_rng(0).permutation(len(X_tr))[:n]
    sub, y_sub = X_tr.iloc[perm], y_tr[perm]
    ex_s = TCREx(target=1).fit(sub, train_model(sub, y_sub))

    def one_fit() -> float:
        """What one retrain costs without reusing the boxes: retrain the model on a bootstrap resample and fit an
        explainer on it (single-threaded XGBoost, like the retrains below, so both sides share the machine alike)."""
        t0 = time.perf_counter()
        pick = np.random.default_rng(7).integers(0, n, n)
        m = _xgb(sub.iloc[pick].reset_index(drop=True), y_sub[pick], 7, n_jobs=1)
        TCREx(target=1).fit(sub, m)
        return time.perf_counter() - t0

    before = one_fit()
    t = time.perf_counter()
    st = rule_stability(ex_s, sub, y_sub, lambda X, y, seed: _xgb(X, y, seed, n_jobs=1), n_models=10,
                        kind="bootstrap")
    stab = time.perf_counter() - t
    fit_s = (before + one_fit()) / 2  # measured before and after: the machine's load drifts
    own = stab - st.seconds["retrain"]
    print(f"  {name:7s} rule_stability over 10 retrains on {n:,} rows: {stab:.2f}s ({st.seconds['retrain']:.2f}s "
          f"retraining XGBoost, {st.seconds['verify']:.2f}s verifying the people's points once, "
          f"{st.seconds['predict']:.2f}s for the 10 prediction passes), one retrain + explainer fit {fit_s:.2f}s -> "
          f"{stab / fit_s:.2f}x ({own / fit_s:.2f}x without the retraining)", flush=True)
    stability = {"dataset": name, "rows": n, "rules": len(st.rules),
                 "rules holding tau in all 10": int((st.rules["holds_tau_share"] == 1).sum()),
                 "mean advice holds": float(np.nanmean(st.people["advice_holds_share"])),
                 "stability s": stab, "retraining s": st.seconds["retrain"], "verify s": st.seconds["verify"],
                 "10 passes s": st.seconds["predict"], "one fit s": fit_s,
                 "ratio": stab / fit_s, "ratio without retraining": own / fit_s}
    return rows, stability


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--stability-rows", type=int, default=5000)
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3, help="alternate baseline and compare_models this often")
    args = parser.parse_args(argv)
    present = [d for d in args.datasets if (SHARED_DATA / f"{d}.csv").exists()]
    if not present:
        print(f"skipped: none of {args.datasets} found in {SHARED_DATA} (see benchmarks/README.md)")
        return 0
    missing = sorted(set(args.datasets) - set(present))
    if missing:
        print(f"skipping absent dataset(s): {', '.join(missing)}")
    print(machine())
    rows, stab = [], []
    for name in present:
        r, s = run(name, args.stability_rows, args.n_boot, args.repeats)
        rows += r
        stab.append(s)
    print()
    print(md_table(pd.DataFrame(rows)))
    print()
    print(md_table(pd.DataFrame(stab)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
