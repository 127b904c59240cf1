"""Edge cases of the estimator: thresholds, float32, single/no rule, categories, forests, limits, reuse."""
import pickle

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.errors import (CellLimitError, DataError, ModelError, NoValidRuleError, NotFittedError, ParameterError,
                          SchemaError)

from tests.support.data import figure1, mixed


def _step_data(n=200):
    X = pd.DataFrame({"x": np.arange(1, n + 1, dtype=float)})
    return X, (X.x > n / 2).astype(int).to_numpy()


# ---------------------------------------------------------------- boundaries: (low, high]
def test_point_exactly_on_threshold_is_inside_upper_bound():
    X, y = _step_data()
    ex = TCREx(rho=0.05, tau=0.9).fit(X, y_pred=y)
    rules = ex.rules_frame()
    low_rule = rules[rules.conditions == "x ≤ 100"]  # integer feature: (.., 100.5] shown as ≤ 100
    assert len(low_rule) == 1
    t = low_rule.target.iloc[0]
    high = ex.targets_[t].rules.high[low_rule.rule.iloc[0], 0]
    assert high == 100.5
    pts = pd.DataFrame({"x": [high, np.nextafter(high, np.inf)]})
    out = ex.explain(pts, y_pred=[1, 1])
    assert list(out.changes) == [0, 1]  # on the bound: inside; one ulp above: outside
    assert list(out.status) == ["already_in_rule", "ok"]


def test_float32_sensitive_values_use_float64_box_semantics():
    # float32 cannot tell these apart; the box semantics (float64) must still count them exactly.
    a = 0.1
    b = np.nextafter(0.1, 1.0)
    assert np.float32(a) == np.float32(b)
    big = 16_777_216.0  # 2**24: 2**24 + 1 rounds to it in float32
    vals = np.concatenate([np.full(50, a), np.full(50, b), np.linspace(0.2, 1.0, 100), [big, big + 1] * 25])
    X = pd.DataFrame({"x": vals})
    y = (X.x > 0.5).astype(int).to_numpy()
    ex = TCREx(rho=0.05, tau=0.8).fit(X, y_pred=y)
    for sol in ex.targets_:
        inside = sol.rules.contains(ex.schema_.encode(X))
        assert np.array_equal(inside.sum(axis=0), sol.rule_n)
        assert np.array_equal((inside & sol.target.contains(y)[:, None]).sum(axis=0), sol.rule_n_target)
    # explaining exactly the float32-colliding values follows the float64 boxes
    out = ex.explain(pd.DataFrame({"x": [a, b, big, big + 1]}), y_pred=[0, 0, 1, 1])
    assert out.status.isin(["ok", "already_in_rule"]).all()


# ---------------------------------------------------------------- single rule / no rule
def test_single_rule_gives_one_metarule_covering_everything():
    X, y = _step_data()
    ex = TCREx(rho=0.05, tau=0.9).fit(X, y_pred=y)
    for sol in ex.targets_:
        assert sol.n_rules == 1
        assert len(sol.metarules) == 1
    metas = ex.metarules_frame()
    assert (metas.conditions == "any input").all()
    out = ex.explain(pd.DataFrame({"x": [-1e9, 1e9]}), y_pred=[0, 1])
    assert out.rule.notna().all() and (out.metarule == 0).all()


def test_no_valid_rule_raises_with_advice():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=300)})
    y = rng.integers(0, 2, 300)  # pure noise: nothing is 100% accurate at rho=0.2
    with pytest.raises(NoValidRuleError, match="Lower tau"):
        TCREx(rho=0.2, tau=1.0).fit(X, y_pred=y)


def test_target_without_rules_gives_no_rule_status():
    rng = np.random.default_rng(1)
    n = 400
    X = pd.DataFrame({"x": np.arange(n, dtype=float)})
    y = np.where(X.x < 300, rng.integers(0, 2, n), 1)  # class 1 has a clean region, class 0 never does
    with pytest.warns(UserWarning, match="no valid rule"):
        ex = TCREx(rho=0.1, tau=0.95).fit(X, y_pred=y)
    out = ex.explain(X, y_pred=y)
    assert set(out.status[y == 1]) == {"no_rule"}
    assert out.rule[y == 1].isna().all()
    assert out.status[y == 0].isin(["ok", "already_in_rule"]).all()


