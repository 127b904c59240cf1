"""A credit-bureau-like table for layout tests: 23 numeric features named like the FICO HELOC columns, a label
that is 1 for "Bad", and a model with enough structure to give many rules and hundreds of metarules (8 rules and
284 metarules at rho=0.01, tau=0.8 with :func:`credit_model`). Deterministic; nothing is read from disk."""
from __future__ import annotations

import numpy as np
import pandas as pd

FEATURES = ["ExternalRiskEstimate", "MSinceOldestTradeOpen", "MSinceMostRecentTradeOpen", "AverageMInFile",
            "NumSatisfactoryTrades", "NumTrades60Ever2DerogPubRec", "NumTrades90Ever2DerogPubRec",
            "PercentTradesNeverDelq", "MSinceMostRecentDelq", "MaxDelq2PublicRecLast12M", "MaxDelqEver",
            "NumTotalTrades", "NumTradesOpeninLast12M", "PercentInstallTrades", "MSinceMostRecentInqexcl7days",
            "NumInqLast6M", "NumInqLast6Mexcl7days", "NetFractionRevolvingBurden", "NetFractionInstallBurden",
            "NumRevolvingTradesWBalance", "NumInstallTradesWBalance", "NumBank2NatlTradesWHighUtilization",
            "PercentTradesWBalance"]


def credit_like(n: int = 6000, seed: int = 0) -> pd.DataFrame:
    """``n`` rows of the 23 features (integers 0-99) and ``target`` (1 = Bad, about half the rows)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f: rng.integers(0, 100, n) for f in FEATURES})
    w = rng.normal(0, 1, len(FEATURES))
    z = (((X.to_numpy() - 50) / 29) @ w + 1.5 * np.sin(X.ExternalRiskEstimate / 9) * (X.PercentTradesNeverDelq > 40)
         + rng.normal(0, 0.5, n))
    X["target"] = (z < 0).astype(int)
    return X


def credit_model(frame: pd.DataFrame):
    """A real XGBoost classifier on the table (200 trees of depth 6: detailed enough for many metarules)."""
    import xgboost

    X = frame.drop(columns="target")
    return xgboost.XGBClassifier(n_estimators=200, max_depth=6, random_state=0, n_jobs=1).fit(X, frame["target"])


#: A German-credit-like table: categorical codes as strings (A11 …), a few integers, and ``sex`` kept apart from the
#: model (an audit-only column).
GERMAN_CATEGORIES = {
    "Checking_account_status": ["A11", "A12", "A13", "A14"],
    "Credit_history": ["A30", "A31", "A32", "A33", "A34"],
    "Purpose": ["A40", "A41", "A42", "A43", "A46", "A49"],
    "Savings_account": ["A61", "A62", "A63", "A64", "A65"],
    "Employment_since": ["A71", "A72", "A73", "A74", "A75"],
    "Housing": ["A151", "A152", "A153"],
}


def german_like(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """``n`` rows of six categorical features (pandas ``category``), ``Duration``, ``Credit_amount``, ``Age``,
    ``Installment_rate``, an audit-only ``sex`` and ``target`` (1 = Good, about 60 % of rows). Deterministic."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["female", "male"], n, p=[0.35, 0.65])
    frame = pd.DataFrame({c: rng.choice(levels, n) for c, levels in GERMAN_CATEGORIES.items()})
    frame["Duration"] = rng.integers(4, 73, n)
    frame["Credit_amount"] = np.round(rng.lognormal(7.8, 0.7, n)).astype(int)
    frame["Age"] = np.clip(np.round(rng.normal(36, 11, n) - 3 * (sex == "female")), 19, 75).astype(int)
    frame["Installment_rate"] = rng.integers(1, 5, n)
    effect = {"Checking_account_status": {"A11": -1.2, "A12": -0.5, "A13": 0.4, "A14": 1.1},
              "Credit_history": {"A30": -1.0, "A31": -0.7, "A32": 0.0, "A33": 0.2, "A34": 0.7},
              "Savings_account": {"A61": -0.5, "A62": -0.2, "A63": 0.2, "A64": 0.6, "A65": 0.3},
              "Employment_since": {"A71": -0.4, "A72": -0.3, "A73": 0.0, "A74": 0.3, "A75": 0.4}}
    z = sum(frame[c].map(m).to_numpy(dtype=float) for c, m in effect.items())
    z = z + 1.9 - frame["Duration"] / 30 - frame["Credit_amount"] / 9000 + (frame["Age"] - 36) / 40 \
        - 0.15 * frame["Installment_rate"] + rng.normal(0, 0.6, n)
    for c, levels in GERMAN_CATEGORIES.items():
        frame[c] = pd.Categorical(frame[c], categories=levels)
    frame["sex"] = sex
    frame["target"] = (z > 0).astype(int)
    return frame


def german_model(frame: pd.DataFrame, seed: int = 0):
    """A real XGBoost classifier with native categoricals on :func:`german_like` (``sex`` and ``target`` left
    out)."""
    import xgboost

    X = frame.drop(columns=["target", "sex"])
    return xgboost.XGBClassifier(n_estimators=60, max_depth=4, enable_categorical=True, tree_method="hist",
                                 random_state=seed, n_jobs=1).fit(X, frame["target"])
