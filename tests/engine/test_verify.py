"""Recourse that says what it verifies : the verified point is the advice, one definition of
"works" on every path (counterfactuals, explain_one, effectiveness, JSON)."""
import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcrex import TCREx
from tcrex.errors import ModelError, ParameterError, SchemaError
from tcrex.vocabulary import (BOUNDARY, EXAMPLE, MINIMAL_CHANGE, NEXT_RULE, RECOURSE_OUTCOMES, SEARCHED, SOURCES,
                              is_verified, needs_recourse, recourse_outcome)
from tcrex.text import output_text

from tests.support.data import diagonal_model, mixed, owner_model
from tests.support.oracle import point_inside

JOBS = ["clerk", "driver", "manager", "nurse", "teacher"]


@pytest.fixture(scope="module")
def data():
    X, _ = mixed(500, seed=1)
    return X


def _outside(ex, t, r, x) -> set:
    out = set()
    for f, c in ex.rule_conditions(t, r).items():
        v = x[f]
        if "in" in c:
            out |= {f} if v not in c["in"] else set()
        elif (c["low"] is not None and v <= c["low"]) or (c["high"] is not None and v > c["high"]):
            out.add(f)
    return out


def _check(ex, X, cf, model, reference=None):
    """The contract of verified recourse, row by row, against the row itself, the rules and the model."""
    reference = X if reference is None else reference
    expl = ex.explain(X, y_pred=model(X))
    need = needs_recourse(expl["status"])
    assert (cf["recourse"].notna().to_numpy() == need).all()
    assert (cf["valid"].notna().to_numpy() == need).all()
    assert set(cf["recourse"].dropna().unique()) <= set(RECOURSE_OUTCOMES)
    cons = ex.constraints or {}
    names = list(X.columns)
    for i in range(len(X)):
        x, p, row = X.iloc[i], cf[names].iloc[i], cf.iloc[i]
        if not need[i]:
            assert (p == x).all() and pd.isna(row["recourse"])
            continue
        if row["recourse"] == "none":
            assert p.isna().all() and row["changed"] == () and not row["valid"]
            continue
        assert row["valid"]
        diff = {f for f in names if p[f] != x[f]}
        assert diff == set(row["changed"]), (i, diff, row["changed"])  # exactly the features named
        assert row["n_changes"] == len(diff)
        for f in diff:  # every changed value occurs in the data (never interpolated, never outside its range)
            assert (reference[f] == p[f]).any(), (f, p[f])
        if row["recourse"] == "verified":
            for f, kind in cons.items():
                kind = kind if isinstance(kind, str) else kind.get("kind")
                if kind == "immutable":
                    assert p[f] == x[f]
                elif kind == "increase_only":
                    assert p[f] >= x[f]
                elif kind == "decrease_only":
                    assert p[f] <= x[f]
            assert float(p["age"]) == round(float(p["age"]))
        t = int(expl["target"].iloc[i])
        if pd.notna(row["recommended_rule"]):
            r = int(row["recommended_rule"])
            assert row["source"] in (BOUNDARY, SEARCHED, NEXT_RULE)
            assert point_inside(ex.rule_conditions(t, r), p)
            assert _outside(ex, t, r, x) == diff  # the advice names exactly where the row lies outside the rule
            assert (row["source"] == NEXT_RULE) == (r != int(expl["rule"].iloc[i]))
        else:
            assert row["source"] in (MINIMAL_CHANGE, EXAMPLE)
        # the model confirms the point, and the output column is what it said
        out = model(pd.DataFrame([p]).astype(X.dtypes.to_dict()))
        assert ex.solution(t).target.contains(out)[0]
        assert row["output"] == out[0]
        # the sentence names every changed feature with its value, and no other feature as a change
        text = row["text"]
        for f in diff:
            value = output_text(p[f])
            assert (f"{f} to {value}" in text) or (f"{f} = {value}" in text), (text, f, value)
        for f in set(names) - diff:
            assert f"{f} to " not in text, (text, f)


numeric_kinds = st.sampled_from(["free", "immutable", "increase_only", "decrease_only"])


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(age=numeric_kinds, income=numeric_kinds, job=st.sampled_from(["free", "immutable", "transitions"]),
       tau=st.sampled_from([0.8, 0.9, 0.95]), model=st.sampled_from([diagonal_model, owner_model]),
       target=st.sampled_from([None, 1]))
