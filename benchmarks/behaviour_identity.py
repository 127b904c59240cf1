"""Behaviour identity: SHA-256 digests of what the engine says, to prove that a refactoring changed no output.

On the bundled loans sample and model, on the generated credit-bureau data (special codes, a codebook, an XGBoost
model reading native pandas categoricals), on wine (three classes, untargeted) and on diabetes (regression), fits
TCREx with a few parameter sets and digests, each under its own name:

* the JSON export (``to_json``) and the rules / metarules frames and the summary text;
* ``explain`` and ``counterfactuals`` (verified: statuses, rule ids, points, sources, sentences) of a few hundred
  rows, ``explain_one(...).to_dict()`` of a few rows (with their metacounterfactuals, checked on the model) and
  ``effectiveness().to_dict()``;
* ``tcrex.audit.audit(...).to_dict()``, ``tcrex.compare.compare_models(...).to_dict()`` and
  ``rule_stability(...)``'s frames;
* the CLI: ``tcrex fit`` then ``tcrex explain --verified`` on the loans CSV with the bundled model file;
* the paper protocol's fingerprints (``benchmarks/paper_protocol.py``: rules digest and outcome digest);
* the dashboard's bundled model on the loans sample as its state layer loads it (outputs, accuracy, performance,
  every row's point checked on the model).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/behaviour_identity.py --out /tmp/identity.json
    PYTHONPATH=$PWD .venv/bin/python benchmarks/behaviour_identity.py --check /tmp/identity.json   # exit 1 on a diff

A case the checked file has no digest of (added after it was written) is named and not compared.

The ``tcrex`` imported is the one on ``sys.path`` first (``PYTHONPATH``), so the same script digests two checkouts.
Deterministic: every seed is fixed and nothing timed is digested.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import tcrex
from tcrex import TCREx
from tcrex.compare import rule_stability
from tcrex.audit import audit
from tcrex.compare import compare_models
from tcrex.datasets import (CREDIT_BUREAU_CODEBOOK, LOANS_MODEL, LOANS_MODEL_B, LOANS_VALUE_LABELS,
                            SAMPLE_DATA_DIR, load_bundled_loans, load_bundled_model, load_sample,
                            make_credit_bureau)

N_ROWS = 300      # rows explained / verified per case
N_ONE = 6         # rows explained one at a time (with metacounterfactuals)


def _text(value) -> str:
    """A canonical text of plain data, frames and arrays (floats at full precision)."""
    if isinstance(value, pd.DataFrame):
        frame = value.copy()
        for c in frame.columns:  # tuples, sets, lists and categories as text, in a fixed form
            if frame[c].dtype == object or isinstance(frame[c].dtype, pd.CategoricalDtype):
                frame[c] = frame[c].map(lambda v: json.dumps(v, sort_keys=True, default=repr)
                                        if isinstance(v, (list, tuple, dict)) else repr(v))
        head = json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()])
        return head + "\n" + frame.to_csv(float_format="%.17g") + json.dumps(value.attrs, sort_keys=True,
                                                                              default=repr)
    if isinstance(value, pd.Series):
        return _text(value.to_frame())
    if isinstance(value, np.ndarray):
        return _text(pd.DataFrame({"v": value}))
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=_plain)


def _plain(v):
    if isinstance(v, (pd.DataFrame, pd.Series, np.ndarray)):
        return _text(v)
    if isinstance(v, np.generic):
        return v.item()
    return repr(v)


def _sha(value) -> str:
    return hashlib.sha256(_text(value).encode()).hexdigest()


class Digests:
    """name -> digest; a failure is digested too (its type and message), so a new error is a difference."""

    def __init__(self, timings=False):
        self.items: dict[str, str] = {}
        self.timings = timings

    def add(self, name: str, make) -> None:
        t = time.process_time()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = make()
            self.items[name] = _sha(value)
        except Exception as exc:  # noqa: BLE001 - a raised error is behaviour to compare, not a crash
            self.items[name] = "error: " + _sha(f"{type(exc).__name__}: {exc}")
        if self.timings:
            print(f"  {name}: {time.process_time() - t:.2f} s CPU", file=sys.stderr)


def _explainer_outputs(d: Digests, key: str, ex, X, model, *, one_rows=N_ONE, target=None) -> None:
    rows = X.iloc[:N_ROWS]
    d.add(f"{key}/to_json", ex.to_json)
    d.add(f"{key}/rules_frame", ex.rules_frame)
    d.add(f"{key}/metarules_frame", ex.metarules_frame)
    d.add(f"{key}/summary_text", ex.summary_text)
    d.add(f"{key}/explain", lambda: ex.explain(rows, model=model))
    d.add(f"{key}/counterfactuals", lambda: ex.counterfactuals(rows, model=model, target=target))
    d.add(f"{key}/counterfactuals_unverified", lambda: ex.counterfactuals(rows, model=model, verify=False,
                                                                          target=target))
    d.add(f"{key}/effectiveness", lambda: ex.effectiveness(rows, model=model).to_dict())
    for i in range(one_rows):
        d.add(f"{key}/explain_one/{i}", lambda i=i: ex.explain_one(X.iloc[i * 7], model=model).to_dict())
    d.add(f"{key}/from_json/explain", lambda: TCREx.from_json(ex.to_json()).explain(rows, model=model))
    d.add(f"{key}/from_json/counterfactuals", lambda: TCREx.from_json(ex.to_json()).counterfactuals(
        rows, model=model, reference=ex.fit_rows(), target=target))


def loans(d: Digests) -> None:
    frame = load_bundled_loans()
    X = frame.drop(columns=["approved"])
    model = load_bundled_model()
    model_b = load_bundled_model(SAMPLE_DATA_DIR / LOANS_MODEL_B)
    params = {
        "default": dict(target=1),
        "labelled": dict(target=1, rho=0.03, tau=0.85, value_labels=LOANS_VALUE_LABELS,
                         class_names={1: "approved", 0: "rejected"},
                         constraints={"age": "increase_only", "home_ownership": "immutable"}),
        "forest": dict(target=1, rho=0.04, tau=0.9, n_trees=3, max_changes=2, grower="exact"),
    }
    for name, p in params.items():
        ex = TCREx(**p).fit(X, model)
        key = f"loans/{name}"
        _explainer_outputs(d, key, ex, X, model)
        d.add(f"{key}/audit", lambda ex=ex: audit(ex, X.iloc[:N_ROWS], "home_ownership", n_boot=50).to_dict())
        if name != "forest":
            d.add(f"{key}/compare_models", lambda ex=ex: compare_models(
                ex, X.iloc[:N_ROWS], model_b, groups="employment", n_boot=50).to_dict())
    ex = TCREx(target=1, rho=0.04).fit(X, model)
    d.add("loans/updated/to_json", lambda: ex.update(tau=0.8).to_json())
    d.add("loans/audit_rules_only", lambda: audit(ex, X.iloc[:N_ROWS], "employment", n_boot=50,
                                                  y_pred=model.predict(X.iloc[:N_ROWS])).to_dict())


def credit_bureau(d: Digests) -> None:
    import xgboost as xgb  # noqa: PLC0415 - only this case trains a model
    df = make_credit_bureau(1500, random_state=1)
    y = (df.pop("RiskPerformance") == "Good").astype(int).to_numpy()
    X = df
    for c in X.columns:
        if not pd.api.types.is_numeric_dtype(X[c]):
            X[c] = X[c].astype("category")
    model = xgb.XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True, tree_method="hist",
                              random_state=0, n_jobs=1).fit(X, y)
    pick = np.random.default_rng(2).integers(0, len(X), len(X))
    model_b = xgb.XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True, tree_method="hist",
                                random_state=1, n_jobs=1).fit(X.iloc[pick], y[pick])
    labels = {f: {v: t for v, t in book.items() if v in set(X[f])}  # the codes this sample holds
              for f, book in CREDIT_BUREAU_CODEBOOK.items() if f in X}
    ex = TCREx(target=1, rho=0.03, tau=0.85, value_labels=labels,
               constraints={"MSinceMostRecentDelq": {"kind": "increase_only", "transitions": {-9: ["value"]}},
                            "Age_band": "immutable"}).fit(X, model)
    _explainer_outputs(d, "credit", ex, X, model)
    d.add("credit/audit", lambda: audit(ex, X.iloc[:N_ROWS], "Foreign_worker", n_boot=50).to_dict())
    d.add("credit/compare_models", lambda: compare_models(ex, X.iloc[:N_ROWS], model_b, groups="Age_band",
                                                          n_boot=50).to_dict())

    def fit_model(Xt, yt, seed):
        return xgb.XGBClassifier(n_estimators=10, max_depth=3, enable_categorical=True, tree_method="hist",
                                 random_state=seed, n_jobs=1).fit(Xt, yt)

    def stability():
        st = rule_stability(ex, X.iloc[:200], y[:200], fit_model, n_models=3)
        return {k: v for k, v in vars(st).items() if k != "seconds"}  # timings are not behaviour
    d.add("credit/rule_stability", stability)
    # an integer-typed feature a point may move to a fraction: the dtype rules of every model call meet here
    Xi = X.copy()
    Xi["Credit_amount"] = Xi["Credit_amount"].round().astype("int64")
    model_i = xgb.XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True, tree_method="hist",
                                random_state=0, n_jobs=1).fit(Xi, y)
    ex_i = TCREx(target=1, rho=0.05, tau=0.8).fit(Xi, model_i)
    _explainer_outputs(d, "credit/int", ex_i, Xi, model_i, one_rows=3)


def wine(d: Digests) -> None:
    from sklearn.ensemble import RandomForestClassifier  # noqa: PLC0415
    X, y = load_sample("wine")
    model = RandomForestClassifier(n_estimators=20, random_state=0, n_jobs=1).fit(X, y)
    for name, p in {"untargeted": dict(rho=0.05), "targeted": dict(rho=0.05, target=2, tau=0.8),
                    "ordered": dict(rho=0.05, target={"at_least": 1})}.items():
        ex = TCREx(**p).fit(X, model)
        _explainer_outputs(d, f"wine/{name}", ex, X, model, one_rows=3)


def diabetes(d: Digests) -> None:
    from sklearn.ensemble import RandomForestRegressor  # noqa: PLC0415
    X, y = load_sample("diabetes")
    model = RandomForestRegressor(n_estimators=20, random_state=0, n_jobs=1).fit(X, y)
    for name, p in {"default": dict(rho=0.05), "threshold": dict(rho=0.05, target=150.0),
                    "interval": dict(rho=0.05, target=(50.0, 120.0))}.items():
        ex = TCREx(**p).fit(X, model)
        _explainer_outputs(d, f"diabetes/{name}", ex, X, model, one_rows=3)
    ex = TCREx(rho=0.05, target=(150.0, None)).fit(X, model)
    d.add("diabetes/audit", lambda: audit(ex, X, (X["sex"] > X["sex"].mean()).map({True: "a", False: "b"}),
                                          n_boot=50).to_dict())


def _paths_out(text: str, tmp: Path) -> str:
    """Text with the checkout's and the scratch folder's paths replaced, so two checkouts digest alike."""
    for path, name in ((SAMPLE_DATA_DIR.resolve(), "<sample_data>"), (SAMPLE_DATA_DIR, "<sample_data>"),
                       (tmp.resolve(), "<tmp>"), (tmp, "<tmp>")):
        text = text.replace(json.dumps(str(path))[1:-1], name).replace(str(path), name)
    return text


def cli(d: Digests) -> None:
    from click.testing import CliRunner  # noqa: PLC0415
    from tcrex.cli import main  # noqa: PLC0415
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        frame = load_bundled_loans().drop(columns=["approved"]).iloc[:N_ROWS]
        frame.to_csv(tmp / "people.csv", index=False)
        model = str(SAMPLE_DATA_DIR / LOANS_MODEL)
        runner = CliRunner()
        res = runner.invoke(main, ["fit", "--data", str(SAMPLE_DATA_DIR / "loans.csv"), "--model", model,
                                   "--drop-column", "approved", "--target", "1", "--rho", "0.03",
                                   "--out", str(tmp / "rules.json")])
        d.add("cli/fit", lambda: [res.exit_code, (tmp / "rules.json").read_text() if res.exit_code == 0 else
                                  res.output])
        res = runner.invoke(main, ["explain", "--rules", str(tmp / "rules.json"), "--data", str(tmp / "people.csv"),
                                   "--model", model, "--verified", "--out", str(tmp / "out")])
        d.add("cli/explain_verified", lambda: [res.exit_code, pd.read_parquet(tmp / "out" / "people.parquet")
                                               if res.exit_code == 0 else res.output])
        res = runner.invoke(main, ["audit", "--rules", str(tmp / "rules.json"), "--data", str(tmp / "people.csv"),
                                   "--model", model, "--group-column", "home_ownership", "--n-boot", "40",
                                   "--out", str(tmp / "audit.json")])
        # the audit records the model's path: the checkout's sample_data, which differs between worktrees
        d.add("cli/audit", lambda: [res.exit_code, _paths_out((tmp / "audit.json").read_text(), tmp)
                                    if res.exit_code == 0 else _paths_out(res.output, tmp)])


def paper(d: Digests) -> None:
    """The paper protocol's own fingerprints (rules digest, outcome digest) on the first fold of two shared
    datasets (skipped when ../shared/datasets is absent)."""
    sys.path.insert(1, str(Path(__file__).resolve().parent))  # after the tcrex already imported
    import paper_protocol  # noqa: PLC0415
    common = paper_protocol.common
    for name in ("pima", "credit"):
        path = common.SHARED_DATA / f"{name}.csv"
        if not path.exists():
            d.items[f"paper/{name}"] = "skipped: no " + str(path)
            continue
        ds = common.load(path)
        _, tr, te = next(common.folds(len(ds.X)))
        model = common.train_model(ds.X.iloc[tr], ds.y[tr])
        ytr, yte = model.predict(ds.X.iloc[tr]), model.predict(ds.X.iloc[te])
        for tau in (0.9, 0.99):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row, _ = paper_protocol.run_fold(ds, tr, te, model, ytr, yte, tau, "auto", metrics=False)
            d.items[f"paper/{name}/{tau}"] = _sha({k: row.get(k) for k in (
                "status", "rules_digest", "outcome_digest", "n_rules", "n_cells", "n_metarules")})


def dashboard(d: Digests) -> None:
    """The dashboard's bundled model on the loans sample as its state layer loads it: the outputs every page reads,
    the accuracy and performance the Overview shows, and the model check of every row's recommended point."""
    from tcrex.ui.state import sources  # noqa: PLC0415 - the dashboard's layer (Streamlit) for this case only

    frame, label, categorical = sources.load_sample_frame("loans")
    data = sources.prepare_frame(frame, sources.DataSpec("sample", "loans", label=label, categorical=categorical),
                                 categorical)
    model = sources.bundled_model(data)
    X = data.frame[data.features]
    known = getattr(model, "known_outputs", None)  # the outputs loading measured, where the version keeps them
    y = known[2] if known is not None and known[:2] == (data.key, tuple(data.features)) else model.predict(X)
    d.add("dashboard/outputs", lambda: np.asarray(y))
    d.add("dashboard/predict", lambda: np.asarray(model.predict(X)))
    d.add("dashboard/score", lambda: model.score)
    d.add("dashboard/performance", lambda: vars(sources.model_performance(data, model, y, positive=1)))
    ex = TCREx(target=1).fit(X, y_pred=y)
    d.add("dashboard/verified", lambda: ex.counterfactuals(X, y_pred=y, model=model.predict, verify=True))


