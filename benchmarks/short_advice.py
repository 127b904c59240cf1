"""Short advice and special codes: T-CREx's verified advice against DiCE random, and the choice of the
``max_changes`` default.

Per dataset — Adult and Credit (``../shared/datasets``), the bundled sample (``sample_data/loans.csv``) and the
generated credit-bureau data set (:func:`tcrex.datasets.make_credit_bureau`, with special codes -7/-8/-9) — one
shuffled 70/30 split (seed 0) and the paper protocol's XGBoost (``common.train_model``) trained on the 70 %. The
favourable outcome is 1 (income > 50K, no default, approved, "Good"); the inputs that need recourse are the test
rows the model gives 0.

* **T-CREx** (rho=0.02, tau=0.9, one tree, no constraints, as DiCE gets none) is fitted on the training inputs
  with the model and gives every input that needs recourse its verified advice (``counterfactuals``), in five
  settings: the codes treated as numbers with no limit (``special_codes=None, max_changes=None``: a
  search that treats them as numbers), the codes kept with no limit, and ``max_changes`` 2, 3 (the default) and 4. Per setting: the
  verified share, the mean and largest number of changes of the verified advice, the verified points that move a
  feature into or out of a special code, and the time per input ((fit + advice for every input) / inputs).
* **DiCE random** (dice-ml, ``total_CFs=1``, ``desired_class=1``) on a random sample of those inputs (``--dice``,
  default 30): the share it finds, its validity (the model gives 1 at the point), mean changes, moves into/out
  of special codes and seconds per input. T-CREx's default on the same sample is printed beside it.

Special codes are those :func:`tcrex.sentinel_codes` finds in a training column (the generated data's -7/-8/-9;
none in the other three). DiCE is optional: without dice-ml the T-CREx rows are still printed, with a message.

    .venv/bin/pip install -r benchmarks/requirements.txt
    .venv/bin/python benchmarks/short_advice.py                      # ~5 min on 2 cores
    .venv/bin/python benchmarks/short_advice.py --datasets bureau --dice 10
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

os.environ.setdefault("TQDM_DISABLE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from tcrex import TCREx, sentinel_codes  # noqa: E402
from tcrex.datasets import CREDIT_BUREAU_TARGET, load_bundled_loans, make_credit_bureau  # noqa: E402
from tcrex.vocabulary import is_verified  # noqa: E402

DATASETS = ("adult", "credit", "loans", "bureau")
SETTINGS = {  # name -> TCREx parameters
    "codes as numbers, no limit": {"special_codes": None, "max_changes": None},
    "codes kept, no limit": {"max_changes": None},
    "max_changes=2": {"max_changes": 2},
    "max_changes=3 (default)": {"max_changes": 3},
    "max_changes=4": {"max_changes": 4},
}
DEFAULT = "max_changes=3 (default)"


def load(name: str) -> tuple[pd.DataFrame, np.ndarray]:
    """Features (categoricals as pandas categories, as the XGBoost model wants them) and 0/1 labels."""
    if name == "bureau":
        frame = make_credit_bureau(10_000, random_state=0)
        X, y = frame.drop(columns=CREDIT_BUREAU_TARGET), (frame[CREDIT_BUREAU_TARGET] == "Good").to_numpy(int)
    elif name == "loans":
        frame = load_bundled_loans()
        X, y = frame.drop(columns="approved"), frame["approved"].to_numpy(int)
    else:
        path = common.SHARED_DATA / f"{name}.csv"
        if not path.is_file():
            return None, None
        ds = common.load(path)
        return ds.X, ds.y
    cats = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    X = X.astype({c: str for c in cats}).astype({c: pd.CategoricalDtype(sorted(X[c].astype(str).unique()))
                                                 for c in cats})
    return X, y


def code_moves(X: pd.DataFrame, points: pd.DataFrame, rows: np.ndarray, codes: dict) -> tuple[int, int]:
    """Points (of ``rows``) that move a feature into / out of one of its special codes."""
    into = out = 0
    for c, cs in codes.items():
        a, b = X[c].to_numpy(dtype=float)[rows], pd.to_numeric(points[c], errors="coerce").to_numpy(float)[rows]
        moved = a != b
        into += int((moved & np.isin(b, cs)).sum())
        out += int((moved & np.isin(a, cs)).sum())
    return into, out


def n_changes(X: pd.DataFrame, points: pd.DataFrame) -> np.ndarray:
    return np.array([sum(str(X[c].iloc[i]) != str(points[c].iloc[i]) if not pd.api.types.is_numeric_dtype(X[c])
                         else float(X[c].iloc[i]) != float(points[c].iloc[i]) for c in X.columns)
                     for i in range(len(X))])


class ModelForDice:
    """The XGBoost model behind DiCE's sklearn interface (DiCE hands over object columns)."""

    def __init__(self, model, like: pd.DataFrame):
        self.model, self.like = model, like

    def _cast(self, X: pd.DataFrame) -> pd.DataFrame:
        X = X[list(self.like.columns)].copy()
        for c in self.like.columns:
            dtype = self.like[c].dtype
            X[c] = X[c].astype(str).astype(dtype) if isinstance(dtype, pd.CategoricalDtype) else \
                pd.to_numeric(X[c]).astype(float)
        return X

    def predict(self, X):
        return self.model.predict(self._cast(X))

    def predict_proba(self, X):
        return self.model.predict_proba(self._cast(X))


