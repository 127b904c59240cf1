"""Tables with codes for the data dictionary's tests: the generated credit-card table and a table shaped
differently (other names, codes 97/98/99 above the number line and 0/-1 statuses, more features), each with its
dictionary and an XGBoost model trained here."""
from __future__ import annotations

import numpy as np
import pandas as pd

CARD_CATEGORIES = ("sex", "education", "marital_status")


def card_case(n: int = 1500, seed: int = 0):
    """(X, model, dictionary) of :func:`tcrex.datasets.make_credit_card` with its codebook, titles and codes."""
    import xgboost as xgb

    from tcrex.datasets import CREDIT_CARD_STATUS_CODES, credit_card_codebook, credit_card_titles, make_credit_card
    from tcrex.dictionary import DataDictionary

    X = make_credit_card(n, random_state=seed)
    y = X.pop("default").to_numpy()
    X = X.astype({c: "category" for c in CARD_CATEGORIES})
    model = xgb.XGBClassifier(n_estimators=40, max_depth=4, enable_categorical=True, tree_method="hist",
                              random_state=0).fit(X, y)
    codes = {c: sorted(CREDIT_CARD_STATUS_CODES) for c in X.columns if c.startswith("status_")}
    d = DataDictionary.from_parts(credit_card_codebook(), codes, credit_card_titles())
    return X, model, d


#: The second table's codes: per survey-like column, values that are answers, not amounts.
SURVEY_CODES = {97: "not applicable", 98: "don't know", 99: "refused"}
STANDING_CODES = {-1: "account closed", 0: "never used"}


def survey_case(n: int = 1500, seed: int = 1):
    """(X, model, dictionary) of a table unlike the credit-card one: ``hours_worked`` and ``commute_minutes`` hold
    97/98/99 codes above their numbers, ``standing_w1`` … ``standing_w4`` (weekly account standing) hold -1/0
    codes beside 1…5 levels, ``region`` and ``civil_state`` are coded categories, ``savings`` and ``spend`` are
    amounts the person can move."""
    import xgboost as xgb

    from tcrex.dictionary import DataDictionary, FeatureEntry

    rng = np.random.default_rng(seed)
    hours = rng.integers(5, 60, n).astype(np.int64)
    hours = np.where(rng.random(n) < 0.12, rng.choice(list(SURVEY_CODES), n), hours)
    commute = np.where(rng.random(n) < 0.1, rng.choice(list(SURVEY_CODES), n), rng.integers(0, 80, n))
    frame = pd.DataFrame({
        "savings": np.round(rng.gamma(2.0, 4000, n), -1).astype(np.int64),
        "spend": np.round(rng.gamma(2.0, 900, n), -1).astype(np.int64),
        "hours_worked": hours.astype(np.int64),
        "commute_minutes": commute.astype(np.int64),
        "region": rng.choice(np.array(["r1", "r2", "r3", "r4"], dtype=object), n),
        "civil_state": rng.choice(np.array(["k1", "k2", "k3"], dtype=object), n, p=[0.5, 0.4, 0.1]),
        "years_of_age": rng.integers(18, 80, n).astype(np.int64),
    })
    habit = rng.normal(0, 1, n)
    for w in range(1, 5):
        level = np.clip(np.round(rng.gamma(1.2 + np.maximum(habit, 0), 1.0, n)), 1, 5).astype(np.int64)
        coded = rng.random(n) < 0.45
        frame[f"standing_w{w}"] = np.where(coded, rng.choice(list(STANDING_CODES), n), level)
    work = frame.hours_worked.where(frame.hours_worked < 97, 30)
    score = (0.00012 * frame.savings - 0.0006 * frame.spend + 0.02 * work
             - 0.5 * frame.standing_w1.clip(lower=0) + 0.6 * (frame.standing_w1 == -1) + 0.3 * habit
             + rng.normal(0, 0.5, n))
    y = (score > np.median(score)).astype(int).to_numpy()
    X = frame.astype({"region": "category", "civil_state": "category"})
    model = xgb.XGBClassifier(n_estimators=40, max_depth=4, enable_categorical=True, tree_method="hist",
                              random_state=0).fit(X, y)
    entries = [FeatureEntry("savings", title="savings balance", unit="EUR"),
               FeatureEntry("spend", title="monthly spending", unit="EUR"),
               FeatureEntry("hours_worked", title="hours worked per week", codes=tuple(SURVEY_CODES.items())),
               FeatureEntry("commute_minutes", title="commute time", codes=tuple(SURVEY_CODES.items())),
               FeatureEntry("region", title="region of residence", kind="categorical",
                            labels=(("r1", "north"), ("r2", "south"), ("r3", "east"), ("r4", "west"))),
               FeatureEntry("civil_state", title="civil state", kind="categorical",
                            labels=(("k1", "married"), ("k2", "never married"), ("k3", "widowed"))),
               FeatureEntry("years_of_age", title="age in years")]
    entries += [FeatureEntry(f"standing_w{w}", title=f"account standing {w} week{'s' if w > 1 else ''} ago",
                             codes=tuple(STANDING_CODES.items()),
                             labels=tuple((k, f"level {k}") for k in range(1, 6))) for w in range(1, 5)]
    return X, model, DataDictionary(tuple(entries))


def code_moves(X: pd.DataFrame, points: pd.DataFrame, dictionary) -> tuple[int, int]:
    """(verified points that move a feature into or out of one of its declared codes, verified points)."""
    ok = points["recourse"].eq("verified").fillna(False).to_numpy(bool)
    moved = np.zeros(len(X), dtype=bool)
    for name, codes in dictionary.special_codes.items():
        before = X[name].isin(codes).to_numpy()
        after_values = pd.to_numeric(points[name], errors="coerce")
        after = after_values.isin(codes).to_numpy()
        changed = after_values.to_numpy(np.float64) != X[name].to_numpy(np.float64)
        moved |= ok & changed & (before != after)
    return int(moved.sum()), int(ok.sum())