# ---------------------------------------------------------------- categoricals
def test_categories_no_rule_mentions_collapse_and_stay_valid():
    X, y = mixed()
    ex = TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y)
    job = ex.schema_.index("job")
    for sol in ex.targets_:
        n_states = sol.grid.dims[job]
        n_categories = len(ex.schema_.features[job].categories)
        assert n_states <= n_categories
    # every category gets a rule, including those no rule mentions
    out = ex.explain(X, y_pred=y)
    served = out.target.notna()
    assert out.loc[served, "rule"].notna().all()
    for job_value in X.job.unique():
        assert out.loc[(X.job == job_value).to_numpy() & served.to_numpy(), "rule"].notna().all()


def test_categorical_rules_read_in_user_terms():
    X, y = mixed()
    ex = TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y)
    text = " ".join(ex.rules_frame().conditions)
    assert "_" not in text and "0.5" not in text  # no one-hot column names or 0.5 thresholds leak out
    doc = ex.to_json()
    assert '"in": [' in doc


def test_unseen_category_at_explain_time_is_named():
    X, y = mixed()
    ex = TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y)
    bad = X.head(2).copy()
    bad.loc[bad.index[0], "job"] = "astronaut"
    with pytest.raises(DataError, match="job.*astronaut"):
        ex.explain(bad, y_pred=y[:2])


# ---------------------------------------------------------------- forests
def test_forest_deduplicates_roots_and_boxes():
    X, y = mixed()
    ex = TCREx(rho=0.05, tau=0.8, n_trees=5).fit(X, y_pred=y)
    cand = ex.surrogate_.candidates_
    keys = {cand.key(r) for r in range(len(cand))}
    assert len(keys) == len(cand)  # no duplicate boxes
    unbounded = np.isinf(cand.low).all(axis=1) & np.isinf(cand.high).all(axis=1)
    unbounded &= np.all([a.all(axis=1) for a in cand.allowed], axis=0)
    assert unbounded.sum() == 1  # five trees, one root box
    assert len(cand) < ex.surrogate_.n_nodes_


# ---------------------------------------------------------------- limits and reuse
def test_cell_limit_is_checked_before_building_the_grid(monkeypatch):
    X, y = mixed()
    import tcrex._engine.fitting._grid as grid_module

    def boom(*a, **k):
        raise AssertionError("the grid was built despite the cell limit")

    monkeypatch.setattr(grid_module.Grid, "all_states", boom)
    monkeypatch.setattr(grid_module, "optimal_rules", boom)
    with pytest.raises(CellLimitError, match="raise rho|Raise rho") as err:
        TCREx(rho=0.02, tau=0.8, n_trees=3, max_cells=5).fit(X, y_pred=y)
    assert "max_cells=5" in str(err.value) and "tau" in str(err.value)


def test_tau_change_reuses_the_surrogate():
    X, y = mixed()
    ex = TCREx(rho=0.03, tau=0.8).fit(X, y_pred=y)
    surrogate = ex.surrogate_
    ex.update(tau=0.95)
    assert ex.surrogate_ is surrogate and ex.n_surrogate_fits_ == 1 and ex.tau == 0.95
    fresh = TCREx(rho=0.03, tau=0.95).fit(X, y_pred=y)
    assert ex.to_json() == fresh.to_json()
    ex.update(target=1)
    assert ex.surrogate_ is surrogate and len(ex.targets_) == 1


def test_progress_reports_steps_up_to_one():
    X, y = mixed()
    seen = []
    TCREx(rho=0.05).fit(X, y_pred=y, progress=lambda step, f: seen.append((step, f)))
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any(step.startswith("surrogate") for step, _ in seen)
    assert any(step.startswith("metarules") for step, _ in seen)


# ---------------------------------------------------------------- inputs, models, tasks
def test_nan_is_rejected_naming_the_columns():
    X, y = mixed()
    X = X.astype({"income": float})
    X.loc[3, "income"] = np.nan
    X.loc[5, "job"] = None
    with pytest.raises(DataError, match="'income'.*'job'|'job'.*'income'"):
        TCREx().fit(X, y_pred=y)


def test_model_with_predict_and_callable_model_agree():
    X, y = mixed()
    from sklearn.tree import DecisionTreeClassifier
    Xn = pd.get_dummies(X, dtype=float)
    clf = DecisionTreeClassifier(max_depth=4, random_state=0).fit(Xn, y)
    def fn(frame):
        return clf.predict(pd.get_dummies(frame, dtype=float).reindex(columns=Xn.columns, fill_value=0))

    a = TCREx(rho=0.05).fit(X, fn)
    b = TCREx(rho=0.05).fit(X, y_pred=fn(X))
    assert a.to_json() == b.to_json()
    pd.testing.assert_frame_equal(a.explain(X), b.explain(X, y_pred=fn(X)))


