"""The audit with a model counts the verified advice: mean changes by the rule against by the verified
advice, per group, and the time of the audit with a model against the audit before the change.

Per dataset: Adult grouped by MaritalStatus (7 groups) and Credit grouped by EducationLevel (4 groups) from
``../shared/datasets`` — the paper's XGBoost (``common.train_model``) and ``TCREx(target=1)`` fitted on the training
rows of the first of the 10 shuffled folds, the audit run on its test rows — and the bundled loans sample with its
model, all 4,000 rows grouped by employment.

* **Mean changes, rule vs verified**: per group, the paper rule's own change count averaged over the people with a
  rule (what ``audit(...)["mean_changes"]`` reported before: 0 for someone already inside a rule the model does not
  confirm) against the mean number of features the verified advice changes (``counterfactuals(verify=True)``,
  ``len(changed)``) — which the audit reports now. Groups whose two figures differ (by more than 0.0005) are counted.
* **Time**: ``audit(ex, X, groups, model=model)`` (1000 resamples) in this process against the same call of the code
  before the change, run in a child process with ``PYTHONPATH`` set to a checkout of it (``--before``, default
  ``--before``, e.g. ``git worktree add /tmp/before 1f696d4``; the child fits the same explainer on the same rows with the same model file). Each side is timed
  ``--repeats`` times (this process half before and half after the child, as other jobs load the machine) and the
  medians compared. Target: at most 1.5x.

Usage::

    .venv/bin/python benchmarks/audit_verified.py [--datasets adult credit loans] [--repeats 5] --before /tmp/before
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import SHARED_DATA, folds, load, machine, md_table, train_model  # noqa: E402

GROUPS = {"adult": "MaritalStatus", "credit": "EducationLevel", "loans": "employment"}

#: The child: the audit as the code at PYTHONPATH computes it, timed; prints JSON.
CHILD = r"""
import json, sys, time
import numpy as np, pandas as pd
sys.path.insert(0, sys.argv[1])
from common import SHARED_DATA, folds, load
import tcrex
from tcrex import TCREx
from tcrex.audit import audit
name, model_path, repeats = sys.argv[2], sys.argv[3], int(sys.argv[4])
def setup():
    if name == "loans":
        from tcrex.datasets import load_bundled_loans, load_bundled_model
        X = load_bundled_loans().drop(columns=["approved"])
        model = load_bundled_model()
        return X, X, model
    import xgboost
    ds = load(SHARED_DATA / f"{name}.csv")
    _, tr, te = next(folds(len(ds.X)))
    model = xgboost.XGBClassifier()
    model.load_model(model_path)
    return ds.X.iloc[tr], ds.X.iloc[te], model
X_fit, X, model = setup()
group = {"adult": "MaritalStatus", "credit": "EducationLevel", "loans": "employment"}[name]
ex = TCREx(target=1).fit(X_fit, model)
audit(ex, X, group, model=model, n_boot=50)  # warm up
times = []
for _ in range(repeats):
    t0 = time.perf_counter()
    res = audit(ex, X, group, model=model, n_boot=1000)
    times.append(time.perf_counter() - t0)
t = res.table()
print(json.dumps({"where": tcrex.__file__, "times": times,
                  "mean_changes": {g: (None if v != v else v) for g, v in
                                   zip(t["group"].astype(str), t["mean_changes"].astype(float))}}))
