"""Advice a person can act on: special codes stay codes, advice stays short, protected attributes stay.

* Property tests over random data with declared special codes and random black boxes: no verified point moves a
  feature into or out of a special code unless a transition constraint allows exactly that move; no verified
  advice changes more than ``max_changes`` features; the similar case keeps every immutable feature; a minimal
  change beyond the rules is minimal (brute force over the subsets of what it changes).
* The parameters, their JSON round trip, the generated credit-bureau data set and the constraint suggestions.
"""
from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tcrex import TCREx, sentinel_codes
from tcrex.constraints import Constraints, suggest_constraints
from tcrex.datasets import (CREDIT_BUREAU_CODEBOOK, CREDIT_BUREAU_SPECIAL_CODES, CREDIT_BUREAU_TARGET,
                            make_credit_bureau)
from tcrex.errors import NoValidRuleError, ParameterError, SchemaError
from tcrex.vocabulary import EXAMPLE, MINIMAL_CHANGE, is_verified

PROPERTY = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
CODES = [-9, -8]


# ------------------------------------------------------------------------------------------ random problems
def _problem(seed: int, n_num: int, n_rows: int = 300):
    """Random numeric features, some holding the codes -9/-8 on a share of rows, one categorical feature, and a
    black box that scores a code by its own effect (not its value)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f"x{j}": rng.integers(0, int(rng.integers(4, 30)), n_rows) for j in range(n_num)})
    coded = [f"x{j}" for j in range(n_num) if rng.random() < 0.7] or ["x0"]
    for c in coded:
        rows = rng.random(n_rows) < rng.uniform(0.1, 0.4)
        X.loc[rows, c] = rng.choice(CODES, rows.sum())
    X["kind"] = rng.choice(np.array(["a", "b", "c"], dtype=object), n_rows)
    w = rng.normal(0, 1, n_num)
    code_effect = {c: rng.normal(0, 1.5, len(CODES)) for c in coded}
    kind_effect = dict(zip("abc", rng.normal(0, 1, 3)))
    top = {c: max(1.0, float(X[c].max())) for c in X.columns if c != "kind"}

    def score(frame: pd.DataFrame) -> np.ndarray:
        z = np.zeros(len(frame))
        for j in range(n_num):
            c = f"x{j}"
            v = frame[c].to_numpy(dtype=np.float64)
            part = w[j] * (v / top[c] - 0.5)
            if c in code_effect:
                for k, code in enumerate(CODES):
                    part = np.where(v == code, code_effect[c][k], part)
            z += part
        return z + frame["kind"].map(kind_effect).to_numpy(dtype=np.float64)

    threshold = float(np.median(score(X)))

    def model(frame: pd.DataFrame) -> np.ndarray:
        return (score(frame) > threshold).astype(int)

    return X, coded, model


def _fit(X, model, **params):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return TCREx(rho=0.05, tau=0.75, target=1, **params).fit(X, model)
    except NoValidRuleError:
        return None


def _moves_allowed(orig: float, new: float, codes, transitions: dict) -> bool:
    """Is a move orig -> new allowed: between ordinary values always (constraints aside), else by a transition."""
    a, b = (v if v in codes else "value" for v in (orig, new))
    if a == b == "value" or orig == new:
        return True
    return b in transitions.get(a, [])


def _check(ex, X, model, immutable=(), transitions=None, max_changes=None):
    cf = ex.counterfactuals(X, model=model)
    verified = np.asarray(is_verified(cf))
    codes = {f.name: f.special_codes for f in ex.schema_.features if f.special_codes}
    transitions = transitions or {}
    for c, cs in codes.items():
        for i in np.flatnonzero(verified):
            orig, new = float(X[c].iloc[i]), float(cf[c].iloc[i])
            assert _moves_allowed(orig, new, cs, transitions.get(c, {})), (c, orig, new, cf["text"].iloc[i])
    n = cf["n_changes"].to_numpy()
    if max_changes is not None:
        assert (n[verified] <= max_changes).all()
    for i in np.flatnonzero(verified):  # the advice names exactly the features the point changes
        changed = tuple(c for c in X.columns if X[c].iloc[i] != cf[c].iloc[i])
        assert changed == tuple(cf["changed"].iloc[i])
    similar = (cf["source"] == EXAMPLE).to_numpy()
    for c in immutable:
        assert (cf.loc[similar, c] == X.loc[similar, c]).all(), "a similar case must keep immutable features"
        assert (cf.loc[verified, c] == X.loc[verified, c]).all()
    # a minimal change beyond the rules: no proper subset of what it changes (the rest at the person's values)
    # is confirmed by the model
    minimal = np.flatnonzero((cf["source"] == MINIMAL_CHANGE).to_numpy())
    for i in minimal:
        changed = list(cf["changed"].iloc[i])
        person = X.iloc[[i]]
        subsets = [s for size in range(len(changed)) for s in itertools.combinations(changed, size)]
        points = pd.concat([person] * len(subsets), ignore_index=True)
        for k, s in enumerate(subsets):
            for c in s:
                points.loc[k, c] = cf[c].iloc[i]
        outputs = model.predict(points) if hasattr(model, "predict") else model(points)
        assert not ex.targets_[0].target.contains(np.asarray(outputs, dtype=object)).any(), cf["text"].iloc[i]
    return cf


# ------------------------------------------------------------------------------------------ properties
@pytest.mark.slow
@PROPERTY
@given(seed=st.integers(0, 10_000), n_num=st.integers(2, 4), max_changes=st.sampled_from([1, 2, 3, None]))
def test_no_verified_point_enters_or_leaves_a_special_code_and_none_exceeds_max_changes(seed, n_num, max_changes):
    X, coded, model = _problem(seed, n_num)
    ex = _fit(X, model, special_codes={c: CODES for c in coded}, max_changes=max_changes)
    if ex is None:
        return
    note(f"codes on {coded}")
    assert {f.name: f.special_codes for f in ex.schema_.features if f.special_codes} == {c: CODES for c in coded}
    _check(ex, X, model, max_changes=max_changes)


@pytest.mark.slow
@PROPERTY
@given(seed=st.integers(0, 10_000), n_num=st.integers(2, 4), data=st.data())
def test_a_transition_allows_exactly_the_moves_it_names(seed, n_num, data):
    X, coded, model = _problem(seed, n_num)
    allow = {}
    for c in coded:  # some code -> value / value -> code / code -> code moves
        spec = {}
        for src in data.draw(st.lists(st.sampled_from(CODES + ["value"]), max_size=2, unique=True)):
            spec[src] = data.draw(st.lists(st.sampled_from([t for t in CODES + ["value"] if t != src]),
                                           min_size=1, max_size=2, unique=True))
        if spec:
            allow[c] = spec
    immutable = [c for c in X.columns if c not in coded][:1]
    constraints = {c: {"transitions": spec} for c, spec in allow.items()}
    constraints.update({c: "immutable" for c in immutable})
    ex = _fit(X, model, special_codes={c: CODES for c in coded}, constraints=constraints)
    if ex is None:
        return
    _check(ex, X, model, immutable=immutable, transitions=allow, max_changes=ex.max_changes)


@pytest.mark.slow
@PROPERTY
@given(seed=st.integers(0, 10_000))
def test_the_minimal_change_beyond_the_rules_is_minimal_and_short(seed):
    """Every numeric feature increase-only where the data makes rules scarce: many rows go beyond the rules."""
    X, coded, model = _problem(seed, 4)
    cons = {c: "increase_only" for c in X.columns if c != "kind"}
    ex = _fit(X, model, special_codes={c: CODES for c in coded}, constraints=cons, max_changes=2)
    if ex is None:
        return
    _check(ex, X, model, max_changes=2)


# ------------------------------------------------------------------------------------------ a fixed case
def _bureau_case(n=1500, **params):
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    frame = make_credit_bureau(n, random_state=3)
    X, y = frame.drop(columns=CREDIT_BUREAU_TARGET), frame[CREDIT_BUREAU_TARGET]
    cat = [c for c in X.columns if X[c].dtype == object or isinstance(X[c].dtype, pd.StringDtype)]
    model = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"), cat),
                                                  remainder="passthrough"),
                          RandomForestClassifier(n_estimators=25, max_depth=8, n_jobs=1, random_state=0)).fit(X, y)
    ex = TCREx(target="Good", **params).fit(X.iloc[:1000], model)
    return ex, X.iloc[1000:], model, X.iloc[:1000]


def test_the_generated_credit_bureau_data_has_coded_categories_and_special_codes():
    frame = make_credit_bureau(3000, random_state=1)
    assert frame.equals(make_credit_bureau(3000, random_state=1))
    for f, labels in CREDIT_BUREAU_CODEBOOK.items():
        values = set(frame[f].unique())
        if f in CREDIT_BUREAU_SPECIAL_CODES:  # numeric with its codes, found by the one detection rule
            assert set(labels) <= values and sorted(sentinel_codes(frame[f])[0]) == sorted(labels)
            assert all(isinstance(k, int) for k in labels)
        else:
            assert values <= set(labels), f
    assert set(frame[CREDIT_BUREAU_TARGET]) == {"Good", "Bad"}
    assert 0.2 < (frame[CREDIT_BUREAU_TARGET] == "Bad").mean() < 0.8
    no_record = frame["ExternalRiskEstimate"] == -9
    assert no_record.any() and (frame.loc[no_record, list(CREDIT_BUREAU_SPECIAL_CODES)] == -9).all().all()


def test_detected_codes_are_kept_in_the_schema_and_the_json_and_the_advice_keeps_them():
    ex, X, model, fit_rows = _bureau_case()
    found = {f.name: f.special_codes for f in ex.schema_.features if f.special_codes}
    assert found == CREDIT_BUREAU_SPECIAL_CODES
    cf = _check(ex, X, model, max_changes=3)
    assert is_verified(cf).any()
    doc = json.loads(ex.to_json())
    assert doc["params"]["max_changes"] == 3 and doc["params"]["special_codes"] == "auto"
    assert {f["name"]: f["special_codes"] for f in doc["features"] if "special_codes" in f} == found
    ex2 = TCREx.from_json(ex.to_json())
    assert {f.name: f.special_codes for f in ex2.schema_.features if f.special_codes} == found
    assert ex2.max_changes == 3
    same = ex2.counterfactuals(X, model=model, reference=fit_rows)
    pd.testing.assert_frame_equal(same, cf)


def test_without_special_codes_the_advice_moves_codes_as_numbers():
    """The measurement behind the feature: with codes treated as numbers, verified points do cross them."""
    ex, X, model, _ = _bureau_case(special_codes=None, max_changes=None)
    assert not any(f.special_codes for f in ex.schema_.features)
    cf = ex.counterfactuals(X, model=model)
    ver = np.asarray(is_verified(cf))
    crossed = 0
    for c, codes in CREDIT_BUREAU_SPECIAL_CODES.items():
        a, b = X[c].to_numpy()[ver], cf[c].to_numpy()[ver]
        crossed += int(((a != b) & (np.isin(a, codes) | np.isin(b, codes))).sum())
    assert crossed > 0


def test_max_changes_1_gives_one_change_at_most_and_the_sentence_says_the_limit():
    ex, X, model, _ = _bureau_case(max_changes=1)
    cf = _check(ex, X, model, max_changes=1)
    lacking = cf["recourse"].astype(str).isin(["similar_case", "none"])
    assert lacking.any()
    assert cf["text"][lacking].str.startswith("No verified recourse found within 1 change").all()


def test_parameters_are_checked_with_clear_messages():
    X = pd.DataFrame({"a": np.arange(40) % 7, "b": ["x", "y"] * 20})
    y = (X["a"] > 3).astype(int).to_numpy()
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(ParameterError, match="max_changes"):
            TCREx(max_changes=bad).fit(X, y_pred=y)
    for bad in ("yes", ["a"], {"a": "x"}, {"a": [float("nan")]}):
        with pytest.raises(ParameterError, match="special codes|special_codes"):
            TCREx(special_codes=bad).fit(X, y_pred=y)
    with pytest.raises(ParameterError, match="unknown feature"):
        TCREx(special_codes={"zz": [-9]}).fit(X, y_pred=y)
    with pytest.raises(ParameterError, match="categorical"):
        TCREx(special_codes={"b": [-9]}).fit(X, y_pred=y)
    ex = TCREx(rho=0.1, tau=0.6, special_codes={"a": [0]}, max_changes=None).fit(X, y_pred=y)
    assert ex.schema_.features[0].special_codes == [0]
    with pytest.raises(ParameterError, match="neither one of its special codes"):
        Constraints(ex.schema_, {"a": {"transitions": {5: ["value"]}}})
    no_codes = TCREx(rho=0.1, tau=0.6, special_codes=None).fit(X, y_pred=y).schema_
    with pytest.raises(ParameterError, match="without special codes"):
        Constraints(no_codes, {"a": {"transitions": {0: [1]}}})
    parsed = Constraints(ex.schema_, {"a": {"transitions": {"0": ["value"]}}})
    assert parsed.features[0].transitions == {0: ["value"]}
    codes, moves = parsed.code_moves(0)
    assert codes.tolist() == [0.0] and moves.tolist() == [[True, False], [True, True]]


def test_a_damaged_export_with_bad_special_codes_is_refused():
    X = pd.DataFrame({"a": np.r_[np.arange(30), [-9] * 5]})
    y = (X["a"] > 10).astype(int).to_numpy()
    ex = TCREx(rho=0.1, tau=0.6).fit(X, y_pred=y)
    assert ex.schema_.features[0].special_codes == [-9]
    doc = json.loads(ex.to_json())
    for bad in (["x"], ["nan"], list(range(40)), "abc", [None]):
        doc["features"][0]["special_codes"] = bad
        with pytest.raises(SchemaError, match="special codes"):
            TCREx.from_json(json.dumps(doc))


# ------------------------------------------------------------------------------------------ suggestions
def test_suggestions_recognise_protected_attributes_and_keep_codes_apart():
    frame = make_credit_bureau(800, random_state=2).drop(columns=CREDIT_BUREAU_TARGET)
    found = suggest_constraints(frame, value_labels=CREDIT_BUREAU_CODEBOOK)
    for f in ("Foreign_worker", "Personal_status_and_sex", "Age_band"):
        assert found[f]["constraint"] == "immutable", f
    assert "protected" in found["Foreign_worker"]["reason"] and "age band" in found["Age_band"]["reason"]
    months = found["MSinceMostRecentDelq"]
    assert months["constraint"] == "increase_only" and "special codes −9, −8, −7" in months["reason"]
    # names alone
    names = pd.DataFrame({c: ["p", "q"] * 10 for c in ("CitizenshipStatus", "immigration_status", "family_status",
                                                        "AgeGroup", "foreign_worker", "Savings")})
    got = suggest_constraints(names)
    assert {f for f, s in got.items() if s["constraint"] == "immutable"} == set(names.columns) - {"Savings"}
    # a codebook's labels mark a coded column as protected (its codes alone say nothing)
    coded = pd.DataFrame({"PS": ["A91", "A92", "A93"] * 10})
    assert suggest_constraints(coded) == {}
    labels = {"PS": {"A91": "male: divorced", "A92": "female: married", "A93": "male: single"}}
    assert suggest_constraints(coded, value_labels=labels)["PS"]["constraint"] == "immutable"
    # Adult's relationship values are family status
    rel = pd.DataFrame({"Relationship": ["Husband", "Wife", "Own-child", "Not-in-family"] * 5})
    assert suggest_constraints(rel)["Relationship"]["constraint"] == "immutable"


def test_a_categorical_takes_a_direction_only_when_its_order_is_declared():
    rng = np.random.default_rng(0)
    levels = ["low", "mid", "high"]
    X = pd.DataFrame({"grade": pd.Categorical(rng.choice(levels, 200), categories=levels, ordered=True),
                      "colour": rng.choice(["r", "g"], 200).astype(object), "n": rng.integers(0, 50, 200)})
    y = ((X["grade"].cat.codes >= 1) & (X["n"] > 20)).astype(int).to_numpy()
    ex = TCREx(rho=0.05, tau=0.8, constraints={"grade": "increase_only"}, target=1).fit(X, y_pred=y)
    assert ex.schema_.features[0].ordered
    t = ex.constraints_.transition_matrix(0)
    assert t.tolist() == [[True, True, True], [False, True, True], [False, False, True]]  # ["low", "mid", "high"]
    with pytest.raises(ParameterError, match="without an order"):
        TCREx(rho=0.05, tau=0.8, constraints={"colour": "increase_only"}).fit(X, y_pred=y)
    ex2 = TCREx.from_json(ex.to_json())
    assert ex2.schema_.features[0].ordered
    assert ex2.constraints_.transition_matrix(0).tolist() == t.tolist()
    cf = ex.counterfactuals(X, model=lambda f: ((f["grade"].astype(str).map(
        {"low": 0, "mid": 1, "high": 2}) >= 1) & (f["n"] > 20)).astype(int).to_numpy())
    moved = np.asarray(is_verified(cf)) & (cf["grade"].astype(str) != X["grade"].astype(str)).to_numpy()
    order = {v: i for i, v in enumerate(levels)}
    assert all(order[a] < order[b] for a, b in zip(X["grade"].astype(str)[moved], cf["grade"].astype(str)[moved]))


def test_a_range_that_holds_special_codes_names_them_in_words():
    """A range such as (−9, 3] printed numbers only; it now names the labelled codes it holds (true of
    the range whatever else the data holds), one owner for rules, frames, trees and sentences."""
    from tcrex.text import numeric_condition

    labels = {float(k): v for k, v in CREDIT_BUREAU_CODEBOOK["MSinceMostRecentDelq"].items()}
    codes = sorted(labels)
    said = numeric_condition(-9, 3, True, labels, codes)
    assert said.startswith("in [-8, 3] (including ")
    inside = [v for v in labels if -9 < v <= 3]
    assert inside and all(f"{labels[v]} ({v:g})" in said for v in inside)
    assert f"({-9:g})" not in said.split("including", 1)[1] or -9 in inside  # −9 lies outside (−9, 3]
    assert numeric_condition(-7, np.inf, True, labels, codes) == "≥ -6"  # holds no code: numbers only
    # unlabelled codes are named too: no range spans a code without saying so
    assert numeric_condition(-9, 3, True, None, codes) == "in [-8, 3] (including codes -8 and -7)"
    assert numeric_condition(-8, 3, True, None, codes) == "in [-7, 3] (including the code -7)"
    many = {float(v): f"code {v}" for v in range(-6, 0)}
    assert numeric_condition(-np.inf, 0, True, many, sorted(many)).endswith("and 3 more labelled codes)")
    # an ordinary labelled value is a quantity like any other: "≤ 1" says nothing more of 0 "no late payments"
    ordinary = {0.0: "no late payments on record"}
    assert numeric_condition(-np.inf, 1, True, ordinary, []) == "≤ 1"
    assert numeric_condition(-np.inf, 1, True, {**ordinary, -9.0: "no record"}, [-9.0]) == "≤ 1 (including no record (-9))"
    # the rules of a fitted explainer say it where a range holds a code
    book = {f: CREDIT_BUREAU_CODEBOOK[f] for f in CREDIT_BUREAU_SPECIAL_CODES}
    ex = _bureau_case(value_labels=book)[0]
    texts = " ".join(ex.rules_frame()["conditions"]) + " " + ex.summary_text()
    for f in CREDIT_BUREAU_SPECIAL_CODES:
        for part in texts.split(f"{f} ")[1:]:
            cond = part.split(" and ")[0].split(",")[0]
            codes = {float(k) for k in CREDIT_BUREAU_CODEBOOK[f]}
            if cond.startswith("≤ ") and float(cond[2:].split()[0]) >= min(codes):
                assert "including" in part, (f, part)
