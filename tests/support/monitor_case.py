"""A monitored population for the monitor's tests: a generated credit-card table (renamed columns and other status
codes, so nothing is tuned to the default shape), rules fitted on part of it, and real XGBoost model files for four
versions — the first model, a retrain on a bootstrap resample, a version that degrades one group on purpose (its
people with ``education == DEGRADED`` are labelled defaulters, and education is immutable, so no change can win their
recourse back) — plus the brute-force recomputation the monitor's answers are checked against.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

#: The group the third version degrades.
DEGRADED = "c3"
ID = "client_ref"
CATEGORICAL = ["sex", "education", "marital_status"]
CONSTRAINTS = {"education": "immutable", "sex": "immutable", "marital_status": "immutable", "age": "increase_only"}
#: Groupings the monitor reports on: education and its intersection with sex (the degraded group and its parts).
GROUPS = ["education", ["sex", "education"]]
#: A policy that lets a retrain's churn pass (about a tenth of the advice held) and catches a lost group.
POLICY = {"share_drop": 0.10, "gap_widening": 0.10, "invalidation_rate": 0.40}


@dataclass
class MonitorCase:
    folder: Path
    people: pd.DataFrame
    fit_rows: pd.DataFrame
    rules: str  # rules JSON
    models: dict  # label -> model file path
    people_files: list  # the people as two Parquet files
    reference_file: Path

    @property
    def features(self) -> list:
        return [c for c in self.fit_rows.columns]


def _model_frame(X: pd.DataFrame, levels: dict) -> pd.DataFrame:
    Z = X.copy()
    for c in CATEGORICAL:
        Z[c] = pd.Categorical(Z[c].astype(object), categories=levels[c])
    return Z


def build(folder: Path, n_people: int = 1500, n_fit: int = 2500, seed: int = 11) -> MonitorCase:
    import xgboost as xgb

    from tcrex import TCREx
    from tcrex.datasets import make_credit_card
    from tcrex.intake import load_model

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    df = make_credit_card(n_people + n_fit, months=4, status_codes={-3: "idle", -1: "paid", 0: "revolving"},
                          random_state=seed, status="repay_m{k}", bill="statement_m{k}", paid="payment_m{k}")
    y = df.pop("default")
    levels = {c: sorted(df[c].unique()) for c in CATEGORICAL}

    def train(X, labels, rs):
        return xgb.XGBClassifier(n_estimators=50, max_depth=4, learning_rate=0.3, enable_categorical=True,
                                 tree_method="hist", random_state=rs, n_jobs=1).fit(_model_frame(X, levels), labels)

    rng = np.random.default_rng(seed)
    models = {}
    train(df, y, 0).save_model(str(folder / "v1.json"))
    models["v1"] = folder / "v1.json"
    boot = rng.integers(0, len(df), len(df))
    train(df.iloc[boot], y.iloc[boot], 1).save_model(str(folder / "v2-retrain.json"))
    models["v2"] = folder / "v2-retrain.json"
    degraded = y.copy()
    degraded[(df["education"] == DEGRADED).to_numpy()] = 1
    train(df, degraded, 0).save_model(str(folder / "v3-degraded.json"))
    models["v3"] = folder / "v3-degraded.json"
    fit_rows = df.iloc[:n_fit].reset_index(drop=True)
    people = df.iloc[n_fit:].reset_index(drop=True)
    people.insert(0, ID, [f"P-{i:05d}" for i in range(len(people))])
    first = load_model((folder / "v1.json").read_bytes(), "v1.json", sandbox=False)
    ex = TCREx(rho=0.02, tau=0.9, target=0, constraints=CONSTRAINTS).fit(fit_rows, first)
    rules = ex.to_json()
    (folder / "rules.json").write_text(rules, encoding="utf-8")
    half = len(people) // 2
    files = [folder / "people" / "part-a.parquet", folder / "people" / "part-b.parquet"]
    files[0].parent.mkdir(exist_ok=True)
    people.iloc[:half].to_parquet(files[0], index=False)
    people.iloc[half:].to_parquet(files[1], index=False)
    ref = folder / "fit-rows.parquet"
    fit_rows.to_parquet(ref, index=False)
    return MonitorCase(folder, people, fit_rows, rules, models, files, ref)


def loaded(path) -> object:
    """A version's model as the tests ask it (in this process: the monitor's own load goes through the sandbox)."""
    from tcrex.intake import load_model
    path = Path(path)
    return load_model(path.read_bytes(), path.name, sandbox=False)


def brute_force(ex, people: pd.DataFrame, previous: pd.DataFrame, model, reference) -> pd.DataFrame:
    """Each person's status recomputed from scratch: the point of the advice they held re-scored with the new model
    (one plain ``predict`` per point, the engine's target containment), who needs recourse from the model's own
    output, and fresh recourse from ``counterfactuals`` for whoever needs it and holds no advice that works."""
    from tcrex import conform_dtypes
    from tcrex.vocabulary import is_verified

    names = list(ex.schema_.names)
    X = people[names].reset_index(drop=True)
    y = np.asarray(model.predict(X))
    target = 0
    need = y != target
    prev_need = previous["needs_recourse"].to_numpy(dtype=bool)
    prev_ver = previous["verified"].to_numpy(dtype=bool)
    holds = np.zeros(len(X), dtype=bool)
    for i in np.flatnonzero(prev_ver):  # one person at a time: nothing shared with the monitor's batching
        point = conform_dtypes(previous.loc[[i], names].reset_index(drop=True), X)
        holds[i] = np.asarray(model.predict(point))[0] == target
    kept = prev_ver & need & holds
    ver = np.zeros(len(X), dtype=bool)
    ver[kept] = True
    search = np.flatnonzero(need & ~kept)
    if len(search):
        cf = ex.counterfactuals(X.iloc[search], model=model, reference=reference)
        ver[search] = is_verified(cf)
    status = np.select(
        [kept, prev_ver & need & ~holds, prev_need & ~prev_ver & need & ver, ~prev_need & need, prev_need & ~need,
         prev_need & need],
        ["kept", "invalidated", "gained", "newly_needing", "no_longer_needing", "still_none"], default="not_needing")
    return pd.DataFrame({"status": status, "needs_recourse": need, "verified": ver, "advice_holds": holds,
                         "previous_verified": prev_ver})


#: The group the dashboard's monitored loans degrade on purpose, and the monitor's name there.
LOANS_DEGRADED = ("employment", "Self-employed")
LOANS_MONITOR = "loans releases"


def bundled_loans_monitor(store, folder: Path, rows: int = 1200):
    """A monitor of the bundled loans sample as the dashboard shows it (each person a row of the data, id ``row``):
    v1 the bundled model, v2 the bundled model retrained on a bootstrap resample, v3 a model that rejects every
    self-employed applicant (trained on labels set so), which raises alerts for that group. Returns the Monitor."""
    import xgboost as xgb

    from tcrex import TCREx, datasets
    from tcrex.monitor import Monitor

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    frame = datasets.load_bundled_loans()
    y = frame.pop(datasets.LOANS_TARGET)
    levels = datasets.LOANS_CATEGORIES
    Z = frame.copy()
    for c, values in levels.items():
        Z[c] = pd.Categorical(Z[c].astype(object), categories=values)
    column, value = LOANS_DEGRADED
    labels = y.copy()
    labels[(frame[column] == value).to_numpy()] = 0
    xgb.XGBClassifier(n_estimators=50, max_leaves=8, enable_categorical=True, tree_method="hist",
                      random_state=0).fit(Z, labels).save_model(str(folder / "loans-v3-degraded.json"))
    model_a = datasets.load_bundled_model()
    ex = TCREx(rho=0.02, tau=0.9, target=1, constraints={column: "immutable", "age": "increase_only"}).fit(
        frame, model_a)
    people = frame.head(rows).copy()
    people.insert(0, "row", people.index.to_numpy())
    mon = Monitor(store)
    mon.init(LOANS_MONITOR, rules=ex, people=people, id_column="row",
             model=datasets.SAMPLE_DATA_DIR / datasets.LOANS_MODEL, version="v1", groups=[column],
             class_names={0: "rejected", 1: "approved"}, n_boot=300, registered=1_780_000_000.0)
    mon.run(LOANS_MONITOR, model=datasets.SAMPLE_DATA_DIR / datasets.LOANS_MODEL_B, version="v2",
            registered=1_782_600_000.0)
    mon.run(LOANS_MONITOR, model=folder / "loans-v3-degraded.json", version="v3", registered=1_785_200_000.0)
    return mon
