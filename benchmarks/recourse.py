"""Recourse that says what it verifies: per dataset, who needing recourse gets a model-confirmed point
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
  process); with ``--baseline-tree DIR`` (a checkout of an earlier version, e.g. ``git worktree add /tmp/before
  39f0a88``) also the earlier version's ``counterfactuals`` on the same fold, loaded in the same process as the
  package ``tcrex_baseline`` and timed alternately (median of ``--repeat``), and the ratio.

    .venv/bin/python benchmarks/recourse.py [--datasets adult compas] [--folds 2] [--trees 1 5]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from common import dataset_arguments, dataset_paths, fold_models, load, machine, md_table

from tcrex import TCREx
from tcrex.errors import CellLimitError
from tcrex.vocabulary import is_verified

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


def exhaustive_rule_bound(ex, Xtr, Xte, cf, expl, model, max_rows: int, max_points: int = 4000) -> tuple:
    """(rows tried, rows rescued): for rows needing recourse that no rule point rescued, every rule of their target
    tried with (nearly) every combination of observed fit values inside the rule for the features the row lies
    outside of (each feature's values evenly thinned so a rule tries at most ``max_points`` points). Rows no rule
    rescues here bound the share of recourse any search through these rules can reach."""
    import itertools
    src = cf["source"].astype(object)
    rows = np.flatnonzero(cf["recourse"].notna().to_numpy() & ~src.isin(["boundary", "searched", "next_rule"]).to_numpy())
    rows = rows[:max_rows]
    rescued = 0
    for i in rows:
        x = Xte.iloc[i]
        t = int(expl["target"].iloc[i])
        sol = ex.solution(t)
        found = False
        for r in range(sol.n_rules):
            conds = ex.rule_conditions(t, r)
            options = {}
            for f, c in conds.items():
                v = x[f]
                if "in" in c:
                    if v not in c["in"]:
                        options[f] = list(c["in"])
                elif (c["low"] is not None and v <= c["low"]) or (c["high"] is not None and v > c["high"]):
                    col = np.unique(Xtr[f].to_numpy(dtype=float))
                    options[f] = list(col[(col > (c["low"] if c["low"] is not None else -np.inf))
                                          & (col <= (c["high"] if c["high"] is not None else np.inf))])
            if not options or any(not o for o in options.values()):
                continue
            per = max(1, int(max_points ** (1 / len(options))))
            thinned = {f: [o[k] for k in np.unique(np.linspace(0, len(o) - 1, min(per, len(o))).astype(int))]
                       for f, o in options.items()}
            combos = list(itertools.product(*thinned.values()))
            pts = pd.DataFrame([x.to_dict()] * len(combos))
            for j, f in enumerate(thinned):
                pts[f] = [c[j] for c in combos]
            pts = pts.astype(Xte.dtypes.to_dict())
            if sol.target.contains(model.predict(pts)).any():
                found = True
                break
        rescued += found
    return len(rows), rescued


def load_baseline(tree: str):
    """The ``tcrex`` package of another checkout, importable beside this one as ``tcrex_baseline`` (the engine
    core imports itself relatively, so the copy needs no edits)."""
    import importlib.util
    import sys
    from pathlib import Path
    init = Path(tree) / "tcrex" / "__init__.py"
    spec = importlib.util.spec_from_file_location("tcrex_baseline", init,
                                                  submodule_search_locations=[str(init.parent)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["tcrex_baseline"] = module
    spec.loader.exec_module(module)
    return module


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    dataset_arguments(parser)
    parser.add_argument("--folds", type=int, default=2, help="first K folds of the 10-fold split (default 2)")
    parser.add_argument("--rho", type=float, default=0.02)
    parser.add_argument("--tau", type=float, default=0.9)
    parser.add_argument("--trees", type=int, nargs="+", default=[1],
                        help="surrogate tree counts to report (default 1, the paper's); e.g. --trees 1 5")
    parser.add_argument("--baseline-tree", help="a checkout of an earlier version to time against")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per fold (median)")
    parser.add_argument("--bound-rows", type=int, default=0,
                        help="per fold, try up to this many rows no rule point rescued against every rule with "
                             "(nearly) every combination of observed values (the ceiling of recourse through "
                             "these rules)")
    args = parser.parse_args()
    baseline = load_baseline(args.baseline_tree) if args.baseline_tree else None
    print(machine())
    rows = []
    for path, trees in [(p, t) for p in dataset_paths(args.folders, args.datasets) for t in args.trees]:
        ds = load(path)
        acc = {"needing": 0, "verified": 0, "via_rule": 0, "unnamed": 0, "outside": 0, "json_same": True,
               "seconds": 0.0, "predict_seconds": 0.0, "rows": 0, "baseline_seconds": 0.0,
               "bound_tried": 0, "bound_rescued": 0}
        by_source, changes = {s: 0 for s in ("boundary", "searched", "next_rule", "minimal_change", "example")}, {
            s: [] for s in ("boundary", "searched", "next_rule", "minimal_change", "example")}
        skipped = 0
        for k, tr, te, model, ytr, yte, _ in fold_models(ds):
            if k >= args.folds:
                break
            Xtr, Xte = ds.X.iloc[tr], ds.X.iloc[te]
            try:
                ex = TCREx(rho=args.rho, tau=args.tau, n_trees=trees, target=1).fit(Xtr, model)
            except CellLimitError:
                skipped += 1
                continue
            acc["predict_seconds"] += median_seconds(lambda: model.predict(Xte), args.repeat)
            acc["seconds"] += median_seconds(lambda: ex.counterfactuals(Xte, model=model), args.repeat)
            cf = ex.counterfactuals(Xte, model=model)
            if baseline is not None:
                old = baseline.TCREx(rho=args.rho, tau=args.tau, n_trees=trees, target=1).fit(Xtr, model)
                acc["baseline_seconds"] += median_seconds(lambda: old.counterfactuals(Xte, model=model), args.repeat)
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
            if args.bound_rows:
                tried, rescued = exhaustive_rule_bound(ex, Xtr, Xte, cf, expl, model, args.bound_rows)
                acc["bound_tried"] += tried
                acc["bound_rescued"] += rescued
            restored = TCREx.from_json(ex.to_json()).counterfactuals(Xte, model=model, reference=Xtr)
            acc["json_same"] &= bool(restored.equals(cf))
        n = max(acc["needing"], 1)
        all_changes = [c for s in ("boundary", "searched", "next_rule", "minimal_change") for c in changes[s]]
        rows.append({
            "dataset": ds.name, "trees": trees, "folds": args.folds - skipped, "needing": acc["needing"],
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
            **({"bound: tried": acc["bound_tried"], "bound: rescued": acc["bound_rescued"]}
               if args.bound_rows else {}),
            **({"before ms/row": 1000 * acc["baseline_seconds"] / max(acc["rows"], 1),
                "ratio to before": acc["seconds"] / acc["baseline_seconds"] if acc["baseline_seconds"] else np.nan}
               if baseline is not None else {}),
        })
        print(f"{ds.name}: {rows[-1]}", flush=True)
    print()
    print(md_table(pd.DataFrame(rows)))


if __name__ == "__main__":
    main()
