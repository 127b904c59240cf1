"""The explainer's fitted state is explicit: ``fit`` builds one FittedState, reads never add or replace
anything on the explainer or its state, and results do not depend on what the state's caches already hold."""
from dataclasses import fields

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex._engine.fitting._state import FittedState, StateCache

from tests.support.data import mixed


def model(Z):
    score = Z["income"].astype(float) + 0.8 * Z["age"].astype(float) + np.where(Z["job"].isin(["manager", "teacher"]),
                                                                                  15, 0)
    return (score > 85).astype(int).to_numpy()


def multiclass(Z):
    return np.digitize(Z["income"].to_numpy(dtype=float), [30.0, 55.0])


@pytest.fixture(scope="module")
def data():
    X, _ = mixed(500, seed=1)
    return X


def _snapshot(ex):
    """Every attribute of the explainer and every field of its state, by identity (plus the fitted targets)."""
    state = ex.state_
    return ({k: id(v) for k, v in vars(ex).items()},
            {f.name: id(getattr(state, f.name)) for f in fields(state)},
            tuple(map(id, state.solutions)))


def _reads(ex, X, target):
    """Every read of the public API, towards ``target`` where it takes one."""
    rows = X.iloc[:40]
    yield "explain", ex.explain(rows, target=target)
    yield "explain_arrow", ex.explain_arrow(rows, target=target).to_pandas()
    yield "feature_actions", ex.feature_actions(rows, target=target)
    yield "real_examples", ex.real_examples(rows, target=target)
    yield "counterfactuals", ex.counterfactuals(rows, target=target)
    yield "boundary points", ex.counterfactuals(rows, target=target, verify=False)
    yield "explain_one", ex.explain_one(X.iloc[3], target=target).to_dict()
    yield "effectiveness", ex.effectiveness().to_dict()
    yield "rules_frame", ex.rules_frame()
    yield "metarules_frame", ex.metarules_frame(effectiveness=True)
    yield "summary_text", ex.summary_text()
    yield "nearest_points", ex.nearest_points(rows, 0, 0)
    yield "percentile_distance", ex.percentile_distance(rows, X.iloc[40:80])
    yield "in_target", ex.in_target(model(rows), ex.explain(rows, target=target)["target"])
    yield "metarule_tree", ex.metarule_tree(0)
    yield "metarule_slice", ex.metarule_slice(0, "age", "income", X.iloc[0])
    yield "fit_rows", ex.fit_rows()
    yield "json", ex.to_json()
    yield "ids", (ex.rule_id(0, 0), ex.metarule_id(0, 0), ex.rule_conditions(0, 0))


def _same(a, b):
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    else:
        assert repr(a) == repr(b)


def test_fit_builds_one_state_and_the_public_attributes_read_it(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, model)
    assert set(vars(ex)) == set(TCREx._PARAMS) | {"state_"}
    state = ex.state_
    assert isinstance(state, FittedState) and isinstance(state.cache, StateCache)
    assert ex.targets_ is state.solutions and ex.schema_ is state.schema and ex.model_ is model
    assert state.category_preference is not None and state.fit_enc is not None
    assert ex.recount_counts_ is None and ex.effectiveness_ is None
    unfitted = TCREx()
    assert not hasattr(unfitted, "targets_") and not hasattr(unfitted, "schema_")


@pytest.mark.parametrize("target", [None, 1, 2])
def test_no_read_adds_or_replaces_anything(data, target):
    """Snapshots of ``vars(ex)`` and of the state's fields before and after every read (target=... included):
    identical. A target the fit did not solve lands in the declared cache only."""
    y = multiclass(data)
    ex = TCREx(rho=0.03, tau=0.8).fit(data, lambda Z: multiclass(Z)) if target is not None else \
        TCREx(rho=0.03, tau=0.9).fit(data, model)
    if target is not None:  # multi-class: the default targets are "any other class"; target=c solves class c
        assert len(ex.targets_) == 3 and len(set(y)) == 3
    before = _snapshot(ex)
    for _name, _ in _reads(ex, data, target):
        assert _snapshot(ex) == before, _name
    assert not hasattr(ex, "_extra_targets") and not [k for k in vars(ex) if k.startswith("_")]
    assert len(ex.targets_) == len(before[2])
    if target is not None:
        assert [s.target.describe() for s in ex.state_.cache.extra_solutions] == [f"output = {target}"]


def test_results_are_the_same_with_a_cold_or_a_warm_cache(data):
    """Every read gives the same answer on a fresh explainer (cold caches) and after every other read (warm),
    for the fitted targets and for a target solved on demand."""
    warm = TCREx(rho=0.03, tau=0.8).fit(data, multiclass)
    for target in (None, 2):
        first = dict(_reads(warm, data, target))
        for name, value in _reads(warm, data, target):  # warm caches
            _same(first[name], value)
        for name, value in _reads(TCREx(rho=0.03, tau=0.8).fit(data, multiclass), data, target):  # cold
            _same(first[name], value)


def test_explain_towards_an_unsolved_target_equals_fitting_that_target(data):
    """A target solved on demand is the one ``fit(target=...)`` solves, and it never becomes a fitted target."""
    ex = TCREx(rho=0.03, tau=0.8).fit(data, multiclass)
    fitted = ex.to_json()
    on_demand = ex.explain(data, target=2)
    direct = TCREx(rho=0.03, tau=0.8, target=2).fit(data, multiclass).explain(data)
    pd.testing.assert_series_equal(on_demand["status"], direct["status"])
    pd.testing.assert_series_equal(on_demand["text"].astype(str), direct["text"].astype(str))
    pd.testing.assert_series_equal(on_demand["changes"], direct["changes"])
    assert (on_demand["target"] == len(ex.targets_)).sum() == (direct["target"] == 0).sum()
    assert ex.to_json() == fitted


def test_update_and_recount_replace_the_state_and_start_a_new_cache(data):
    ex = TCREx(rho=0.03, tau=0.9, grower="exact").fit(data, model)
    first = ex.state_
    ex.metarules_frame()
    ex.update(tau=0.8)
    assert ex.state_ is not first and ex.state_.tau == 0.8 and first.tau == 0.9 and not ex.state_.cache.frames
    assert ex.state_.fit_enc is first.fit_enc and ex.state_.surrogate is first.surrogate
    second = ex.state_
    ex.recount(ex.candidate_counts(data, model=model))
    assert ex.state_ is not second and ex.recount_counts_ is not None and second.recounted is None
    assert ex.recount_summary_["n_rows"] == len(data)


def test_a_failed_update_leaves_the_state_as_it_was(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, model)
    state, params = ex.state_, ex.get_params()
    with pytest.raises(Exception, match="constraint|unknown|feature"):
        ex.update(tau=0.8, constraints={"no such feature": "immutable"})
    assert ex.state_ is state and ex.get_params() == params


def test_a_restored_explainer_has_a_state_without_fit_rows(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, model)
    back = TCREx.from_json(ex.to_json())
    state = back.state_
    assert state.fit_enc is None and state.fit_y is None and state.surrogate is None and state.model is None
    assert state.rule_values is not None and state.category_counts is not None
    before = _snapshot(back)
    back.explain(data.iloc[:50], y_pred=model(data.iloc[:50]))
    back.counterfactuals(data.iloc[:50], model=model, reference=data)
    back.summary_text()
    assert _snapshot(back) == before
    assert back.to_json() == ex.to_json()
