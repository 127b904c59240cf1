"""Actionability constraints: exact constrained metarules, never a forbidden recommendation."""
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcrex import TCREx
from tcrex.errors import CellLimitError, NoValidRuleError, ParameterError
from tcrex.vocabulary import is_verified
from tcrex.constraints import constraints_from_suggestions, suggest_constraints
from tcrex._engine.base._data import FeatureSchema

from tests.support.data import figure1, mixed

A, B, C = {"x1": 2.0, "x2": 2.0}, {"x1": 2.0, "x2": 8.0}, {"x1": 6.0, "x2": 2.0}


def _fit(constraints):
    X, y = figure1()
    return TCREx(rho=0.02, tau=0.9, constraints=constraints).fit(X, y_pred=y)


def _explain(ex, *points):
    return ex.explain(pd.DataFrame(list(points)), y_pred=["red"] * len(points))


def test_immutable_feature_leaves_no_actionable_rule():
    ex = _fit({"x1": "immutable"})
    out = _explain(ex, A, C)
    assert out.status.tolist() == ["no_actionable_rule", "ok"]
    assert pd.isna(out.rule.iloc[0]) and pd.notna(out.metarule.iloc[0])  # its own metarule, no silent fallback
    assert "constraints forbid" in out.text.iloc[0]
    assert out.text.iloc[1] == "Change x2 to > 5.125, while keeping x1 > 3.125"
    metas = ex.metarules_frame()
    assert metas.rule.isna().any()
    e = ex.explain_one(A, y_pred="red")
    assert e.status == "no_actionable_rule" and e.rule is None and e.metarule is not None
    assert e.alternatives  # where recourse would exist


def test_increase_only_picks_the_rule_above():
    ex = _fit({"x1": "increase_only"})
    out = _explain(ex, A).iloc[0]
    assert out.changes == 2  # the small rule needs x1 lowered: forbidden; the large one needs two increases
    assert out.text == "Change x1 to > 3.125 and x2 to > 5.125"
    cf = ex.counterfactuals(pd.DataFrame([A]), y_pred=["red"]).iloc[0]
    assert cf.x1 > A["x1"] and cf.x2 > A["x2"]


def test_weights_trade_against_feasibility():
    free = _explain(_fit(None), C).iloc[0]
    weighted = _explain(_fit({"x2": {"weight": 1.5}}), C).iloc[0]
    # free: change x2 (1 - 0.35) beats change x1 (1 - 0.05); with x2 costing 1.5 the small rule wins
    assert free.text.startswith("Change x2") and weighted.text.startswith("Change x1")


def test_categorical_transitions_are_respected():
    X, y = mixed()
    trans = {"job": {"transitions": {"clerk": ["driver"], "nurse": ["teacher", "manager"]}}}
    ex = TCREx(rho=0.03, tau=0.85, constraints=trans).fit(X, y_pred=y)
    out = ex.explain(X, y_pred=y)
    cf = ex.counterfactuals(X, y_pred=y)
    moved = (cf.job != X.job) & out.rule.notna().to_numpy()
    for src, dst in zip(X.job[moved], cf.job[moved]):
        assert src not in ("clerk", "nurse") or dst in trans["job"]["transitions"][src]


def test_constraints_export_and_old_files_load():
    ex = _fit({"x1": "increase_only", "x2": {"weight": 2}})
    doc = json.loads(ex.to_json())
    assert doc["version"] == 5
    assert doc["params"]["constraints"] == {"x1": {"kind": "increase_only"}, "x2": {"weight": 2}}
    back = TCREx.from_json(ex.to_json())
    X, y = figure1()
    pd.testing.assert_frame_equal(back.explain(X, y_pred=y), ex.explain(X, y_pred=y))
    # a version-1 file (no constraints) still loads
    free = json.loads(_fit(None).to_json())
    free["version"] = 1
    del free["params"]["constraints"]
    old = TCREx.from_json(json.dumps(free))
    pd.testing.assert_frame_equal(old.explain(X, y_pred=y), _fit(None).explain(X, y_pred=y))


def test_update_constraints_reuses_the_surrogate():
    ex = _fit(None)
    ex.update(constraints={"x1": "immutable"})
    assert ex.n_surrogate_fits_ == 1
    assert _explain(ex, A).status.iloc[0] == "no_actionable_rule"
    ex.update(constraints={})
    assert _explain(ex, A).status.iloc[0] == "ok"


def test_bad_constraints_are_explained():
    X, y = mixed()
    for spec, word in [({"nope": "immutable"}, "unknown feature"), ({"job": "increase_only"}, "categorical"),
                       ({"age": {"weight": -1}}, "positive"), ({"age": "sideways"}, "kind"),
                       ({"job": {"transitions": {"pilot": ["clerk"]}}}, "unknown category")]:
        with pytest.raises(ParameterError, match=word):
            TCREx(constraints=spec).fit(X, y_pred=y)


