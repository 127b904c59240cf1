"""How often the default parameters give a degenerate explanation on the shared datasets, and what
``TCREx.fit_findings`` suggests (checked: the suggested parameters fitted on the same rows).

    .venv/bin/python benchmarks/fit_findings.py [--datasets ../shared/datasets] [--rows 10000]

Per dataset (the first ``--rows`` rows of each CSV of the folder; ``target`` is the label): an XGBoost classifier
(50 trees of depth 4, categorical columns as pandas categories) is trained on the rows, and ``TCREx()`` at the
defaults (rho 0.02, tau 0.9, 1 tree, both directions) is fitted on them with the model; it prints the rules and
metarules, the findings' kinds, the suggestion with the rules and metarules it was checked to give, the seconds
the findings took (the search included), and the machine's load. Also the generated credit-card table
(``tcrex.datasets.make_credit_card(3000)``). Skips a missing folder with a message.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "datasets"


def tables(folder: Path, rows: int):
    import pandas as pd

    from tcrex.datasets import make_credit_card

    for path in sorted(folder.glob("*.csv")):
        frame = pd.read_csv(path).head(rows)
        yield path.name, frame.drop(columns=["target"]), frame["target"].to_numpy()
    cards = make_credit_card(3000, random_state=0)
    yield "make_credit_card(3000)", cards.drop(columns=["default"]), cards["default"].to_numpy()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=DEFAULT)
    parser.add_argument("--rows", type=int, default=10_000)
    args = parser.parse_args()
    if not args.datasets.is_dir():
        print(f"SKIP: {args.datasets} not found (the shared datasets are not part of the project)")
        return 0
    import pandas as pd
    import xgboost as xgb

    from tcrex import TCREx

    degenerate = 0
    n = 0
    for name, X, y in tables(args.datasets, args.rows):
        cats = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
        X = X.astype({c: "category" for c in cats})
        model = xgb.XGBClassifier(n_estimators=50, max_depth=4, enable_categorical=True, tree_method="hist",
                                  n_jobs=1, random_state=0).fit(X, y)
        t0 = time.perf_counter()
        try:
            ex = TCREx().fit(X, model)
        except Exception as exc:  # noqa: BLE001 - a benchmark reports every dataset, failed or not
            print(f"{name:28s} fit failed: {type(exc).__name__}: {str(exc)[:120]}")
            continue
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        findings = ex.fit_findings()
        find_s = time.perf_counter() - t0
        n += 1
        shape = " + ".join(f"{s.n_rules}r/{len(s.metarules)}m" for s in ex.targets_)
        if findings:
            degenerate += 1
            f = findings[0]
            said = (f"{sorted({g.kind for g in findings})}; suggests {f.suggestion} -> {f.suggested_rules} rules, "
                    f"{f.suggested_metarules} metarules" if f.suggestion else
                    f"{sorted({g.kind for g in findings})}; no suggestion found")
        else:
            said = "not degenerate"
        print(f"{name:28s} {len(X):6,} rows  defaults {shape:14s} fit {fit_s:5.2f} s  findings {find_s:5.2f} s  "
              f"{said}   (load {os.getloadavg()[0]:.1f})", flush=True)
    print(f"DEGENERATE AT THE DEFAULTS: {degenerate} of {n} tables")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
