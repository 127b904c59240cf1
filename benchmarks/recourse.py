"""Recourse that says what it verifies (issue #24): per dataset, who needing recourse gets a model-confirmed point
that changes exactly the features its sentence names, split by where the point came from.

For each dataset (``../shared/datasets``, favourable class ``target`` = 1 as its README says) and each of the first
``--folds`` folds of the paper's 10-fold split: the paper's XGBoost on the training rows, T-CREx fitted on them
with the model (``--rho``, ``--tau``, ``--trees``), then ``counterfactuals(X_test, model=...)`` on the test rows.
Printed per dataset:

* shares of the test rows needing recourse (model output not 1) by source: the paper's optimal rule (nearest
  point or deeper inside it), the next rule in cost order, a minimal change beyond the rules, a similar real case
  only, none;
* the share verified through a rule and in all; mean changes of verified points per source;
* points changing a feature their sentence does not name (must be 0: checked against the row itself) and points
  outside their recommended rule (must be 0);
* whether an explainer restored from JSON and given the training rows as ``reference=`` returns identical
  frames;
* time per row of the verified counterfactuals, and of one plain model call per row (the yardstick, same
  process).

    .venv/bin/python benchmarks/recourse.py [--datasets adult compas] [--folds 2]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from common import dataset_arguments, dataset_paths, fold_models, load, machine, md_table

from tcrex import TCREx, is_verified

SOURCES_SHOWN = [("boundary", "searched"), ("next_rule",), ("minimal_change",)]


def check_points(ex, X, cf, expl) -> tuple[int, int]:
    """(points changing a feature the sentence does not name, points outside their recommended rule)."""
    names = list(X.columns)
    verified = is_verified(cf)
    point = cf.loc[verified, names]
    row = X.loc[verified, names]
    differs = ~(point.astype(object).values == row.astype(object).values)
    unnamed = 0
    for d, changed in zip(differs, cf.loc[verified, "changed"]):
        unnamed += set(np.asarray(names)[d]) != set(changed)
    outside = 0
    for i in np.flatnonzero(verified & cf["recommended_rule"].notna().to_numpy()):
        t, r = int(expl["target"].iloc[i]), int(cf["recommended_rule"].iloc[i])
        for f, c in ex.rule_conditions(t, r).items():
            p = cf[f].iloc[i]
            inside = (p in c["in"]) if "in" in c else (
                (c["low"] is None or p > c["low"]) and (c["high"] is None or p <= c["high"]))
            outside += not inside
    return int(unnamed), int(outside)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    dataset_arguments(parser)
    parser.add_argument("--folds", type=int, default=2, help="first K folds of the 10-fold split (default 2)")
    parser.add_argument("--rho", type=float, default=0.02)
    parser.add_argument("--tau", type=float, default=0.9)
    parser.add_argument("--trees", type=int, default=1)
    args = parser.parse_args()
    print(machine())
    rows = []
    for path in dataset_paths(args.folders, args.datasets):
        ds = load(path)
        acc = {"needing": 0, "verified": 0, "via_rule": 0, "unnamed": 0, "outside": 0, "json_same": True,
               "seconds": 0.0, "predict_seconds": 0.0, "rows": 0}
        by_source, changes = {}, {}
        for k, tr, te, model, ytr, yte, _ in fold_models(ds):
            if k >= args.folds:
                break
            Xtr, Xte = ds.X.iloc[tr], ds.X.iloc[te]
            ex = TCREx(rho=args.rho, tau=args.tau, n_trees=args.trees, target=1).fit(Xtr, model)
            t0 = time.perf_counter()
            model.predict(Xte)
            acc["predict_seconds"] += time.perf_counter() - t0
            t0 = time.perf_counter()
            cf = ex.counterfactuals(Xte, model=model)
            acc["seconds"] += time.perf_counter() - t0
            acc["rows"] += len(Xte)
            expl = ex.explain(Xte, model=model)
            needing = cf["recourse"].notna().to_numpy()
            acc["needing"] += int(needing.sum())
            verified = is_verified(cf)
            acc["verified"] += int(verified.sum())
            src = cf["source"].astype(object).where(needing, None)
            for s in ("boundary", "searched", "next_rule", "minimal_change", "example"):
                by_source[s] = by_source.get(s, 0) + int((src == s).sum())
                changes.setdefault(s, []).extend(cf.loc[(src == s).to_numpy() & verified, "n_changes"].tolist())
            acc["via_rule"] += int(src.isin(["boundary", "searched", "next_rule"]).sum())
            unnamed, outside = check_points(ex, Xte, cf, expl)
            acc["unnamed"] += unnamed
            acc["outside"] += outside
            restored = TCREx.from_json(ex.to_json()).counterfactuals(Xte, model=model, reference=Xtr)
            acc["json_same"] &= bool(restored.equals(cf))
        n = max(acc["needing"], 1)
        all_changes = [c for s in ("boundary", "searched", "next_rule", "minimal_change") for c in changes[s]]
        rows.append({
            "dataset": ds.name, "needing": acc["needing"],
            "optimal rule": (by_source["boundary"] + by_source["searched"]) / n,
            "next rule": by_source["next_rule"] / n, "minimal change": by_source["minimal_change"] / n,
            "similar case only": by_source["example"] / n,
            "none": (acc["needing"] - acc["verified"] - by_source["example"]) / n,
            "verified": acc["verified"] / n, "via a rule": acc["via_rule"] / n,
            "changes (rule)": np.mean(changes["boundary"] + changes["searched"] + changes["next_rule"])
            if changes["boundary"] + changes["searched"] + changes["next_rule"] else np.nan,
            "changes (minimal)": np.mean(changes["minimal_change"]) if changes["minimal_change"] else np.nan,
            "changes (all)": np.mean(all_changes) if all_changes else np.nan,
            "unnamed": acc["unnamed"], "outside rule": acc["outside"], "JSON same": acc["json_same"],
            "ms/row": 1000 * acc["seconds"] / max(acc["rows"], 1),
            "predict ms/row": 1000 * acc["predict_seconds"] / max(acc["rows"], 1),
        })
        print(f"{ds.name}: {rows[-1]}", flush=True)
    print()
    print(md_table(pd.DataFrame(rows)))


if __name__ == "__main__":
    main()
