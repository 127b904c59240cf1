"""Two tables for the explanation's first reading (findings, the summary sentence, verified-first figures): the
generated credit-card table with an XGBoost model (degenerate at the default parameters: one rule, one metarule)
and the bundled loans sample with its model (not degenerate). Deterministic; nothing is read from outside the
project."""
from __future__ import annotations

from functools import lru_cache

CREDIT_CATEGORIES = ["sex", "education", "marital_status"]


@lru_cache(maxsize=None)
def credit_card_case(n: int = 3000):
    """``(X, model)``: :func:`tcrex.datasets.make_credit_card` rows (categories as pandas categories) and an XGBoost
    classifier of ``default`` (1 = defaults; the favourable outcome is 0)."""
    import xgboost as xgb  # noqa: PLC0415

    from tcrex.datasets import make_credit_card  # noqa: PLC0415

    X = make_credit_card(n, random_state=0)
    y = X.pop("default").to_numpy()
    X = X.astype({c: "category" for c in CREDIT_CATEGORIES})
    model = xgb.XGBClassifier(n_estimators=50, max_depth=3, enable_categorical=True, tree_method="hist",
                              n_jobs=1, random_state=0).fit(X, y)
    return X, model


@lru_cache(maxsize=None)
def loans_case(rows: int = 1500):
    """``(X, model)``: the bundled loans sample's first ``rows`` rows and the bundled model (favourable: 1)."""
    from tcrex.datasets import load_bundled_loans, load_bundled_model  # noqa: PLC0415

    X = load_bundled_loans().head(rows).drop(columns=["approved"])
    return X, load_bundled_model()
