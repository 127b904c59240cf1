"""Defects a second independent oracle found; each test failed before its fix."""
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tcrex
from tcrex.audit import audit
from tcrex import TCREx
from tcrex.text import numeric_condition

from tests.support.data import mixed


def _fitted(**kw):
    X, y = mixed()
    return X, y, TCREx(**kw).fit(X, y_pred=y)


def test_update_with_invalid_constraints_leaves_tau_and_params_unchanged():
    X, y, ex = _fitted(tau=0.9)
    before = ex.rules_frame()
    with pytest.raises(tcrex.errors.ParameterError):
        ex.update(tau=0.8, constraints={"no_such_column": "immutable"})
    assert ex.tau == 0.9 and ex.get_params()["tau"] == 0.9
    pd.testing.assert_frame_equal(ex.rules_frame(), before)


def _three_classes(n=900, seed=1):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.uniform(0, 10, n), "b": rng.uniform(0, 10, n)})
    y = np.where(X.a > 6, "hi", np.where(X.b > 5, "mid", "lo"))
    return X, y


def test_explain_one_real_example_is_for_the_requested_target():
    X, y = _three_classes()
    ex = TCREx(rho=0.02, tau=0.9).fit(X, y_pred=y)
    checked = 0
    for i in range(40):
        x = X.iloc[[i]]
        for c in ("hi", "mid", "lo"):
            if y[i] == c:
                continue
            one = ex.explain_one(x, y_pred=y[i:i + 1], target=c)
            many = ex.real_examples(x, y_pred=y[i:i + 1], target=c)
            if one.example_index is None:
                continue
            assert one.example_index == many["example_index"].iloc[0]
            assert y[X.index.get_loc(one.example_index)] == c  # the example's output is in the asked target
            checked += 1
    assert checked > 10


def test_from_json_keeps_target_so_audit_accepts_a_restored_explainer():
    X, y, ex = _fitted(target=1)
    back = TCREx.from_json(ex.to_json())
    assert back.target == 1
    groups = X["owner"]
    res = audit(back, X, groups, y_pred=y, n_boot=20)
    assert res.target == audit(ex, X, groups, y_pred=y, n_boot=20).target


def test_from_json_keeps_a_regression_interval_target():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(0, 10, 500), "b": rng.uniform(0, 10, 500)})
    y = X.a * 2 + X.b
    ex = TCREx(target=(15.0, None)).fit(X, y_pred=y.to_numpy())
    back = TCREx.from_json(ex.to_json())
    assert list(back.target) == [15.0, None]
    assert back.targets_[0].target == ex.targets_[0].target


def test_printed_bound_is_true_of_a_value_equal_to_it():
    t = float(np.float32(0.585))  # 0.58499997854...: sklearn's float32 threshold
    text = numeric_condition(t, np.inf, False)
    printed = float(text.split()[-1])
    assert printed == t  # the printed number is exactly the threshold
    value = printed  # a value equal to the printed bound: "> bound" is false, and the box (t, inf] excludes it
    assert not value > t
    assert numeric_condition(-np.inf, 0.5, False) == "≤ 0.5"  # round numbers keep their short form


def test_printed_condition_holds_for_values_at_the_printed_bounds_after_a_fit():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"s": rng.choice(np.float32([0.55, 0.57, 0.585, 0.6, 0.62, 0.7]), 600).astype(np.float32),
                      "o": rng.uniform(0, 1, 600)})
    y = (X.s > 0.58).astype(int).to_numpy()
    ex = TCREx(rho=0.05).fit(X, y_pred=y)
    for t, sol in enumerate(ex.targets_):
        for r in range(sol.n_rules):
            for feat, cond in ex.rule_conditions(t, r).items():
                if feat != "s":
                    continue
                for bound in ("low", "high"):
                    v = cond.get(bound)
                    if v is None:
                        continue
                    shown = float(cond["text"].replace("]", "").replace(",", " ").split()[-1 if bound == "high" else -2]
                                  .strip("(")) if "in (" in cond["text"] else float(cond["text"].split()[-1])
                    low = cond["low"] if cond["low"] is not None else -np.inf
                    high = cond["high"] if cond["high"] is not None else np.inf
                    inside = low < shown <= high
                    says_inside = bound == "high"  # (low, high]: the high bound is in, the low bound is out
                    assert inside == says_inside, (cond, shown)


def test_refit_starts_from_scratch():
    X, y, ex = _fitted()
    a = ex.percentile_distance(X.iloc[:5], X.iloc[5:10])
    ex.update(tau=0.85)
    X2 = X.copy()
    X2[["age", "income"]] = X2[["age", "income"]] * 1000
    ex.fit(X2, y_pred=y)
    assert ex.n_surrogate_fits_ == 1
    b = ex.percentile_distance(X2.iloc[:5], X2.iloc[5:10])
    fresh = TCREx().fit(X2, y_pred=y).percentile_distance(X2.iloc[:5], X2.iloc[5:10])
    np.testing.assert_allclose(b, fresh)
    np.testing.assert_allclose(a, b)  # percentiles do not change under scaling


def test_explain_one_restores_categorical_dtypes_for_xgboost():
    xgb = pytest.importorskip("xgboost")
    X, y = mixed()
    X = X.astype({"job": "category", "owner": "category"})
    model = xgb.XGBClassifier(n_estimators=10, max_depth=3, enable_categorical=True, tree_method="hist")
    model.fit(X, y)
    ex = TCREx().fit(X, model)
    want = ex.explain_one(X.iloc[[0]]).output
    assert ex.explain_one(X.iloc[0]).output == want
    assert ex.explain_one(X.iloc[0].to_dict()).output == want
    assert ex.explain_one(X.iloc[[0]].astype({"job": object, "owner": object})).output == want