def test_verified_point_is_the_advice_inside_the_rule_within_constraints_and_confirmed(data, age, income, job, tau,
                                                                                       model, target):
    cons = {}
    if age != "free":
        cons["age"] = age
    if income != "free":
        cons["income"] = income
    if job == "immutable":
        cons["job"] = "immutable"
    elif job == "transitions":
        cons["job"] = {"transitions": {"clerk": ["driver"], "nurse": ["teacher"]}}
    ex = TCREx(rho=0.03, tau=tau, constraints=cons or None, target=target).fit(data, model)
    cf = ex.counterfactuals(data)
    _check(ex, data, cf, model)
    if job != "free":
        moved = is_verified(cf) & (cf["job"] != data["job"]).to_numpy()
        allowed = {"clerk": {"driver"}, "nurse": {"teacher"}}
        for a, b in zip(data["job"][moved], cf["job"][moved]):
            assert job == "transitions" and (a not in allowed or b in allowed[a])


def test_every_source_is_reached_and_counted_apart(data):
    ex = TCREx(rho=0.03, tau=0.9, target=1).fit(data, owner_model)
    cf = ex.counterfactuals(data)
    assert set(cf["source"].cat.categories) == set(SOURCES)
    seen = set(cf["source"].dropna().astype(str))
    assert {BOUNDARY, SEARCHED, MINIMAL_CHANGE} <= seen, seen
    # the similar real case is never counted as verified
    assert not (is_verified(cf) & (cf["source"] == EXAMPLE).to_numpy()).any()
    assert (recourse_outcome(cf).astype(object) == "verified").sum() == is_verified(cf).sum()


def _nearest_in_data(ex, fit, t, r, x):
    """Independent oracle of a rule's nearest point in the data: each feature outside the rule at the observed
    fit value inside the rule's interval nearest to the row (categories: the most frequent allowed one)."""
    p = x.copy()
    for f, c in ex.rule_conditions(t, r).items():
        if f not in _outside(ex, t, r, x):
            continue
        if "in" in c:
            counts = fit[f].value_counts()
            p[f] = max(c["in"], key=lambda v: (counts.get(v, 0), -sorted(fit[f].unique()).index(v)))
        else:
            col = np.unique(fit[f].to_numpy(dtype=float))
            inside = col[((c["low"] is None) | (col > (c["low"] if c["low"] is not None else -np.inf)))
                         & (col <= (c["high"] if c["high"] is not None else np.inf))]
            p[f] = inside[0] if c["low"] is not None and x[f] <= c["low"] else inside[-1]
    return p


