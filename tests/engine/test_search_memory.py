"""The search beyond the rules remembers, across its passes (short advice first, then up to ``max_changes``), each
row's nearest allowed cases and the subset sizes it already found failing. Remembering must change no
answer: the reference here is the same search with nothing remembered (every pass finds the nearest cases again
and scores every subset again), on problems with ties (integer features), coded categories, special codes,
constraints and rows far enough from their cases to give features back one at a time."""
import numpy as np
import pandas as pd
import pytest
from xgboost import XGBClassifier

import tcrex._engine.recourse._search as recourse
from tcrex import TCREx
from tcrex.datasets import make_credit_bureau, make_loans

from tests.support.search_cases import SEARCH_CASES


class Counting:
    """The model, counting the points it is asked about."""

    def __init__(self, model):
        self.model, self.points = model, 0

    def predict(self, X):
        self.points += len(X)
        return self.model.predict(X)


def _frame(df):
    return df.astype({c: "category" for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])})


def _bureau_case(constraints=None, **params):
    def case():
        df = make_credit_bureau(2500, random_state=3)
        y = (df.pop("RiskPerformance") == "Good").astype(int)
        X = _frame(df)
        model = XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True, tree_method="hist", n_jobs=1,
                              random_state=0).fit(X.iloc[:1000], y.iloc[:1000])
        ex = TCREx(target=1, constraints=constraints, **params).fit(X.iloc[:1000], model)
        return ex, X.iloc[1000:], model, None
    return case


def _loans_ties_case(max_changes):
    """Loans with the continuous features rounded coarsely: many reference rows at the same distance."""
    def case():
        df = make_loans(2500, random_state=8)
        X = _frame(df.drop(columns="approved"))
        X["income"] = (X["income"] // 20_000) * 20_000.0
        X["loan_amount"] = (X["loan_amount"] // 10_000) * 10_000.0
        X["debt_to_income"] = X["debt_to_income"].round(1)
        model = XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True, tree_method="hist", n_jobs=1,
                              random_state=0).fit(X.iloc[:1000], df["approved"].iloc[:1000])
        ex = TCREx(target=1, max_changes=max_changes).fit(X.iloc[:1000], model)
        return ex, X.iloc[1000:], model, None
    return case


def _card_dictionary_case():
    """The credit-card table with its dictionary: history immutable and codes honoured, so no real case is
    allowed to most rows and the projected cases serve them (remembered across the passes too)."""
    def case():
        from tests.support.dictionary_case import card_case
        X, model, d = card_case(n=1500)
        ex = TCREx(dictionary=d, target=0).fit(X.iloc[:1000], model)
        rows = X.iloc[1000:]
        return ex, rows[model.predict(rows) == 1], model, None
    return case


CASES = [c for c in SEARCH_CASES if c[0].startswith("loans")] + [
    ("card_dictionary", _card_dictionary_case()),
    ("bureau", _bureau_case()),
    ("bureau_codes_constrained", _bureau_case(
        {"ExternalRiskEstimate": "increase_only", "Age_band": "immutable",
         "MSinceMostRecentDelq": {"transitions": {-7: ["value"]}}},
        special_codes={c: [-9, -8, -7] for c in ("MSinceOldestTradeOpen", "MSinceMostRecentDelq",
                                                 "MSinceMostRecentInqexcl7days", "NetFractionRevolvingBurden",
                                                 "NetFractionInstallBurden", "PercentTradesNeverDelq")})),
    ("loans_ties", _loans_ties_case(3)),
    ("loans_ties_4", _loans_ties_case(4)),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_remembering_across_passes_changes_no_answer(case, monkeypatch):
    ex, X, model, class_names = case()
    remembering = Counting(model)
    got = ex.counterfactuals(X, model=remembering, class_names=class_names)
    with monkeypatch.context() as plain:
        plain.setattr(recourse, "_remembered", lambda memory, key, rows, compute: compute(np.arange(len(rows))))
        plain.setattr(recourse, "_remember", lambda memory, key, rows, values: None)
        projected = recourse._projected
        plain.setattr(recourse, "_projected", lambda *a, ids=None, memory=None: projected(*a))  # nothing kept
        forgetting = Counting(model)
        expected = ex.counterfactuals(X, model=forgetting, class_names=class_names)
    pd.testing.assert_frame_equal(got, expected)
    assert got.attrs == expected.attrs
    assert remembering.points <= forgetting.points


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_long_pass_skips_the_subsets_the_short_pass_scored():
    """On the loans sample some rows need 3 changes: the long pass scores fewer points than it would again."""
    ex, X, model, _ = _loans_ties_case(3)()
    remembering = Counting(model)
    ex.counterfactuals(X, model=remembering)
    forgetting = Counting(model)
    with pytest.MonkeyPatch.context() as plain:
        plain.setattr(recourse, "_remembered", lambda memory, key, rows, compute: compute(np.arange(len(rows))))
        plain.setattr(recourse, "_remember", lambda memory, key, rows, values: None)
        ex.counterfactuals(X, model=forgetting)
    assert remembering.points < forgetting.points


def test_remembered_values_are_kept_per_row():
    memory, calls = {}, []

    def compute(w):
        calls.append(len(w))
        return rows[w] * 10

    rows = np.array([2, 5, 9])
    assert recourse._remembered(memory, "k", rows, compute).tolist() == [20, 50, 90]
    rows = np.array([1, 5, 9, 12])
    assert recourse._remembered(memory, "k", rows, compute).tolist() == [10, 50, 90, 120]
    assert calls == [3, 2]  # only the rows not kept before
    recourse._remember(memory, "k", np.array([5]), np.array([7]))
    assert recourse._remembered(memory, "k", np.array([1, 2, 5, 12]), compute).tolist() == [10, 20, 7, 120]
    assert calls == [3, 2]
    assert recourse._remembered({}, "k", np.zeros(0, dtype=np.int64), compute).tolist() == []
