"""What one test fold costs T-CREx once, against the per-input speed target "1000x faster than DiCE random".

T-CREx's time per input is (fit + explain + verified points of the whole test fold) / test inputs (peers.py), so
on small folds the fixed costs decide it. Per dataset and fold this times, separately and on the same XGBoost
model as peers.py: the fit, the explanation of the fold, one model call on the fold (the least verification can
do) and the verified points; it prints them next to the budget = test inputs x DiCE random's seconds per input /
1000, with DiCE's time read from a peers.py summary (``--dice-summary``).

    .venv/bin/python benchmarks/fold_floor.py --dice-summary benchmarks/results/peers_s23b_summary.csv
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from tcrex import TCREx  # noqa: E402


def fastest_ms(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.dataset_arguments(parser)
    parser.set_defaults(datasets=["pima", "mammographic_mass", "banknote"])
    parser.add_argument("--dice-summary", type=Path, required=True, help="a peers.py *_summary.csv")
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=15, help="timings per part (fastest kept)")
    args = parser.parse_args()
    if not args.dice_summary.is_file():
        raise SystemExit(f"{args.dice_summary} does not exist: run benchmarks/peers.py first (its --out names the "
                         "summary, e.g. --out peers_s23b writes benchmarks/results/peers_s23b_summary.csv)")
    summary = pd.read_csv(args.dice_summary)
    dice = summary[summary.method == "dice-random"].set_index("dataset").s_per_instance
    print("machine:", common.machine())
    rows = []
    for path in common.dataset_paths(args.folders, args.datasets):
        ds = common.load(path)
        if ds.name not in dice.index:
            print(f"{ds.name}: no DiCE random time in {args.dice_summary}; skipped")
            continue
        for k, tr, te, model, ytr, yte, _ in common.fold_models(ds):
            if k >= args.folds:
                break
            X_train, X_test = ds.X.iloc[tr], ds.X.iloc[te]

            def fit():
                return TCREx(rho=0.02, tau=0.9, grower="hist").fit(X_train, y_pred=ytr)
            ex = fit()
            rows.append({"dataset": ds.name, "fold": k, "n_test": len(te),
                         "fit_ms": fastest_ms(fit, args.repeat),
                         "explain_ms": fastest_ms(lambda: ex.explain(X_test, y_pred=yte), args.repeat),
                         "one_model_call_ms": fastest_ms(lambda: model.predict(X_test), args.repeat),
                         "verified_points_ms": fastest_ms(
                             lambda: ex.counterfactuals(X_test, y_pred=yte, model=model, verify=True), args.repeat)})
    df = pd.DataFrame(rows).groupby("dataset", sort=False).mean(numeric_only=True).drop(columns="fold")
    df["budget_ms"] = df.n_test * df.index.map(dice) / 1000 * 1e3
    df["floor_ms"] = df.fit_ms + df.explain_ms + df.one_model_call_ms
    df["floor_share_of_budget"] = df.floor_ms / df.budget_ms
    df["total_now_ms"] = df.fit_ms + df.explain_ms + df.verified_points_ms
    df["dice_random_over_tcrex"] = df.budget_ms * 1000 / df.total_now_ms
    print(common.md_table(df.reset_index()))


if __name__ == "__main__":
    main()