def test_suggestions_match_whole_words_only():
    X = pd.DataFrame({"age": [1, 2], "AgeGroup": [1, 2], "percentage": [1.0, 2.0], "wage": [3, 4],
                      "sex": ["f", "m"], "NativeCountry": ["a", "b"]})
    found = suggest_constraints(FeatureSchema.detect(X))
    # an age band is a protected attribute, not time to wait for; age itself only grows
    assert constraints_from_suggestions(found) == {"age": "increase_only", "AgeGroup": "immutable",
                                                   "sex": "immutable", "NativeCountry": "immutable"}
    assert suggest_constraints(X) == found  # a DataFrame or a schema
    assert all(isinstance(s["reason"], str) and s["reason"] for s in found.values())
    json.dumps(found)  # plain data


def test_suggestions_cover_protected_attributes_past_events_and_elapsed_time():
    import tcrex

    X = pd.DataFrame({
        "ExternalRiskEstimate": [60, 70], "MSinceOldestTradeOpen": [100, 200], "AverageMInFile": [50, 80],
        "MaxDelqEver": [5, 7], "NumTrades60Ever2DerogPubRec": [0, 1], "n_late_payments": [0, 2],
        "months_since_last_default": [3, 9], "credit_history_years": [2, 10], "Religion": ["a", "b"],
        "grp": ["Male", "Female"], "colour": ["red", "blue"], "percentage": [0.1, 0.2], "wage": [10, 20],
        "marital_status": ["x", "y"], "AgeBand": ["18-25", "26-40"], "isMale": ["yes", "no"],
        "HasHistoryOfOverduePayments": ["yes", "no"]})
    found = tcrex.constraints.suggest_constraints(X)
    kinds = constraints_from_suggestions(found)
    assert kinds == {"MSinceOldestTradeOpen": "increase_only", "AverageMInFile": "increase_only",
                     "MaxDelqEver": "immutable", "NumTrades60Ever2DerogPubRec": "immutable",
                     "n_late_payments": "immutable", "months_since_last_default": "increase_only",
                     "credit_history_years": "increase_only", "Religion": "immutable", "grp": "immutable",
                     "marital_status": "immutable", "AgeBand": "immutable", "isMale": "immutable",
                     "HasHistoryOfOverduePayments": "immutable"}
    assert "past events" in found["HasHistoryOfOverduePayments"]["reason"]
    assert "protected" in found["grp"]["reason"] and "female" in found["grp"]["reason"]
    assert "past" in found["MaxDelqEver"]["reason"] and "waiting" in found["AverageMInFile"]["reason"]
    # the suggestions are valid constraints for these features, accepted by the estimator as they are
    y = (X["ExternalRiskEstimate"] > 65).astype(int).to_numpy()
    big = pd.concat([X] * 20, ignore_index=True)
    TCREx(rho=0.05, constraints=kinds).fit(big, y_pred=np.tile(y, 20))


def test_advice_never_changes_an_immutable_feature():
    """Once a feature is immutable, no explanation, change column or counterfactual point changes it."""
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"score": rng.uniform(0, 100, 1500), "income": rng.uniform(0, 100, 1500),
                      "MaxDelqEver": rng.integers(0, 8, 1500)})
    y = ((X["score"] > 50) & (X["MaxDelqEver"] >= 4)).astype(int).to_numpy()
    free = TCREx(rho=0.02, tau=0.9, target=1, grower="exact").fit(X, y_pred=y)
    assert free.feature_actions(X, y_pred=y)["MaxDelqEver"].eq("change").any()  # the test can fail
    ex = TCREx(rho=0.02, tau=0.9, target=1, grower="exact", constraints={"MaxDelqEver": "immutable"})
    ex.fit(X, y_pred=y)
    actions = ex.feature_actions(X, y_pred=y)
    assert not actions["MaxDelqEver"].eq("change").any()
    cf = ex.counterfactuals(X, y_pred=y, model=lambda Z: ((Z["score"] > 50) & (Z["MaxDelqEver"] >= 4)).astype(int)
                            .to_numpy(), verify=True)
    advice = is_verified(cf)  # a similar real case is shown as one, never as advice
    assert advice.any()
    assert not any("MaxDelqEver" in tuple(c or ()) for c in cf.loc[advice, "changed"])
    moved = (cf["MaxDelqEver"].notna() & (cf["MaxDelqEver"] != X["MaxDelqEver"])).to_numpy()
    assert not moved[advice].any()