CASES = {"loans": loans, "credit": credit_bureau, "wine": wine, "diabetes": diabetes, "cli": cli, "paper": paper,
         "dashboard": dashboard}


def collect(cases, timings=False) -> dict:
    d = Digests(timings)
    for name in cases:
        t = time.perf_counter()
        CASES[name](d)
        print(f"{name}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return d.items


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    how = ap.add_mutually_exclusive_group(required=True)
    how.add_argument("--out", help="write the digests to this JSON file")
    how.add_argument("--check", help="compare with the digests in this JSON file; exit 1 naming what differs")
    ap.add_argument("--timings", action="store_true", help="print the CPU time of every digest")
    ap.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    args = ap.parse_args()
    print(f"tcrex from {Path(tcrex.__file__).parent}", file=sys.stderr)
    got = collect(args.cases, args.timings)
    if args.out:
        Path(args.out).write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        print(f"{len(got)} digests written to {args.out}")
        return 0
    want = json.loads(Path(args.check).read_text())
    wanted = {k: v for k, v in want.items() if k.split("/")[0] in args.cases}
    known_cases = {k.split("/")[0] for k in want}
    for case in [c for c in args.cases if c not in known_cases]:  # a case added after that file was written
        print(f"NOT COMPARED {case}: the file has no digest of this case (written before it was added)")
        got = {k: v for k, v in got.items() if k.split("/")[0] != case}
    differ = sorted(k for k in set(got) | set(wanted) if got.get(k) != wanted.get(k))
    for k in differ:
        print(f"DIFFERS {k}: {wanted.get(k, '(absent)')[:24]} -> {got.get(k, '(absent)')[:24]}")
    print(f"{len(got) - len([k for k in differ if k in got])} of {len(got)} digests identical; "
          f"{len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