def _rules_are_surrogate_nodes(X, y, **kw):
    """Every exported rule is a node of the same scikit-learn surrogate grown independently (oracle.forest_nodes),
    thresholds kept except float32 midpoints, which may be printed as any number between the same fit values."""
    import json

    from tests.support.oracle import forest_nodes, rule_is_a_node

    with warnings.catch_warnings():  # a target without a valid rule is not what is checked here
        warnings.simplefilter("ignore")
        ex = TCREx(grower="exact", random_state=0, max_cells=10**7, **kw).fit(X, y_pred=y)
    nodes = forest_nodes(X, y, n_trees=kw["n_trees"], rho=kw["rho"], random_state=0)
    rules = [r["conditions"] for t in json.loads(ex.to_json())["targets"] for r in t["rules"]]
    assert rules
    strangers = [c for c in rules if not rule_is_a_node(c, nodes, X)]
    assert not strangers, strangers


def _glucose_bmi(n=600, seed=0):
    """Pima-like columns: integers (glucose, age) and one-decimal floats (bmi), labels with noise."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"glucose": rng.integers(60, 200, n), "bmi": np.round(rng.uniform(18, 50, n), 1),
                      "age": rng.integers(21, 80, n)})
    score = (X.glucose - 120) / 30 + (X.bmi - 30) / 8 + (X.age - 35) / 20 + rng.normal(0, 0.8, n)
    return X, (score > 0).astype(int).to_numpy()


@pytest.mark.parametrize("n_trees, seed", [(1, 1), (1, 3), (10, 0), (10, 1), (10, 2)])
def test_rules_are_the_surrogates_own_nodes(n_trees, seed):
    """A forest's tree splits the values of its bootstrap sample (126 | 128 at 127.0); the readable move of the
    threshold between the fit values 127 and 128 made it 127.5, a box the surrogate does not have. A single tree's
    short thresholds were moved too (3.5 between 0 and 7 became 4). Each case failed before the fix."""
    X, y = _glucose_bmi(seed=seed)
    _rules_are_surrogate_nodes(X, y, n_trees=n_trees, tau=0.8, rho=0.02)


_PIMA = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "pima.csv"  # never copied into the project


@pytest.mark.skipif(not _PIMA.exists(), reason="needs ../shared/datasets/pima.csv")
def test_rules_are_the_surrogates_own_nodes_on_pima():
    """The reported case: Pima, 10 trees, tau=0.8, rho=0.05, grower="exact", fitted on a split of the rows."""
    from sklearn.model_selection import train_test_split

    data = pd.read_csv(_PIMA)
    X, y = data.drop(columns="target"), data["target"].to_numpy()
    X_fit, _, y_fit, _ = train_test_split(X, y, test_size=0.3, random_state=1)
    _rules_are_surrogate_nodes(X_fit, y_fit, n_trees=10, tau=0.8, rho=0.05)


def _rules_are_the_maximal_valid_nodes(X, y, *, n_trees, tau, rho, random_state):
    """Every target's rules are exactly the brute-force maximal-valid nodes of the same forest grown independently
    (tests.support.oracle): none missing, none extra (a rule inside another valid node is not maximal)."""
    import json

    from tests.support.oracle import forest_nodes, maximal_valid_nodes, rule_is_a_node

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex = TCREx(grower="exact", random_state=random_state, max_cells=10**7, n_trees=n_trees, tau=tau,
                   rho=rho).fit(X, y_pred=y)
    nodes = forest_nodes(X, y, n_trees=n_trees, rho=rho, random_state=random_state)
    for target in json.loads(ex.to_json())["targets"]:
        rules = [r["conditions"] for r in target["rules"]]
        maximal = maximal_valid_nodes(X, np.isin(y, target["outputs"]["classes"]), nodes, tau=tau, rho=rho)
        extra = [c for c in rules if not rule_is_a_node(c, maximal, X)]
        missing = [m for m in maximal if not any(rule_is_a_node(c, [m], X) for c in rules)]
        assert not extra and not missing, (target["outputs"], extra, missing)


_BANKNOTE = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "banknote.csv"


@pytest.mark.slow
@pytest.mark.skipif(not _BANKNOTE.exists(), reason="needs ../shared/datasets/banknote.csv")
@pytest.mark.parametrize("seed", [0, 5, 9])
def test_forest_rules_are_the_maximal_valid_nodes_on_banknote(seed):
    """Banknote, 10 trees, tau 0.8, rho 0.01, the exact grower: two trees split one gap between fit values at
    different numbers (0.9197 and 0.9214); moving both to the readable 0.92 made one node lie within another, and a
    maximal node was dropped (seed 5; the other seeds pass either way). Thresholds sharing a gap now keep their own
    values."""
    data = pd.read_csv(_BANKNOTE)
    X, y = data.drop(columns="target"), data["target"].to_numpy()
    _rules_are_the_maximal_valid_nodes(X, y, n_trees=10, tau=0.8, rho=0.01, random_state=seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_forest_rules_are_the_maximal_valid_nodes_on_other_tables(seed):
    X, y = _glucose_bmi(n=900, seed=seed)
    _rules_are_the_maximal_valid_nodes(X, y, n_trees=10, tau=0.8, rho=0.01, random_state=seed)