def run_dice(X_train, y_model, model, query: pd.DataFrame):
    import dice_ml
    cats = [c for c in X_train.columns if isinstance(X_train[c].dtype, pd.CategoricalDtype)]
    train = X_train.astype({c: object for c in cats}).copy()
    train["target"] = y_model
    data = dice_ml.Data(dataframe=train, continuous_features=[c for c in X_train.columns if c not in cats],
                        outcome_name="target")
    wrapped = dice_ml.Model(model=ModelForDice(model, X_train), backend="sklearn")
    exp = dice_ml.Dice(data, wrapped, method="random")
    q_obj = query.astype({c: object for c in cats})
    points, times = [], []
    for i in range(len(q_obj)):
        t = time.perf_counter()
        try:
            res = exp.generate_counterfactuals(q_obj.iloc[[i]], total_CFs=1, desired_class=1, verbose=False,
                                               random_seed=common.SEED + i)
            cf = res.cf_examples_list[0].final_cfs_df
        except Exception:  # noqa: BLE001 - DiCE raises bare exceptions when it finds nothing
            cf = None
        times.append(time.perf_counter() - t)
        points.append(pd.Series(np.nan, index=query.columns) if cf is None or not len(cf)
                      else cf.iloc[0][list(query.columns)])
    return pd.DataFrame(points, index=query.index), np.array(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--inputs", type=int, default=1000, help="inputs needing recourse explained by T-CREx")
    parser.add_argument("--dice", type=int, default=30, help="of those, inputs DiCE random explains")
    args = parser.parse_args()
    try:
        import dice_ml  # noqa: F401
        have_dice = True
    except ImportError:
        have_dice = False
        print("dice-ml is not installed (pip install -r benchmarks/requirements.txt): DiCE rows are skipped")
    warnings.filterwarnings("ignore")
    rows = []
    for name in args.datasets:
        X, y = load(name)
        if X is None:
            print(f"{name}: {common.SHARED_DATA} has no {name}.csv; skipped")
            continue
        rng = np.random.default_rng(common.SEED)
        order = rng.permutation(len(X))
        cut = int(0.7 * len(X))
        tr, te = order[:cut], order[cut:]
        X_train, X_test = X.iloc[tr], X.iloc[te]
        model = common.train_model(X_train, y[tr])
        y_model = model.predict(X_train)
        needing = np.flatnonzero(model.predict(X_test) == 0)
        needing = np.sort(rng.choice(needing, min(args.inputs, len(needing)), replace=False))
        query = X_test.iloc[needing]
        sample = np.sort(rng.choice(len(query), min(args.dice, len(query)), replace=False))
        codes = {c: sentinel_codes(X_train[c])[0] for c in X_train.columns
                 if pd.api.types.is_numeric_dtype(X_train[c])}
        codes = {c: v for c, v in codes.items() if v}
        print(f"{name}: {len(X_train):,} training rows, {len(query):,} inputs needing recourse; special codes: "
              + (", ".join(f"{c} {v}" for c, v in codes.items()) or "none"), flush=True)
        for setting, params in SETTINGS.items():
            t = time.perf_counter()
            ex = TCREx(rho=0.02, tau=0.9, target=1, **params).fit(X_train, model)
            cf = ex.counterfactuals(query)
            secs = (time.perf_counter() - t) / len(query)
            ver = np.asarray(is_verified(cf))
            into, out = code_moves(query, cf, np.flatnonzero(ver), codes)
            n = cf["n_changes"].to_numpy()
            on_sample = ver[sample]
            rows.append({"dataset": name, "method": f"T-CREx, {setting}", "inputs": len(query),
                         "verified": ver.mean(), "mean changes": n[ver].mean(), "max changes": n[ver].max(),
                         "into codes": into, "out of codes": out, "s per input": secs,
                         "mean changes (DiCE sample)": n[sample][on_sample].mean() if on_sample.any() else np.nan,
                         "verified (DiCE sample)": on_sample.mean()})
            print(f"  {setting}: verified {ver.mean():.3f}, changes {n[ver].mean():.2f} (max {n[ver].max()}), "
                  f"into/out of codes {into}/{out}, {secs * 1e3:.2f} ms per input", flush=True)
        if not have_dice or not args.dice:
            continue
        q = query.iloc[sample]
        points, secs = run_dice(X_train, y_model, model, q)
        found = points.notna().all(axis=1).to_numpy()
        valid = np.zeros(len(q), dtype=bool)
        if found.any():
            valid[found] = ModelForDice(model, X_train).predict(points[found]) == 1
        changes = n_changes(q[found].reset_index(drop=True), points[found].reset_index(drop=True))
        into, out = code_moves(q, points, np.flatnonzero(found), codes)
        rows.append({"dataset": name, "method": "DiCE random", "inputs": len(q), "verified": valid.mean(),
                     "mean changes": changes.mean() if len(changes) else np.nan,
                     "max changes": changes.max() if len(changes) else np.nan, "into codes": into,
                     "out of codes": out, "s per input": secs.mean(),
                     "mean changes (DiCE sample)": changes.mean() if len(changes) else np.nan,
                     "verified (DiCE sample)": valid.mean()})
        print(f"  DiCE random: found {found.mean():.3f}, valid {valid.mean():.3f}, changes {changes.mean():.2f} "
              f"(max {changes.max()}), into/out of codes {into}/{out}, {secs.mean():.3f} s per input", flush=True)
    table = pd.DataFrame(rows)
    out_dir = common.results_dir()
    table.to_csv(out_dir / "short_advice.csv", index=False)
    print()
    print(common.md_table(table, digits=3))


if __name__ == "__main__":
    main()
