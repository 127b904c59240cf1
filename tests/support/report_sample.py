"""The report of the bundled loans sample as the dashboard builds it (explainer fitted with the bundled model,
every row explained and verified, an audit by employment, a comparison with the bundled model B and one chosen
person): shared by the report's browser and print tests and ``benchmarks``-style measurements."""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np

from tcrex import TCREx
from tcrex.audit import audit
from tcrex.compare import compare_models
from tcrex.datasets import LOANS_MODEL_B, SAMPLE_DATA_DIR, SAMPLES, load_bundled_loans, load_bundled_model
from tcrex.report import ReportOptions, build_report

N_BOOT = 60


def _report(ex, X, model, model_b, groups, include_person: bool, title: str, data_description: str,
            model_description: str, audit_title: str) -> str:
    """The report of ``ex`` on ``X`` as the dashboard builds it: every row explained and verified on ``model``,
    the audit by ``groups``, the comparison with ``model_b`` and, with ``include_person``, the first row with a
    rule as the chosen person."""
    explanations = ex.explain(X, model=model)
    effectiveness = ex.effectiveness(X, model=model)
    chosen = {}
    if include_person:
        row = int(np.flatnonzero(explanations["status"].astype(str).to_numpy() == "ok")[0])
        chosen = {f"Row {row}": (ex.explain_one(X.iloc[[row]], model=model), X.iloc[row])}
    res = audit(ex, X, groups, model=model, n_boot=N_BOOT)
    comparison = compare_models(ex, X, model_b, model_a=model, groups=groups, n_boot=N_BOOT)
    return build_report(ex, ReportOptions(title=title, data_description=data_description, data_fingerprint="a" * 64,
                                          model_description=model_description, model_fingerprint="b" * 64,
                                          params={"tau": ex.tau, "rho": ex.rho}, individuals=chosen,
                                          explanations=explanations, actions=ex.feature_actions(X, model=model),
                                          effectiveness=effectiveness, audit=res, audit_title=audit_title,
                                          comparison=comparison, comparison_title="model A vs model B",
                                          generated_at=datetime(2026, 1, 2, tzinfo=timezone.utc)))


def sample_report(include_person: bool = False, rows: int = 1500) -> str:
    frame = load_bundled_loans().head(rows)
    X = frame.drop(columns=["approved"])
    model = load_bundled_model()
    model_b = load_bundled_model(SAMPLE_DATA_DIR / LOANS_MODEL_B)
    ex = TCREx(target=1, class_names=SAMPLES["loans"].class_names).fit(X, model)
    return _report(ex, X, model, model_b, X["employment"].astype(str), include_person,
                   title="T-CREx report — loans sample", data_description=f"loans.csv: {len(X):,} rows",
                   model_description="XGBoost (bundled)", audit_title="by employment")


def credit_report(rows: int = 1000, n_features: int = 20, include_person: bool = False) -> str:
    """The same report on a credit-bureau-like table of ``rows`` rows and ``n_features`` numeric features
    (:func:`credit_like.credit_like`), an XGBoost model and a second one trained on other rows for the comparison,
    audited by credit history length: a 1,000-row table with 20 features, as a board would see it."""
    import pandas as pd  # noqa: PLC0415

    from tests.support.credit_like import FEATURES, credit_like, credit_model  # noqa: PLC0415

    keep = FEATURES[:n_features] + ["target"]
    frame = credit_like(rows)[keep]
    X = frame.drop(columns="target")
    model = credit_model(frame)
    model_b = credit_model(credit_like(rows, seed=1)[keep])
    ex = TCREx(target=0, class_names={0: "Good", 1: "Bad"}).fit(X, model)
    groups = pd.cut(X["MSinceOldestTradeOpen"], [-1, 33, 66, 100], labels=["short", "medium", "long"]).astype(str)
    return _report(ex, X, model, model_b, groups, include_person, title="T-CREx report — credit table",
                   data_description=f"credit: {len(X):,} rows, {n_features} features", model_description="XGBoost",
                   audit_title="by credit history length")
