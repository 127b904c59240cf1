"""Problems the verified search is checked on (tests/engine/test_verified_batch.py, test_search_memory.py): random
problems of every task and model kind, the mixed data with constraints that reach every source, and the loans
sample with XGBoost (with and without constraints). Each case is ``() -> (explainer, rows, model, class names)``."""
import pandas as pd

from tcrex import TCREx
from tcrex.datasets import make_loans

from tests.support.data import diagonal_model, mixed, owner_model
from tests.support.problems import make_problem


def _cases():
    """(explainer, rows, model, class names): random problems of every task and model kind, and the mixed data
    with constraints that reach every source."""
    cases = []
    for seed in (1, 3, 4, 7, 11, 12, 17, 23):
        p = make_problem(seed)
        if p is not None:
            cases.append((f"problem{seed}", lambda p=p: (TCREx(**p.params()).fit(p.X, p.model), p.X, p.model, None)))
    X, _ = mixed(400, seed=2)
    labels = {"job": {"clerk": "office clerk", "driver": "lorry driver", "nurse": "nurse"}, "owner": {"yes": "owner"},
              "age": {30: "thirty"}}
    cases.append(("owner_labelled", lambda: (TCREx(rho=0.03, tau=0.9, target=1, value_labels=labels).fit(
        X, owner_model), X, owner_model, {0: "rejected", 1: "approved"})))
    for name, model, cons, target in [
            ("diagonal", diagonal_model, None, None),
            ("owner", owner_model, None, 1),
            ("owner_constrained", owner_model, {"age": "increase_only",
                                                "job": {"transitions": {"clerk": ["driver"], "nurse": ["teacher"]}}}, 1),
            ("diagonal_constrained", diagonal_model, {"income": "decrease_only", "owner": "immutable"}, None)]:
        cases.append((name, lambda model=model, cons=cons, target=target: (
            TCREx(rho=0.03, tau=0.9, constraints=cons, target=target).fit(X, model), X, model,
            {0: "rejected", 1: "approved"})))
    return cases


CASES = _cases()


def _loans_case(constraints=None, **params):
    from xgboost import XGBClassifier

    def case():
        df = make_loans(3000, random_state=5)
        X = df.drop(columns="approved")
        X = X.astype({c: "category" for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])})
        model = XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True, tree_method="hist", n_jobs=1,
                              random_state=0).fit(X.iloc[:1000], df["approved"].iloc[:1000])
        ex = TCREx(target=1, constraints=constraints, **params).fit(X.iloc[:1000], model)
        return ex, X.iloc[1000:], model, {0: "rejected", 1: "approved"}
    return case


SEARCH_CASES = CASES + [
    ("loans", _loans_case()),
    ("loans_constrained_3trees", _loans_case({"age": "immutable", "income": "increase_only",
                                              "employment": {"transitions": {"Unemployed": ["Salaried"]}}},
                                             n_trees=3, tau=0.8)),
]
