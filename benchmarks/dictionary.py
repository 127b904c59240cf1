"""The data dictionary: how often verified advice moves a feature into or out of a code, with and without the
dictionary, and how long a large dictionary file takes to read.

Tables: the generated credit-card table (``tcrex.datasets.make_credit_card``: repayment statuses -2/-1/0 beside
1..8 months of delay, with ``credit_card_codebook`` and ``credit_card_titles``), the differently shaped survey
table of the tests (``tests/support/dictionary_case.py``: 97/98/99 and -1/0 codes) and the shared HELOC
(``../shared/datasets/heloc.csv``, codes -7/-8/-9; its dictionary declares those codes in every column holding
them, as ``tcrex dictionary --data`` suggests). Per table one 70/30 split (seed 0), an XGBoost model trained on the
70 % (``common.train_model``), T-CREx (rho=0.02, tau=0.9, defaults otherwise) fitted on the training rows, and the
verified advice (``counterfactuals(..., reference=training rows)``) for at most ``--people`` test rows the model
does not give the favourable outcome 1. Settings: *codes as numbers* (``special_codes=None``), *today's default*
(``special_codes="auto"``, no dictionary) and *with the dictionary* (``dictionary=``, its suggested
actionability on or ``constraints={}``). Printed per setting: people needing recourse, the verified share, the
verified points that move a feature into or out of one of the dictionary's codes, their mean changes, and the
mean changes of the people every setting serves. With ``--bound``, for the setting with the dictionary, a brute
force over every change of at most 3 of the features the fitted constraints let a person change (12 quantiles of
each, the ordinary values of a column with codes, every category): the share of people some such change serves
and the mean of each one's fewest changes -- what no search on that grid can beat.

The read time of a 5 MB dictionary (a CSV of 100,000 labels over 2,000 columns, and its JSON form) is printed as
a ratio against ``csv.reader`` / ``json.loads`` of the same bytes in the same process (``time.perf_counter``,
best of 3).

    .venv/bin/python benchmarks/dictionary.py                 # ~3 min on 2 cores
    .venv/bin/python benchmarks/dictionary.py --tables card --people 300
    .venv/bin/python benchmarks/dictionary.py --people 400 --no-read --bound     # the figures of docs/dictionary.md
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("TQDM_DISABLE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(Path(__file__).resolve().parent), str(ROOT)]

from common import train_model  # noqa: E402

from tcrex import TCREx  # noqa: E402
from tcrex.dictionary import DataDictionary, read_dictionary  # noqa: E402
from tests.support.dictionary_case import code_moves  # noqa: E402

HELOC = ROOT.parent / "shared" / "datasets" / "heloc.csv"


def _card():
    from tcrex.datasets import CREDIT_CARD_STATUS_CODES, credit_card_codebook, credit_card_titles, make_credit_card
    X = make_credit_card(6000, random_state=0)
    y = X.pop("default").to_numpy()
    y = 1 - y  # favourable: no default
    X = X.astype({c: "category" for c in ("sex", "education", "marital_status")})
    codes = {c: sorted(CREDIT_CARD_STATUS_CODES) for c in X.columns if c.startswith("status_")}
    return X, y, DataDictionary.from_parts(credit_card_codebook(), codes, credit_card_titles())


def _survey():
    from tests.support.dictionary_case import survey_case
    X, model, d = survey_case(n=6000)
    return X, model.predict(X), d


def _heloc():
    df = pd.read_csv(HELOC)
    y = df.pop("target").to_numpy()
    codes = {c: sorted(int(v) for v in set(df[c].unique()) & {-7, -8, -9}) for c in df.columns}
    d = DataDictionary.from_parts(special_codes={c: v for c, v in codes.items() if v})
    return df, y, d


TABLES = {"card": _card, "survey": _survey, "heloc": _heloc}


def advice(X, y, d, people: int, bound: bool = False) -> list[dict]:
    rng = np.random.default_rng(0)
    order = rng.permutation(len(X))
    cut = int(0.7 * len(X))
    tr, te = order[:cut], order[cut:]
    Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
    model = train_model(Xtr, np.asarray(y)[tr])
    need = Xte[model.predict(Xte) == 0].iloc[:people]
    rows, oks, changes = [], [], []
    for name, params in (("codes as numbers", {"special_codes": None}), ("today's default", {}),
                         ("with the dictionary", {"dictionary": d}),
                         ("dictionary, constraints={}", {"dictionary": d, "constraints": {}})):
        t0 = time.perf_counter()
        ex = TCREx(rho=0.02, tau=0.9, target=1, **params).fit(Xtr, model)
        points = ex.counterfactuals(need, model=model, reference=Xtr)
        seconds = time.perf_counter() - t0
        moved, verified = code_moves(need, points, d)
        ok = points["recourse"].eq("verified").fillna(False).to_numpy(bool)
        oks.append(ok)
        changes.append(points["n_changes"].to_numpy(float))
        row = {"setting": name, "people": len(need), "verified": f"{verified / max(len(need), 1):.1%}",
               "into/out of a code": f"{moved} ({moved / max(verified, 1):.1%})",
               "mean changes": round(float(points.loc[ok, "n_changes"].mean()), 2) if ok.any() else None,
               "seconds": round(seconds, 1)}
        if bound and name == "with the dictionary":
            fewest = movable_bound(ex, need, model, Xtr, d)
            found = fewest > 0
            row["bound"] = f"{found.mean():.1%}"
            row["bound mean changes"] = round(float(fewest[found].mean()), 2) if found.any() else None
        rows.append(row)
    both = np.logical_and.reduce(oks)  # people every setting serves: the same people's changes, side by side
    for row, c in zip(rows, changes):
        row["mean changes, served by all"] = round(float(c[both].mean()), 2) if both.any() else None
    return rows


def movable_bound(ex, need, model, Xtr, d, grid: int = 12) -> np.ndarray:
    """Per person, the fewest features (0: none found) of *any* change of at most ``ex.max_changes`` (3 by default) of the features the fitted
    constraints let them change -- to one of ``grid`` quantiles of the training values (the observed ordinary
    values of a column with codes, every category), never into or out of a code, increase-only features only up
    -- that the model confirms: a brute force that bounds what the search can reach on this grid (the share served,
    and the mean changes no actionable advice on the grid goes below)."""
    import itertools
    cons = ex.constraints_.to_dict()
    movable = [n for n in ex.schema_.names if cons.get(n, {}).get("kind") != "immutable"]
    values = {}
    for f in movable:
        if ex.schema_.features[ex.schema_.index(f)].is_categorical:
            values[f] = list(pd.unique(Xtr[f]))
        elif f in d.special_codes:
            values[f] = sorted(set(Xtr[f].unique()) - set(d.special_codes[f]))
        else:
            q = np.quantile(Xtr[f].dropna(), np.linspace(0, 1, grid))
            integer = pd.api.types.is_integer_dtype(Xtr[f].dtype)
            values[f] = list(np.unique(np.round(q).astype(np.int64) if integer else q))
    fewest = np.zeros(len(need), dtype=np.int64)
    for i in range(len(need)):
        row = need.iloc[[i]]
        feats = [f for f in movable if not (f in d.special_codes and row[f].iloc[0] in d.special_codes[f])]
        for size in range(1, (ex.max_changes or 3) + 1):
            for subset in itertools.combinations(feats, size):
                options = [[v for v in values[f] if v != row[f].iloc[0]
                            and (cons.get(f, {}).get("kind") != "increase_only" or v > row[f].iloc[0])]
                           for f in subset]
                combos = list(itertools.product(*options))
                if not combos:
                    continue
                pts = pd.concat([row] * len(combos), ignore_index=True)
                for j, f in enumerate(subset):
                    pts[f] = pd.Series([c[j] for c in combos], dtype=row[f].dtype)
                if (model.predict(pts) == 1).any():
                    fewest[i] = size
                    break
            if fewest[i]:
                break
    return fewest


def _best(fn, n=3) -> float:
    best = np.inf
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _csv_bytes(n_labels: int) -> bytes:
    rows = ["feature,value,label"]
    for i in range(n_labels):
        rows.append(f"column_{i % 2000:04d},{i // 2000},label number {i:06d} of a long codebook")
    return ("\n".join(rows) + "\n").encode()


def _json_bytes(n_labels: int) -> bytes:
    book: dict = {}
    for i in range(n_labels):
        book.setdefault(f"column_{i % 2000:04d}", {})[i // 2000] = f"label number {i:06d} of a long codebook"
    return DataDictionary.from_parts(value_labels=book).to_json().encode()


def _within(make, limit: int = 5 * 2**20 - 1024) -> tuple:
    """The largest file ``make(n)`` of at most ``limit`` bytes (n labels, searched by halving)."""
    low, high = 1, 100_000
    while low < high:
        mid = (low + high + 1) // 2
        if len(make(mid)) <= limit:
            low = mid
        else:
            high = mid - 1
    return make(low), low


def read_times() -> list[dict]:
    csv_data, n_csv = _within(_csv_bytes)
    json_data, n_json = _within(_json_bytes)
    out = []
    for form, blob, n, base_name, base in (
            ("CSV", csv_data, n_csv, "csv.reader", lambda b: list(csv.reader(io.StringIO(b.decode())))),
            ("JSON", json_data, n_json, "json.loads", json.loads)):
        t = _best(lambda: read_dictionary(blob, "big"))
        b = _best(lambda: base(blob))
        out.append({"form": form, "MB": round(len(blob) / 2**20, 2), "labels": n, "seconds": round(t, 2),
                    "baseline": base_name, "baseline s": round(b, 3), "ratio": round(t / b, 1)})
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tables", nargs="*", default=list(TABLES), choices=list(TABLES))
    p.add_argument("--people", type=int, default=500)
    p.add_argument("--no-read", action="store_true")
    p.add_argument("--bound", action="store_true", help="also the brute-force bound of the verified share with the "
                                                          "dictionary (every change of at most 3 movable features)")
    args = p.parse_args()
    print(f"load: {os.getloadavg()[0]:.1f} (1-minute average), {os.cpu_count()} cores")
    for name in args.tables:
        if name == "heloc" and not HELOC.exists():
            print(f"heloc: {HELOC} not found, skipped")
            continue
        X, y, d = TABLES[name]()
        print(f"\n## {name}: {len(X):,} rows, {X.shape[1]} features, codes declared in {len(d.special_codes)} columns")
        print(pd.DataFrame(advice(X, y, d, args.people, args.bound)).to_string(index=False))
    if not args.no_read:
        print("\n## reading a 5 MB dictionary")
        print(pd.DataFrame(read_times()).to_string(index=False))
    print(f"\nload at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