"""


def setup(name, tmp: Path):
    """(fit rows, audited rows, model, model file for the child)."""
    if name == "loans":
        from tcrex.datasets import load_bundled_loans, load_bundled_model
        X = load_bundled_loans().drop(columns=["approved"])
        return X, X, load_bundled_model(), ""
    ds = load(SHARED_DATA / f"{name}.csv")
    _, tr, te = next(folds(len(ds.X)))
    model = train_model(ds.X.iloc[tr], ds.y[tr])
    path = tmp / f"{name}.json"
    model.save_model(path)
    return ds.X.iloc[tr], ds.X.iloc[te], model, str(path)


def run(name, repeats, before, tmp):
    from tcrex import TCREx
    from tcrex.audit import audit
    from tcrex.vocabulary import has_recourse, is_verified, needs_recourse

    X_fit, X, model, model_path = setup(name, tmp)
    group = GROUPS[name]
    ex = TCREx(target=1).fit(X_fit, model)
    labels = X[group].astype(str).to_numpy()
    exp = ex.explain(X, model=model)
    cf = ex.counterfactuals(X, model=model, text=False)
    status = exp["status"].astype(str).to_numpy()
    has_rule, need, ver = has_recourse(status), needs_recourse(status), is_verified(cf)
    audit(ex, X, group, model=model, n_boot=50)  # warm up
    mine = []

    def time_after(k):
        for _ in range(k):
            t0 = time.perf_counter()
            res = audit(ex, X, group, model=model, n_boot=1000)
            mine.append(time.perf_counter() - t0)
        return res

    res = time_after(repeats - repeats // 2)
    env = {**os.environ, "PYTHONPATH": str(before)}
    # the child imports the checkout's own benchmarks/common.py, which puts that checkout first on sys.path
    child = subprocess.run([sys.executable, "-c", CHILD, str(Path(before) / "benchmarks"), name, model_path,
                            str(repeats)], env=env, capture_output=True, text=True, cwd=str(before), check=True)
    old = json.loads(child.stdout.strip().splitlines()[-1])
    assert Path(old["where"]).resolve().is_relative_to(Path(before).resolve()), old["where"]
    res = time_after(repeats // 2)
    table = res.table().set_index("group")
    rows, differ = [], 0
    for g in res.groups:
        sel = labels == g
        picked_rule, picked_ver = has_rule & sel, ver & sel & need
        rule = float(exp["changes"].to_numpy(dtype=float)[picked_rule].mean()) if picked_rule.any() else np.nan
        verified = float(cf["n_changes"].to_numpy()[picked_ver].mean()) if picked_ver.any() else np.nan
        # the audit reports the verified advice now, and reported the rule's count before (NaN: nobody to average)
        assert np.isclose(table.loc[g, "mean_changes"], verified, rtol=0, atol=1e-12, equal_nan=True)
        assert np.isclose(np.nan if old["mean_changes"][g] is None else old["mean_changes"][g], rule, rtol=0,
                          atol=1e-12, equal_nan=True)
        differ += bool(abs(rule - verified) > 5e-4)
        rows.append({"dataset": name, "group": f"{group} = {g}", "need recourse": int(table.loc[g, "n"]),
                     "verified": int(table.loc[g, "n_recourse"]),
                     "already in a rule the model rejects": int(table.loc[g, "n_already_in_rule"]),
                     "mean changes, rule (before)": rule, "mean changes, verified (after)": verified})
    after, before_s = float(np.median(mine)), float(np.median(old["times"]))
    summary = {"dataset": name, "rows audited": len(X), "groups": len(res.groups),
               "groups where the two differ": differ, "audit before s": before_s, "audit after s": after,
               "ratio": after / before_s}
    print(f"  {name:7s} {differ} of {len(res.groups)} groups differ; audit {after:.2f}s vs {before_s:.2f}s before "
          f"({after / before_s:.2f}x)", flush=True)
    return rows, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="*", default=["adult", "credit", "loans"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--before", required=True,
                    help="checkout of the code before the change, e.g. `git worktree add /tmp/before 1f696d4`")
    args = ap.parse_args()
    print(machine(), flush=True)
    per_group, summaries = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets:
            if name != "loans" and not (SHARED_DATA / f"{name}.csv").exists():
                print(f"  {name}: {SHARED_DATA} has no {name}.csv, skipped")
                continue
            rows, summary = run(name, args.repeats, Path(args.before), Path(tmp))
            per_group += rows
            summaries.append(summary)
    print()
    print(md_table(pd.DataFrame(per_group)))
    print()
    print(md_table(pd.DataFrame(summaries)))


if __name__ == "__main__":
    main()