def test_failing_model_and_missing_outputs_are_explained():
    X, y = mixed()
    with pytest.raises(ModelError, match="failed to predict"):
        TCREx().fit(X, lambda frame: frame["nope"])
    ex = TCREx(rho=0.05).fit(X, y_pred=y)
    with pytest.raises(ModelError, match="y_pred"):
        ex.explain(X)
    with pytest.raises(ModelError, match="single class"):
        TCREx().fit(X, y_pred=np.ones(len(X)))


def test_parameters_are_validated():
    X, y = mixed()
    for kwargs, word in [({"rho": 0}, "rho"), ({"tau": 1.5}, "tau"), ({"n_trees": 0}, "n_trees"),
                         ({"max_cells": -1}, "max_cells"), ({"task": "ranking"}, "task")]:
        with pytest.raises(ParameterError, match=word):
            TCREx(**kwargs).fit(X, y_pred=y)
    with pytest.raises(ParameterError, match="rows"):
        TCREx(rho=0.001).fit(X.head(100), y_pred=y[:100])
    with pytest.raises(NotFittedError):
        TCREx().explain(X, y_pred=y)


def test_multiclass_untargeted_and_targeted():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.uniform(0, 3, 900), "b": rng.uniform(0, 1, 900)})
    y = np.floor(X.a).astype(int).to_numpy()
    ex = TCREx(rho=0.05, tau=0.9).fit(X, y_pred=y)
    assert len(ex.targets_) == 3
    assert [s.target.classes for s in ex.targets_] == [(1, 2), (0, 2), (0, 1)]
    out = ex.explain(X, y_pred=y)
    assert (out.target.to_numpy() == y).all()  # output k is served by "any class but k"
    before = ex.to_json()
    targeted = ex.explain(X, y_pred=y, target=2)
    assert ex.to_json() == before  # an on-demand target does not change the fitted explainer's export
    assert targeted.status[y == 2].eq("already_in_target").all()
    assert targeted.target[y != 2].nunique() == 1
    rules = ex.solution(int(targeted.target[y != 2].iloc[0])).rules
    assert (rules.low[:, 0] >= 1.5).all()  # every rule for class 2 lies at a > 2 - ...


def test_regression_default_split_at_mean():
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"a": rng.uniform(0, 10, 800), "c": rng.choice(["u", "v"], 800)})
    y = X.a * 2 + (X.c == "v") * 5.0
    ex = TCREx(rho=0.05, tau=0.9).fit(X, y_pred=y)
    assert ex.task_ == "regression"
    mean = float(np.mean(y))
    mu = ex.targets_[0].target.interval[0]  # the shortest number splitting the fit outputs as the mean does
    assert [s.target.interval for s in ex.targets_] == [(mu, None), (None, mu)]
    assert ((y > mu) == (y > mean)).all() and mu == 13.0 and round(mean, 2) == 13.01
    out = ex.explain(X, y_pred=y)
    assert (out.target[(y <= mu).to_numpy()] == 0).all() and (out.target[(y > mu).to_numpy()] == 1).all()
    iv = TCREx(rho=0.05, tau=0.9, target=(15.0, None)).fit(X, y_pred=y)
    assert len(iv.targets_) == 1
    assert iv.explain(X, y_pred=y).status[(y > 15).to_numpy()].eq("already_in_target").all()


# ---------------------------------------------------------------- export
def test_json_follows_schema_and_round_trips():
    import json
    X, y = mixed()
    ex = TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y)
    doc = json.loads(ex.to_json())
    assert doc["format"] == "tcrex-rules" and doc["version"] == 5
    assert doc["params"]["rho"] == 0.03 and doc["n_fit_rows"] == len(X)
    assert {f["name"]: f["type"] for f in doc["features"]} == {"age": "numeric", "income": "numeric",
                                                               "job": "categorical", "owner": "categorical"}
    rule = doc["targets"][0]["rules"][0]
    assert {"id", "conditions", "n", "feasibility", "accuracy"} <= set(rule)
    back = TCREx.from_json(ex.to_json())
    pd.testing.assert_frame_equal(back.explain(X, y_pred=y), ex.explain(X, y_pred=y))
    assert back.to_json() == ex.to_json()
    with pytest.raises(NotFittedError, match="JSON"):
        back.update(tau=0.9)


