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
