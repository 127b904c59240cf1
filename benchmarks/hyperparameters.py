"""Hyperparameter study (T-CREx paper, Section 5.1 and Appendix E).

Study A, every dataset: surrogate trees in {1, 2, 3, 5, 10, 20} x tau in {0.8, 0.9, 0.95, 0.98, 0.99}, rho=0.02.
Study B, Adult only: rho in {0.01, 0.02, 0.03, 0.04, 0.05} x the same trees and taus.

Same 10-fold CV and XGBoost model as paper_protocol.py. Per (dataset, fold, rho, trees) the surrogate is grown
once (at the lowest tau) and the other taus are re-derived with ``TCREx.update(tau=...)``, which reruns steps b-e
only; a configuration's runtime is nevertheless what a fresh fit would cost: encoding + surrogate (from the
fit) + rules and metarules (for that tau) + explaining the test fold. Failure modes are counted as shares of
folds: NoValidRuleError (no target has a valid rule), CellLimitError (the paper's 1e5-cell limit) and, separately,
"target_without_rule" (one target Y* has no valid rule, so its inputs get none: the engine only warns; the paper's
implementation would fail there). Desiderata are averaged over the folds that did not raise.

Writes results/hyperparameters.csv (one row per dataset, fold, rho, trees, tau), results/hyperparameters_summary.csv
and the plots results/hyperparameters_*.html (+ .png with kaleido).

    .venv/bin/python benchmarks/hyperparameters.py --quick          # 3 folds, trees {1,2,5}, tau {0.9,0.99}
    .venv/bin/python benchmarks/hyperparameters.py                  # the full study (see docs/benchmarks.md)
    .venv/bin/python benchmarks/hyperparameters.py --datasets adult credit --grower hist
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
from tcrex.metrics import evaluate  # noqa: E402

TREES = [1, 2, 3, 5, 10, 20]
TAUS = [0.8, 0.9, 0.95, 0.98, 0.99]
RHOS = [0.01, 0.02, 0.03, 0.04, 0.05]
METRICS = ["feasibility", "accuracy", "sparsity", "complexity", "consistency"]
FAILURES = (NoValidRuleError, CellLimitError)


def configurations(ds, tr, te, model, ytr, yte, rho, n_trees, taus, grower, max_cells, metrics):
    """One row per tau: the surrogate is grown once, every tau re-derived from it."""
    X_train, X_test = ds.X.iloc[tr], ds.X.iloc[te]
    ex, grow_time = None, np.nan
    for tau in sorted(taus):
        row = {"rho": rho, "n_trees": n_trees, "tau": tau, "n_test": len(te), "status": "ok"}
        t0 = time.perf_counter()
        try:
            if ex is None:  # first tau (or every earlier fit failed): a fresh fit
                attempt = TCREx(rho=rho, tau=tau, n_trees=n_trees, grower=grower, max_cells=max_cells)
                try:
                    attempt.fit(X_train, y_pred=ytr)
                finally:
                    if hasattr(attempt, "timings_"):
                        grow_time = attempt.timings_["encode"] + attempt.timings_["surrogate"]
                ex = attempt
                derive_time = ex.timings_["rules_and_metarules"]
            else:
                ex.update(tau=tau)
                derive_time = time.perf_counter() - t0
            t1 = time.perf_counter()
            ex.explain(X_test, y_pred=yte)
            explain_time = time.perf_counter() - t1
        except FAILURES as exc:
            elapsed = time.perf_counter() - t0
            row.update(status=type(exc).__name__, runtime=elapsed if ex is None else grow_time + elapsed)
            yield row
            continue
        row.update(runtime=grow_time + derive_time + explain_time, surrogate_s=grow_time, derive_s=derive_time,
                   explain_s=explain_time, n_rules=sum(s.n_rules for s in ex.targets_),
                   n_cells=sum(s.n_cells for s in ex.targets_),
                   n_metarules=sum(len(s.metarules) for s in ex.targets_),
                   targets_without_rule=sum(s.n_rules == 0 for s in ex.targets_))
        if metrics:
            summary = evaluate(ex, X_test, yte, model=model, fit_time=grow_time + derive_time, examples=False)
            row.update({k: summary[k] for k in METRICS + ["distance", "point_validity", "n_explained"]})
        yield row


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    keys = ["study", "dataset", "rho", "n_trees", "tau"]
    out = []
    for key, g in df.groupby(keys, sort=False):
        ok = g[g.status == "ok"]
        rec = dict(zip(keys, key))
        rec.update(folds=len(g), no_valid_rule=float((g.status == "NoValidRuleError").mean()),
                   cell_limit=float((g.status == "CellLimitError").mean()),
                   target_without_rule=float((g.get("targets_without_rule", pd.Series(0, index=g.index))
                                              .fillna(0) > 0).mean()),
                   runtime_s=g.runtime.mean(),
                   cells=ok.n_cells.mean() if len(ok) else np.nan, rules=ok.n_rules.mean() if len(ok) else np.nan)
        for m in METRICS + ["distance", "point_validity"]:
            rec[m] = ok[m].mean() if m in ok and len(ok) else np.nan
        out.append(rec)
    return pd.DataFrame(out)


def figures(summary: pd.DataFrame) -> dict:
    import plotly.express as px

    figs = {}
    shown = ["no_valid_rule", "target_without_rule", "cell_limit", "feasibility", "accuracy", "sparsity",
             "complexity", "consistency", "runtime_s", "cells"]
    a = summary[summary.study == "A"]
    if len(a):
        long = a.melt(id_vars=["dataset", "n_trees", "tau"], value_vars=shown, var_name="metric")
        long["tau"] = long.tau.astype(str)
        fig = px.line(long, x="n_trees", y="value", color="tau", facet_row="metric", facet_col="dataset",
                      markers=True, log_x=True, title="T-CREx vs number of surrogate trees and tau (rho=0.02), "
                      "cf. paper Figures 2 and 5; failure rates are shares of folds")
        fig.update_yaxes(matches=None, showticklabels=True, title_text="")
        fig.for_each_annotation(lambda an: an.update(text=an.text.split("=")[-1]))
        fig.update_layout(height=190 * len(shown) + 120, width=250 * a.dataset.nunique() + 250)
        figs["hyperparameters_trees_tau"] = fig
    b = summary[summary.study == "B"]
    if len(b):
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots
        rhos = sorted(b.rho.unique())
        fig = make_subplots(rows=len(shown), cols=len(rhos), column_titles=[f"rho={r}" for r in rhos],
                            row_titles=shown, horizontal_spacing=0.02, vertical_spacing=0.02)
        for i, m in enumerate(shown):
            lo, hi = np.nanmin(b[m].to_numpy(dtype=float)), np.nanmax(b[m].to_numpy(dtype=float))
            for j, rho in enumerate(rhos):
                g = b[b.rho == rho].pivot(index="n_trees", columns="tau", values=m)
                z = g.to_numpy(dtype=float)
                fig.add_trace(go.Heatmap(z=z, x=[str(t) for t in g.columns], y=[str(t) for t in g.index],
                                         zmin=lo, zmax=hi, colorscale="Viridis", showscale=False,
                                         text=[[("" if np.isnan(v) else f"{v:.2g}") for v in r] for r in z],
                                         texttemplate="%{text}", textfont_size=9), row=i + 1, col=j + 1)
        fig.update_xaxes(type="category", showticklabels=False)
        fig.update_xaxes(showticklabels=True, title_text="tau", row=len(shown))
        fig.update_yaxes(type="category", showticklabels=False)
        fig.update_yaxes(showticklabels=True, col=1)
        fig.update_layout(height=150 * len(shown) + 150, width=300 * len(rhos) + 200,
                          title="Adult: surrogate trees (rows of each panel) x tau (columns) for each rho, cf. paper "
                                "Figure 6; blank = every fold failed; colour scale per metric")
        figs["hyperparameters_adult_rho"] = fig
    return figs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.dataset_arguments(parser)
    parser.add_argument("--quick", action="store_true", help="3 folds, trees {1,2,5}, tau {0.9,0.99}, "
                        "rho {0.01,0.02,0.05}")
    parser.add_argument("--folds", type=int, help="use the first FOLDS of the 10 folds (default 10, quick 3)")
    parser.add_argument("--trees", nargs="+", type=int)
    parser.add_argument("--taus", nargs="+", type=float)
    parser.add_argument("--rhos", nargs="+", type=float, help="study B (Adult) rho values")
    parser.add_argument("--grower", default="exact", choices=["exact", "hist"])
    parser.add_argument("--max-cells", type=int, default=100_000)
    parser.add_argument("--study", choices=["A", "B", "both"], default="both")
    parser.add_argument("--no-metrics", action="store_true")
    parser.add_argument("--replot", action="store_true", help="only redraw the plots from results/hyperparameters.csv")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--no-png", action="store_true")
    args = parser.parse_args()
    folds = args.folds or (3 if args.quick else common.N_FOLDS)
    trees = args.trees or ([1, 2, 5] if args.quick else TREES)
    taus = args.taus or ([0.9, 0.99] if args.quick else TAUS)
    rhos = args.rhos or ([0.01, 0.02, 0.05] if args.quick else RHOS)
    warnings.simplefilter("ignore")
    if args.replot:
        summary = summarise(pd.read_csv(common.results_dir() / "hyperparameters.csv"))
        for p in common.save_figures(figures(summary), png=not args.no_png):
            print("wrote", p)
        return
    print("machine:", common.machine())
    print(f"grower={args.grower}, folds={folds}, trees={trees}, taus={taus}, study B rhos={rhos}")
    t_start = time.perf_counter()
    rows = []
    for path in common.dataset_paths(args.folders, args.datasets):
        ds = common.load(path)
        studies = []
        if args.study in ("A", "both"):
            studies.append(("A", [0.02]))
        if args.study in ("B", "both") and ds.name == "adult":
            studies.append(("B", rhos))
        if not studies:
            continue
        print(f"\n== {ds.name}: {ds.shape}", flush=True)
        t_ds = time.perf_counter()
        for k, tr, te, model, ytr, yte, _ in common.fold_models(ds):
            if k >= folds:
                break
            for study, rho_list in studies:
                for rho in rho_list:
                    for n_trees in trees:
                        for row in configurations(ds, tr, te, model, ytr, yte, rho, n_trees, taus, args.grower,
                                                  args.max_cells, not args.no_metrics):
                            rows.append({"study": study, "dataset": ds.name, "fold": k, **row})
        part = summarise(pd.DataFrame([r for r in rows if r["dataset"] == ds.name]))
        cols = ["study", "rho", "n_trees", "tau", "no_valid_rule", "target_without_rule", "cell_limit", "cells",
                "runtime_s"] + \
            [m for m in METRICS if m in part]
        print(common.md_table(part[cols]))
        print(f"  ({time.perf_counter() - t_ds:.0f} s)", flush=True)
    df = pd.DataFrame(rows)
    out = common.results_dir()
    df.to_csv(out / "hyperparameters.csv", index=False)
    summary = summarise(df)
    summary.to_csv(out / "hyperparameters_summary.csv", index=False)
    print(f"\nwrote {out / 'hyperparameters.csv'} and {out / 'hyperparameters_summary.csv'}; "
          f"whole study {time.perf_counter() - t_start:.0f} s")
    if not args.no_plots:
        for p in common.save_figures(figures(summary), png=not args.no_png):
            print("wrote", p)


if __name__ == "__main__":
    main()