# ---------------------------------------------------------------- property: lookup == constrained argmin
def _brute(doc, target, constraints, rows: pd.DataFrame):
    """Direct constrained argmin over the JSON rules for each row (-1 when every rule is forbidden)."""
    N = doc["n_fit_rows"]
    rules = doc["targets"][target]["rules"]
    out = []
    for _, x in rows.iterrows():
        best, best_key = -1, None
        for r, rule in enumerate(rules):
            cost, ok = 0, True
            for name, cond in rule["conditions"].items():
                v, c = x[name], constraints.get(name, {})
                kind = c if isinstance(c, str) else c.get("kind", "free")
                w = 1.0 if isinstance(c, str) else c.get("weight", 1.0)
                if "in" in cond:
                    if v in cond["in"]:
                        continue
                    trans = {} if isinstance(c, str) else c.get("transitions", {})
                    reach = trans.get(v)
                    if kind == "immutable" or (reach is not None and not set(reach) & set(cond["in"])):
                        ok = False
                else:
                    lo = -np.inf if cond["low"] is None else cond["low"]
                    hi = np.inf if cond["high"] is None else cond["high"]
                    if lo < v <= hi:
                        continue
                    if kind == "immutable" or (kind == "increase_only" and v > hi) or \
                            (kind == "decrease_only" and v <= lo):
                        ok = False
                cost += int(round(w * 1000))
            if ok:
                key = cost * N - 1000 * rule["n"]
                if best_key is None or key < best_key:
                    best, best_key = r, key
        out.append(best)
    return np.array(out)


def _cell_points(doc) -> pd.DataFrame:
    """A point in every grid cell spanned by all rules' bounds (on each bound and between them), all categories."""
    import itertools
    axes = {}
    for f in doc["features"]:
        if f["type"] == "categorical":
            axes[f["name"]] = list(f["categories"])
            continue
        b = sorted({c[f["name"]][k] for t in doc["targets"] for r in t["rules"] for c in [r["conditions"]]
                    if f["name"] in c for k in ("low", "high") if c[f["name"]][k] is not None})
        pts = [b[0] - 1] if b else [0.0]
        for i, v in enumerate(b):
            pts.append(v)  # on the bound: inside (low, v]
            pts.append((v + b[i + 1]) / 2 if i + 1 < len(b) else v + 1)
        axes[f["name"]] = pts
    combos = list(itertools.product(*axes.values()))
    if len(combos) > 3000:
        idx = np.random.default_rng(0).choice(len(combos), 3000, replace=False)
        combos = [combos[i] for i in idx]
    return pd.DataFrame(combos, columns=list(axes)).astype({"age": float})


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000),
       kinds=st.lists(st.sampled_from(["free", "immutable", "increase_only", "decrease_only"]), min_size=2,
                      max_size=2),
       weights=st.lists(st.sampled_from([1.0, 0.5, 2.0, 1.25, 3.0]), min_size=3, max_size=3),
       trans=st.booleans())
def test_constrained_lookup_equals_direct_argmin(seed, kinds, weights, trans):
    X, y = mixed(n=400, seed=seed)
    constraints = {"age": {"kind": kinds[0], "weight": weights[0]},
                   "income": {"kind": kinds[1], "weight": weights[1]},
                   "job": {"weight": weights[2]}}
    if trans:
        constraints["job"]["transitions"] = {"clerk": ["driver"], "nurse": ["nurse"], "teacher": []}
    try:
        ex = TCREx(rho=0.05, tau=0.8, constraints=constraints).fit(X, y_pred=y)
    except (NoValidRuleError, CellLimitError):  # no valid rule on unlucky data is legitimate
        return
    doc = json.loads(ex.to_json())
    rng = np.random.default_rng(seed)
    probe = pd.concat([X.sample(60, random_state=seed), _cell_points(doc),
                       pd.DataFrame({"age": rng.integers(10, 80, 40), "income": rng.uniform(0, 150, 40).round(1),
                                     "job": rng.choice(X.job.unique(), 40), "owner": rng.choice(["yes", "no"], 40)})],
                      ignore_index=True)
    for t in range(len(ex.targets_)):
        yp = np.full(len(probe), 1 - doc["targets"][t]["outputs"]["classes"][0])
        out = ex.explain(probe, y_pred=yp)
        want = _brute(doc, t, constraints, probe)
        got = out.rule.fillna(-1).astype(int).to_numpy()
        assert np.array_equal(got, want)
        assert (out.status[want < 0] == "no_actionable_rule").all()
        # no counterfactual point violates a constraint
        cf = ex.counterfactuals(probe, y_pred=yp)
        ok = want >= 0
        for name, c in constraints.items():
            if c.get("kind") == "immutable":
                assert (cf.loc[ok, name] == probe.loc[ok, name]).all()
            if c.get("kind") == "increase_only":
                assert (cf.loc[ok, name] >= probe.loc[ok, name]).all()
            if c.get("kind") == "decrease_only":
                assert (cf.loc[ok, name] <= probe.loc[ok, name]).all()
        if trans:
            moved = ok & (cf.job != probe.job).to_numpy()
            for src, dst in zip(probe.job[moved], cf.job[moved]):
                allowed = constraints["job"]["transitions"].get(src)
                assert allowed is None or dst in allowed