def test_damaged_json_is_refused():
    import json
    X, y = figure1()
    ex = TCREx(rho=0.02, tau=0.9).fit(X, y_pred=y)
    doc = json.loads(ex.to_json())
    doc["targets"][1]["metarules"].pop()
    with pytest.raises(SchemaError, match="uncovered"):
        TCREx.from_json(json.dumps(doc))
    doc = json.loads(ex.to_json())
    for m in doc["targets"][1]["metarules"]:
        m["rule"] = 0
    with pytest.raises(SchemaError, match="optimal"):
        TCREx.from_json(json.dumps(doc))
    for bad in ["{", "[]", '{"format": "tcrex-rules", "version": 99}', '{"format": "tcrex-rules", "version": 2}']:
        with pytest.raises(SchemaError):
            TCREx.from_json(bad)


def test_pickle_round_trip_keeps_explaining():
    X, y = mixed()
    ex = TCREx(rho=0.03).fit(X, y_pred=y)
    back = pickle.loads(pickle.dumps(ex))
    pd.testing.assert_frame_equal(back.explain(X, y_pred=y), ex.explain(X, y_pred=y))
    back.update(tau=0.95)  # the surrogate travels with the pickle
    assert back.n_surrogate_fits_ == 1


def test_lambda_model_does_not_break_pickling():
    X, y = mixed()
    ex = TCREx(rho=0.05).fit(X, lambda frame: y[: len(frame)])
    back = pickle.loads(pickle.dumps(ex))
    assert back.model_ is None
    assert len(back.explain(X, y_pred=y)) == len(X)


# ---------------------------------------------------------------- percentile distance
def test_percentile_distance_counts_percentile_shifts_and_category_changes():
    X, y = mixed(n=400)
    ex = TCREx(rho=0.05, tau=0.8).fit(X, y_pred=y)
    a, b = X.iloc[:5].copy(), X.iloc[:5].copy()
    numeric = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c])]
    categorical = [c for c in X.columns if c not in numeric]
    col = numeric[0]
    b[col] = X[col].iloc[5:10].to_numpy()
    b[categorical[0]] = X[categorical[0]].iloc[::-1].iloc[:5].to_numpy()

    def pct(v):  # share of fit rows at or below v
        return (X[col].to_numpy()[None, :] <= np.asarray(v, dtype=float)[:, None]).mean(axis=1)

    expected = (np.abs(pct(a[col]) - pct(b[col]))
                + (a[categorical[0]].astype(str).to_numpy() != b[categorical[0]].astype(str).to_numpy()))
    assert np.allclose(ex.percentile_distance(a, b), expected)
    assert np.array_equal(ex.percentile_distance(a, a), np.zeros(5))


def test_percentile_distance_without_fit_data_needs_a_reference():
    X, y = mixed(n=400)
    ex = TCREx(rho=0.05, tau=0.8).fit(X, y_pred=y)
    restored = TCREx.from_json(ex.to_json())
    assert ex.has_fit_data and not restored.has_fit_data
    with pytest.raises(NotFittedError, match="reference="):
        restored.percentile_distance(X.iloc[:3], X.iloc[3:6])
    same = restored.percentile_distance(X.iloc[:3], X.iloc[3:6], reference=X)
    assert np.allclose(same, ex.percentile_distance(X.iloc[:3], X.iloc[3:6]))
    with pytest.raises(ParameterError, match="rows"):
        ex.percentile_distance(X.iloc[:3], X.iloc[:4])


def test_rules_and_metarules_frames_are_built_once_per_solution_set_and_never_stale():
    """The frames are memoised per set of solutions: a caller changing its copy changes nothing, and update()
    (new solutions) gives the new rules, never the old frame."""
    X, y = mixed(n=600, seed=4)
    ex = TCREx(rho=0.03, tau=0.9).fit(X, y_pred=y)
    first = ex.metarules_frame()
    first.loc[:, "text"] = "changed by a caller"
    again = ex.metarules_frame()
    assert (again["text"] != "changed by a caller").all()
    assert ex.metarules_frame() is not ex.metarules_frame() and "metarules" in ex.state_.cache.frames
    ex.update(tau=0.75)
    fresh = TCREx(rho=0.03, tau=0.75).fit(X, y_pred=y)
    pd.testing.assert_frame_equal(ex.metarules_frame(), fresh.metarules_frame())
    pd.testing.assert_frame_equal(ex.rules_frame(), fresh.rules_frame())
    assert ex.state_.cache.frames and not pickle.loads(pickle.dumps(ex)).state_.cache.frames  # rebuilt on demand