def test_boundary_source_iff_the_optimal_rules_nearest_point_in_the_data_works(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    cf = ex.counterfactuals(data)
    expl = ex.explain(data)
    names = list(data.columns)
    checked = 0
    for i in np.flatnonzero(expl["status"].astype(str).eq("ok").to_numpy())[:120]:
        t, r = int(expl["target"].iloc[i]), int(expl["rule"].iloc[i])
        near = _nearest_in_data(ex, data, t, r, data.iloc[i][names])
        works = ex.solution(t).target.contains(diagonal_model(pd.DataFrame([near]).astype(data.dtypes.to_dict())))[0]
        assert (cf["source"].iloc[i] == BOUNDARY) == works, i
        if works:
            assert (cf[names].iloc[i] == near).all()
        checked += 1
    assert checked > 50


def test_next_rule_is_the_cheapest_rule_whose_nearest_point_is_not_known_to_fail(data):
    """Brute force over every rule: no rule cheaper than the recommended one (weighted changes, then the larger
    rule, then the earlier one) has a nearest point in the data that the model confirms."""
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    cf = ex.counterfactuals(data)
    expl = ex.explain(data)
    rows = np.flatnonzero((cf["source"] == NEXT_RULE).to_numpy())
    assert len(rows)
    names = list(data.columns)
    for i in rows[:40]:
        x = data.iloc[i][names]
        t, paper, rec = int(expl["target"].iloc[i]), int(expl["rule"].iloc[i]), int(cf["recommended_rule"].iloc[i])
        sol = ex.solution(t)

        def key(r):
            return (len(_outside(ex, t, r, x)) * sol.n_fit_rows - sol.rule_n[r], r)
        for r in range(sol.n_rules):
            if r == paper or not _outside(ex, t, r, x) or key(r) >= key(rec):
                continue
            near = _nearest_in_data(ex, data, t, r, x)
            assert not sol.target.contains(diagonal_model(pd.DataFrame([near]).astype(data.dtypes.to_dict())))[0]
        assert key(rec) >= key(paper) or not _outside(ex, t, paper, x)


def test_the_sentence_states_the_verified_values_and_why_deeper(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    cf = ex.counterfactuals(data)
    searched = cf[cf["source"] == SEARCHED]
    assert len(searched)
    text = searched["text"].iloc[0]
    assert re.search(r"\(the rule asks .+; at .+ the model still gives \d\)", text), text
    boundary = cf[cf["source"] == BOUNDARY]
    assert "the rule asks" not in boundary["text"].iloc[0]


def test_verify_false_keeps_the_papers_boundary_points(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    b = ex.counterfactuals(data, verify=False)
    assert list(b.columns) == list(data.columns)
    expl = ex.explain(data)
    for (t, r), rows in expl.groupby(["target", "rule"]).groups.items():
        pd.testing.assert_frame_equal(b.loc[rows], ex.nearest_points(data.loc[rows], int(t), int(r)))


def test_without_a_model_nothing_is_verified(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, y_pred=diagonal_model(data))
    cf = ex.counterfactuals(data, y_pred=diagonal_model(data))
    assert list(cf.columns) == list(data.columns)  # verify defaults to False without a model
    with pytest.raises(ModelError, match="verify=True needs the model"):
        ex.counterfactuals(data, y_pred=diagonal_model(data), verify=True)
    verified = ex.counterfactuals(data, y_pred=diagonal_model(data), model=diagonal_model)
    assert {"valid", "source", "recourse", "changed", "recommended_rule", "text"} <= set(verified.columns)


def test_rows_without_any_actionable_rule_get_a_minimal_change_or_a_similar_case(data):
    cons = {"age": "immutable", "income": "immutable", "job": "immutable", "owner": "immutable"}
    ex = TCREx(rho=0.03, tau=0.9, constraints=cons).fit(data, diagonal_model)
    cf = ex.counterfactuals(data)
    no_rule = ex.explain(data)["rule"].isna().to_numpy() & cf["recourse"].notna().to_numpy()
    assert no_rule.any()
    # every feature is immutable: no change works, and no real case keeps every immutable feature
    assert set(cf["recourse"][no_rule].astype(str)) == {"none"}
    assert not is_verified(cf)[no_rule].any()
    # with income free, the rows still without a rule get a similar case that keeps the immutable features
    cons3 = {"age": "immutable", "job": "immutable", "owner": "immutable"}
    ex3 = TCREx(rho=0.03, tau=0.9, constraints=cons3).fit(data, diagonal_model)
    cf3 = ex3.counterfactuals(data)
    similar = (cf3["recourse"] == "similar_case").to_numpy()
    if similar.any():
        assert cf3["text"][similar].str.startswith("No verified recourse found within 3 changes; a similar case").all()
        for c in cons3:
            assert (cf3.loc[similar, c] == data.loc[similar, c]).all()


def test_already_in_target_rows_keep_their_values(data):
    ex = TCREx(rho=0.03, tau=0.9, target=1).fit(data, diagonal_model)
    cf = ex.counterfactuals(data)
    done = ~needs_recourse(ex.explain(data)["status"])
    assert done.any()
    assert cf["valid"][done].isna().all() and cf["recourse"][done].isna().all()
    assert (cf.loc[done, data.columns] == data.loc[done]).all().all()


def test_explain_one_is_the_same_point_and_sentence_as_counterfactuals(data):
    ex = TCREx(rho=0.03, tau=0.9, target=1).fit(data, owner_model)
    cf = ex.counterfactuals(data)
    for source in (BOUNDARY, SEARCHED, MINIMAL_CHANGE):
        i = int(np.flatnonzero((cf["source"] == source).to_numpy())[0])
        e = ex.explain_one(data.iloc[[i]])
        assert e.counterfactual_source == source and e.recourse == "verified" and e.counterfactual_valid
        assert e.counterfactual == {k: (v.item() if hasattr(v, "item") else v) for k, v in cf[data.columns].iloc[i].items()}
        assert e.text == cf["text"].iloc[i]
        assert e.changed == list(cf["changed"].iloc[i]) == [c["feature"] for c in e.changes]
        assert e.counterfactual_output == int(owner_model(pd.DataFrame([e.counterfactual]))[0])
        if source != MINIMAL_CHANGE:
            assert e.recommended_rule == int(cf["recommended_rule"].iloc[i])
            assert e.boundary_valid == (source == BOUNDARY)
        assert e.paper_text and e.paper_text == ex.explain(data.iloc[[i]], model=owner_model)["text"].iloc[0]
    plain = ex.explain_one(data.iloc[[i]], verify=False)
    assert plain.counterfactual_valid is None and plain.recourse is None


# ---------------------------------------------------------------------------------------------- JSON path
def test_restored_explainer_with_the_same_reference_rows_returns_the_same_frame(data):
    ex = TCREx(rho=0.03, tau=0.9, target=1, constraints={"age": "increase_only"}).fit(data, owner_model)
    cf = ex.counterfactuals(data)
    back = TCREx.from_json(ex.to_json())
    same = back.counterfactuals(data, model=owner_model, reference=data)
    pd.testing.assert_frame_equal(same, cf)
    assert (back.explain_one(data.iloc[[3]], model=owner_model, reference=data).to_dict()
            == ex.explain_one(data.iloc[[3]]).to_dict())
    # without reference rows it says what it could not do, and still finds the rules' points
    alone = back.counterfactuals(data, model=owner_model)
    beyond = (cf["source"] == MINIMAL_CHANGE).to_numpy()
    assert beyond.any() and alone.attrs["notes"] and "reference=" in alone.attrs["notes"][0]
    assert (alone["recourse"][beyond] == "none").all()
    pd.testing.assert_frame_equal(alone[~beyond], cf[~beyond], check_dtype=False)  # NaN rows make floats


def test_older_files_load_and_say_what_they_lack(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    doc = json.loads(ex.to_json())
    assert doc["version"] == 5 and "category_counts" in doc and "values" in doc["targets"][0]["rules"][0]
    old = dict(doc, version=2)
    old.pop("category_counts")
    for tgt in old["targets"]:
        for rule in tgt["rules"]:
            rule.pop("values", None)
    back = TCREx.from_json(json.dumps(old))
    cf = back.counterfactuals(data, model=diagonal_model, reference=data)
    assert any("before version 4" in n for n in cf.attrs["notes"])
    assert cf["valid"].dropna().all() or (cf["recourse"] == "none").any()
    # values outside the rule, or too many, are refused
    bad = json.loads(ex.to_json())
    rule = next(r for r in bad["targets"][0]["rules"] if r.get("values"))
    name = next(iter(rule["values"]))
    cond = rule["conditions"][name]
    rule["values"][name] = [cond["low"] if cond.get("low") is not None else cond["high"] + 1]  # (low, high]: low is out
    with pytest.raises(SchemaError, match="outside the rule"):
        TCREx.from_json(json.dumps(bad))
    rule["values"][name] = list(range(100))
    with pytest.raises(SchemaError, match="at most"):
        TCREx.from_json(json.dumps(bad))


# ---------------------------------------------------------------------------------------------- effectiveness
def test_effectiveness_counts_are_the_recourse_column(data):
    ex = TCREx(rho=0.03, tau=0.9, target=1).fit(data, owner_model)
    eff = ex.effectiveness()
    cf = ex.counterfactuals(data)
    expl = ex.explain(data)
    outcome = recourse_outcome(cf).astype(object)
    assert eff.n_needing == cf["recourse"].notna().sum()
    assert eff.n_verified == (outcome == "verified").sum()
    assert eff.n_similar == (outcome == "similar_case").sum() and eff.n_none == (outcome == "none").sum()
    assert eff.n_verified == eff.n_optimal_rule + eff.n_next_rule + eff.n_minimal_change
    assert eff.n_minimal_change == (cf["source"] == MINIMAL_CHANGE).sum() > 0
    assert eff.headline().startswith("verified by a point that follows the advice")
    has = expl["rule"].notna().to_numpy() & cf["recourse"].notna().to_numpy()
    rules = ex.rules_frame(effectiveness=eff)
    assert rules["n_served"].sum() == has.sum()
    via_rule = cf["source"].isin([BOUNDARY, SEARCHED]).to_numpy()
    for row in rules[rules["n_served"] > 0].itertuples():
        sel = ((expl["target"] == row.target) & (expl["rule"] == row.rule)).fillna(False).to_numpy() & has
        assert row.boundary_effectiveness == pytest.approx((cf["source"] == BOUNDARY).to_numpy()[sel].mean())
        assert row.effectiveness == pytest.approx(via_rule[sel].mean())
        # what verifies everyone it serves, counted (adds up to n_served)
        src = cf["source"].astype(object).to_numpy()[sel]
        assert row.n_this_rule == via_rule[sel].sum() and row.n_next_rule == (src == NEXT_RULE).sum()
        assert row.n_minimal_change == (src == MINIMAL_CHANGE).sum()
        assert row.n_this_rule + row.n_next_rule + row.n_minimal_change + row.n_not_verified == row.n_served
    assert list(ex.rules_frame().columns) == list(rules.columns[:-7])  # nothing asked: today's columns
    other = ex.effectiveness(data.iloc[:100], model=owner_model)
    assert other.population == "given rows" and other.n == 100


def test_effectiveness_from_rows_verified_once_equals_a_fresh_check(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    expl, cf = ex.explain(data), ex.counterfactuals(data)
    for rows in (data.index, data.index[::3], data.index[:0]):
        summed = ex.effectiveness(explanations=expl.loc[rows], counterfactuals=cf.loc[rows])
        if not len(rows):
            assert summed.n == 0 and summed.n_needing == 0
            continue
        fresh = ex.effectiveness(data.loc[rows], model=diagonal_model)
        assert summed.to_dict() == dict(fresh.to_dict(), population=summed.population)
    with pytest.raises(ParameterError, match="both"):
        ex.effectiveness(explanations=expl)
    with pytest.raises(SchemaError, match="verify=True"):
        ex.effectiveness(explanations=expl, counterfactuals=ex.counterfactuals(data, verify=False))


def test_effectiveness_json_round_trip_and_files_written_before_issue_24(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    eff = ex.effectiveness()
    doc = json.loads(ex.to_json(effectiveness=eff))
    assert doc["effectiveness"]["n_verified"] == eff.n_verified
    back = TCREx.from_json(json.dumps(doc))
    assert back.effectiveness_.to_dict() == eff.to_dict()
    pd.testing.assert_frame_equal(back.rules_frame(effectiveness=True), ex.rules_frame(effectiveness=eff))
    old = json.loads(json.dumps(doc))
    e = old["effectiveness"]
    for k in ("n_similar", "n_none", "n_optimal_rule", "n_next_rule", "n_minimal_change"):
        e.pop(k)
    e["n_valid"], e["n_verified"] = e["n_verified"], e["n_verified"] - 3  # 3 real examples, counted as valid then
    old["version"] = 3
    legacy = TCREx.from_json(json.dumps(old)).effectiveness_
    assert legacy.n_similar == 3
    doc["effectiveness"]["rules"][0]["effectiveness"] = 2.0
    with pytest.raises(SchemaError, match="effectiveness"):
        TCREx.from_json(json.dumps(doc))


def test_points_reach_a_categorical_model_as_the_cast_of_their_values(data, monkeypatch):
    """Data held as pandas categories (other order, an unused category): the points built from codes directly are
    the frames that decoding to values and casting gives."""
    import tcrex._engine.recourse._verify as verify
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)  # job as text: the schema's categories are sorted
    X = data.iloc[:150].astype({"job": pd.CategoricalDtype(["pilot"] + list(reversed(JOBS)))})
    seen = {}

    def recorded(key):
        def model(Z):
            seen.setdefault(key, []).append(Z)
            return diagonal_model(Z)
        return model

    fast = ex.counterfactuals(X, y_pred=diagonal_model(X), model=recorded("fast"))
    init = verify._Model.__init__

    def without_codes(self, *a):
        init(self, *a)
        assert set(self.as_categorical) == {"job"}
        self.as_categorical = {}
    monkeypatch.setattr(verify._Model, "__init__", without_codes)
    cast = ex.counterfactuals(X, y_pred=diagonal_model(X), model=recorded("cast"))
    pd.testing.assert_frame_equal(fast, cast)
    assert len(seen["fast"]) == len(seen["cast"]) >= 1
    for a, b in zip(seen["fast"], seen["cast"]):
        assert a["job"].dtype == X["job"].dtype
        pd.testing.assert_frame_equal(a, b)


def test_favourable_class_is_named_or_read_never_guessed():
    from tcrex import favourable_class
    assert favourable_class([0, 1]) == 1
    assert favourable_class(["no", "yes"]) == "yes"
    assert favourable_class(["<=50K", ">50K"]) == ">50K"
    assert favourable_class(["approved", "rejected"]) == "approved"
    assert favourable_class(["rejected", "approved"], named="rejected") == "rejected"  # metadata wins
    assert favourable_class([0, 1], named=1.0) == 1
    assert favourable_class(["A", "B"]) is None  # nothing says: the dashboard asks
    assert favourable_class(["yes", "true"]) is None  # two readings: ask
    assert favourable_class([0, 1, 2]) is None  # multi-class has no default
