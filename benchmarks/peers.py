"""T-CREx against DiCE (dice-ml from PyPI) on the same folds, XGBoost model and test inputs.

Per dataset (default: Pima, COMPAS and Adult, where DiCE is reported at 0.09-0.55 s per instance) and CV fold
(the paper protocol's 10-fold split and model, see paper_protocol.py):

* T-CREx (rho=0.02, tau=0.9, one surrogate tree; ``--trees 1 5`` adds a row per further tree count, named
  ``tcrex-5trees``) is fitted on the training fold, explains the whole test fold and gives every test input its
  verified counterfactual point; its per-instance time is (fit + explain + verified points) / test inputs, i.e. the
  fit is included and amortised over the fold (fastest of ``--repeat`` runs, default 3, because one run takes
  milliseconds and other jobs share the machine; DiCE's seconds-long calls are averaged over the sampled inputs
  instead). T-CREx verifies its points on the XGBoost model itself: the pandas wrapper below exists because DiCE
  hands the model object columns, and its per-call cast is DiCE's cost, not T-CREx's. A tree count whose
  metarule grid exceeds the cell limit on a fold (the paper's failure mode, e.g. Pima with 5 trees) is reported
  as not found for that fold's inputs.
* DiCE's ``random``, ``genetic`` and ``kdtree`` methods each produce one counterfactual (``total_CFs=1``,
  ``desired_class="opposite"``) for a bounded random sample of the fold's test inputs (``--instances``, default
  5 per fold); their per-instance time is the mean wall time of ``generate_counterfactuals``. DiCE gets the
  training inputs with the model's outputs as its data, like T-CREx.
* On those same sampled inputs: sparsity (features changed), distance (total percentile shift, percentiles of
  the training fold, a changed categorical counts 1) and validity (the model's output at the point is the other
  class) of DiCE's point and of T-CREx's counterfactual point (the nearest point of its rule).

Ratios DiCE / T-CREx are printed (time: higher means T-CREx is faster). DiCE is optional: without dice-ml this
prints a message and exits. Writes results/peers.csv (one row per sampled input and method) and
results/peers_summary.csv.

    .venv/bin/pip install -r benchmarks/requirements.txt
    .venv/bin/python benchmarks/peers.py                   # ~10 min on 2 cores
    .venv/bin/python benchmarks/peers.py --datasets pima --folds 2 --instances 3   # a quick look
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

os.environ.setdefault("TQDM_DISABLE", "1")  # DiCE draws a progress bar per instance
sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from tcrex import TCREx  # noqa: E402
from tcrex.errors import CellLimitError  # noqa: E402
from tcrex.vocabulary import SOURCES, is_verified  # noqa: E402
from tcrex._engine.base._data import FeatureSchema  # noqa: E402
from tcrex._engine.base._nearest import PercentileScale  # noqa: E402

METHODS = ("random", "genetic", "kdtree")


class ModelForDice:
    """The XGBoost model behind DiCE's sklearn interface: DiCE hands over object columns, XGBoost wants the
    training dtypes (pandas categories, numbers)."""

    def __init__(self, model, like: pd.DataFrame):
        self.model, self.like = model, like

    def _cast(self, X: pd.DataFrame) -> pd.DataFrame:
        X = X[list(self.like.columns)].copy()
        for c in self.like.columns:
            dtype = self.like[c].dtype
            X[c] = X[c].astype(dtype) if isinstance(dtype, pd.CategoricalDtype) else pd.to_numeric(X[c]).astype(float)
        return X

    def predict(self, X):
        return self.model.predict(self._cast(X))

    def predict_proba(self, X):
        return self.model.predict_proba(self._cast(X))


def point_metrics(query: pd.DataFrame, points: pd.DataFrame, scale: PercentileScale, schema, model, like,
                  wanted: np.ndarray) -> pd.DataFrame:
    """Sparsity, percentile-shift distance and validity of one point per query row (NaN rows: no point)."""
    found = points.notna().all(axis=1).to_numpy()
    out = pd.DataFrame({"found": found, "sparsity": np.nan, "distance": np.nan, "valid": 0.0}, index=query.index)
    if found.any():
        q, p = query[found], points[found]
        eq = schema.encode(q)
        ep = schema.encode(p[[str(c) for c in q.columns]].set_axis(list(q.columns), axis=1))
        num_changed = ~np.isclose(eq.num, ep.num, rtol=0, atol=1e-9)
        out.loc[found, "sparsity"] = num_changed.sum(axis=1) + (eq.cat != ep.cat).sum(axis=1)
        out.loc[found, "distance"] = scale.distance(eq, ep)
        pred = ModelForDice(model, like).predict(p)
        out.loc[found, "valid"] = (pred == wanted[found]).astype(float)
    return out


def run_dice(method, data, wrapped, query: pd.DataFrame, seed: int):
    import dice_ml
    exp = dice_ml.Dice(data, wrapped, method=method)
    points, times = [], []
    for i in range(len(query)):
        q = query.iloc[[i]]
        t = time.perf_counter()
        try:
            kw = {"random_seed": seed + i} if method == "random" else {}
            res = exp.generate_counterfactuals(q, total_CFs=1, desired_class="opposite", verbose=False, **kw)
            cf = res.cf_examples_list[0].final_cfs_df
        except Exception as exc:  # noqa: BLE001 - DiCE raises bare exceptions when it finds nothing
            cf = None
            if "counterfactual" not in str(exc).lower():
                print(f"    DiCE {method}: {type(exc).__name__}: {str(exc)[:100]}")
        times.append(time.perf_counter() - t)
        if cf is None or not len(cf):
            points.append(pd.Series(np.nan, index=query.columns))
        else:
            points.append(cf.iloc[0][list(query.columns)])
    return pd.DataFrame(points, index=query.index), np.array(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.dataset_arguments(parser)
    parser.set_defaults(datasets=["pima", "compas", "adult"])
    parser.add_argument("--folds", type=int, default=common.N_FOLDS, help="use the first FOLDS of the 10 folds")
    parser.add_argument("--instances", type=int, default=5, help="test inputs sampled per fold for DiCE")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--tau", type=float, default=0.9)
    parser.add_argument("--grower", default="hist", choices=["exact", "hist"])
    parser.add_argument("--trees", nargs="+", type=int, default=[1],
                        help="surrogate tree counts; the first is 'tcrex', each further one 'tcrex-<n>trees'")
    parser.add_argument("--repeat", type=int, default=3, help="T-CREx fit+explain runs per fold (fastest kept)")
    parser.add_argument("--out", default="peers", help="stem of the CSVs under results/")
    args = parser.parse_args()
    try:
        import dice_ml
    except ImportError:
        print("dice-ml is not installed, so there is nothing to compare with: "
              "`.venv/bin/pip install -r benchmarks/requirements.txt` installs it (optional)")
        return
    warnings.simplefilter("ignore")
    print("machine:", common.machine())
    print(f"dice-ml {getattr(dice_ml, '__version__', '?')}; DiCE explains {args.instances} randomly sampled test "
          f"inputs per fold ({args.folds} folds); T-CREx (grower={args.grower}, tau={args.tau}) explains every "
          "test input of the fold, and its time per input includes the fit")
    rows, fold_rows = [], []
    for path in common.dataset_paths(args.folders, args.datasets):
        ds = common.load(path)
        print(f"\n== {ds.name}: {ds.shape}", flush=True)
        rng = np.random.default_rng(common.SEED)
        for k, tr, te, model, ytr, yte, _ in common.fold_models(ds):
            if k >= args.folds:
                break
            X_train, X_test = ds.X.iloc[tr], ds.X.iloc[te]
            pick = np.sort(rng.choice(len(te), size=min(args.instances, len(te)), replace=False))
            query, y_query = X_test.iloc[pick], yte[pick]
            wanted = 1 - y_query  # binary: the other class
            cols = list(X_test.columns)
            schema = FeatureSchema.detect(X_train)  # what every fit of this fold detects; DiCE's points too
            scale = PercentileScale(schema.encode(X_train))
            for n_trees in args.trees:
                name = "tcrex" if n_trees == args.trees[0] else f"tcrex-{n_trees}trees"
                fold_row = {"dataset": ds.name, "fold": k, "method": name, "n_trees": n_trees, "n_test": len(te)}
                fit_s = explain_s = verify_s = np.inf
                try:
                    for _ in range(max(1, args.repeat)):
                        t0 = time.perf_counter()
                        ex = TCREx(rho=0.02, tau=args.tau, n_trees=n_trees, grower=args.grower).fit(X_train, y_pred=ytr)
                        t1 = time.perf_counter()
                        ex.explain(X_test, y_pred=yte)
                        t2 = time.perf_counter()
                        cf_all = ex.counterfactuals(X_test, y_pred=yte, model=model, verify=True)
                        t3 = time.perf_counter()
                        if t3 - t0 < fit_s + explain_s + verify_s:
                            fit_s, explain_s, verify_s = t1 - t0, t2 - t1, t3 - t2
                except CellLimitError:
                    fold_rows.append({**fold_row, "cell_limit": True})
                    print(f"  fold {k}: {name}: the metarule grid exceeds the cell limit; no rules", flush=True)
                    for variant in ("", "-boundary", "-example"):
                        rows.extend({"dataset": ds.name, "fold": k, "row": idx, "method": name + variant,
                                     "seconds": np.nan, "found": False, "sparsity": np.nan, "distance": np.nan,
                                     "valid": 0.0} for idx in query.index)
                    continue
                per_input = (fit_s + explain_s + verify_s) / len(te)  # fit + explain + verified points, per input
                has_rule = cf_all["recourse"].notna()  # needing recourse (the verified share counts them all)
                src = cf_all["source"][has_rule].value_counts(normalize=True)
                fold_rows.append({**fold_row, "cell_limit": False, "tcrex_fit_s": fit_s,
                                  "tcrex_explain_s": explain_s, "tcrex_verify_s": verify_s,
                                  "tcrex_s_per_input": per_input, "n_with_rule": int(has_rule.sum()),
                                  "verified_valid_fold": float(is_verified(cf_all)[has_rule.to_numpy()].mean()),
                                  **{f"source_{k2}": float(src.get(k2, 0.0)) for k2 in SOURCES}})
                ours = {name: cf_all.iloc[pick][cols],  # the verified point (headline)
                        f"{name}-boundary": ex.counterfactuals(query, y_pred=y_query, verify=False)[cols],
                        f"{name}-example": ex.real_examples(query, y_pred=y_query)[cols]}
                for method, pts in ours.items():
                    pm = point_metrics(query, pts, scale, schema, model, X_train, wanted)
                    for i, idx in enumerate(query.index):
                        rows.append({"dataset": ds.name, "fold": k, "row": idx, "method": method,
                                     "seconds": per_input, **pm.loc[idx].to_dict()})
            cats = ds.categorical
            train = X_train.astype({c: object for c in cats}).copy()
            train["target"] = ytr
            data = dice_ml.Data(dataframe=train, continuous_features=[c for c in X_train.columns if c not in cats],
                                outcome_name="target")
            wrapped = dice_ml.Model(model=ModelForDice(model, X_train), backend="sklearn")
            q_obj = query.astype({c: object for c in cats})
            for method in args.methods:
                points, secs = run_dice(method, data, wrapped, q_obj, seed=common.SEED + 1000 * k)
                pm = point_metrics(query, points, scale, schema, model, X_train, wanted)
                for i, idx in enumerate(query.index):
                    rows.append({"dataset": ds.name, "fold": k, "row": idx, "method": f"dice-{method}",
                                 "seconds": secs[i], **pm.loc[idx].to_dict()})
            fold_secs = {m: np.mean([r["seconds"] for r in rows if r["method"] == f"dice-{m}" and r["fold"] == k
                                     and r["dataset"] == ds.name]) for m in args.methods}
            ours_secs = {r["method"]: r["tcrex_s_per_input"] for r in fold_rows
                         if r["dataset"] == ds.name and r["fold"] == k and not r["cell_limit"]}
            print(f"  fold {k}: " + ", ".join(f"{m} {v * 1e6:.0f} us/input" for m, v in ours_secs.items())
                  + "; DiCE " + ", ".join(f"{m} {v:.3f} s" for m, v in fold_secs.items()), flush=True)

    df = pd.DataFrame(rows)
    out = common.results_dir()
    df.to_csv(out / f"{args.out}.csv", index=False)
    pd.DataFrame(fold_rows).to_csv(out / f"{args.out}_folds.csv", index=False)
    summary = (df.groupby(["dataset", "method"], sort=False)
               .agg(instances=("row", "size"), s_per_instance=("seconds", "mean"), found=("found", "mean"),
                    sparsity=("sparsity", "mean"), distance=("distance", "mean"), validity=("valid", "mean"))
               .reset_index())
    ours = summary[summary.method == "tcrex"].set_index("dataset")
    for col in ("s_per_instance", "sparsity", "distance"):
        summary[f"{col}_vs_tcrex"] = summary[col] / summary.dataset.map(ours[col])
    summary.to_csv(out / f"{args.out}_summary.csv", index=False)
    print("\n== per dataset and method (means over the sampled inputs; *_vs_tcrex = method / T-CREx)")
    print(common.md_table(summary))
    print("\n== T-CREx speed-up over DiCE per instance (fit included, amortised over the test fold)")
    variants = ["tcrex"] + [f"tcrex-{n}trees" for n in args.trees[1:]]
    for name, g in summary.groupby("dataset", sort=False):
        for variant in variants:
            base = g[g.method == variant].s_per_instance
            if not len(base) or not np.isfinite(base.iloc[0]):
                print(f"  {name:18s} {variant}: no rules on any fold (cell limit), no time")
                continue
            base = base.iloc[0]
            n_limited = sum(1 for r in fold_rows if r["dataset"] == name and r["method"] == variant and r["cell_limit"])
            note = f" (cell limit on {n_limited} fold(s): time of the others)" if n_limited else ""
            print(f"  {name:18s} {variant}{note} {base * 1e6:8.1f} us/input; " + "; ".join(
                f"{m.replace('dice-', '')} {r.s_per_instance:.3f} s = {r.s_per_instance / base:,.0f}x"
                for m, r in zip(g.method, g.itertuples()) if m.startswith("dice-")))
    folds_df = pd.DataFrame(fold_rows)
    limited = folds_df[folds_df.cell_limit]
    if len(limited):
        print("\n== cell limit reached (no rules): "
              + ", ".join(f"{r.dataset} fold {r.fold} {r.method}" for r in limited.itertuples()))
    folds_df = folds_df[~folds_df.cell_limit]
    print("\n== T-CREx on every test input with a rule (all sampled folds): verified-point validity and source")
    agg = folds_df.groupby(["dataset", "method"], sort=False).apply(lambda g: pd.Series({
        "inputs_with_rule": g.n_with_rule.sum(),
        "verified_valid": np.average(g.verified_valid_fold, weights=g.n_with_rule),
        **{f"source_{s}": np.average(g[f"source_{s}"], weights=g.n_with_rule) for s in SOURCES},
        "fit_ms": 1e3 * g.tcrex_fit_s.mean(), "verify_ms": 1e3 * g.tcrex_verify_s.mean(),
        "us_per_input": 1e6 * g.tcrex_s_per_input.mean()}), include_groups=False).reset_index()
    print(common.md_table(agg))
    agg.to_csv(out / f"{args.out}_tcrex_folds.csv", index=False)
    print(f"\nwrote {out / (args.out + '.csv')}, {out / (args.out + '_folds.csv')} and "
          f"{out / (args.out + '_summary.csv')}")


if __name__ == "__main__":
    main()
