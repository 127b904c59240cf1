"""Metacounterfactuals checked on the model: a verified alternative has a point the model confirms,
whose "if" part lies inside the alternative's metarule, changing only the features the alternative names; an
unverified one says so and never reads as "no change"."""
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcrex import TCREx
from tcrex.datasets import LOANS_TARGET, load_bundled_loans, load_bundled_model

from tests.support.data import diagonal_model, mixed, owner_model
from tests.support.oracle import point_inside


@pytest.fixture(scope="module")
def data():
    X, _ = mixed(500, seed=1)
    return X


def check_alternatives(ex, x: pd.Series, exp, model) -> tuple[int, int]:
    """Every property the issue states, for one explanation; (verified, alternatives) counted."""
    n_verified = 0
    for alt in exp.alternatives:
        assert isinstance(alt["verified"], bool)
        text = alt["text"].lower()
        if not alt["verified"]:
            assert "no change" not in text and "point" not in alt
            if alt["rule"] is not None and alt["rule"] >= 0:
                assert "the model does not confirm this alternative" in text
            continue
        n_verified += 1
        point, start = alt["point"], alt["if_point"]
        # the model confirms the point, in this person's target
        out = model(pd.DataFrame([point])[list(x.index)].astype(x.to_frame().T.infer_objects().dtypes.to_dict()))
        assert ex.targets_[exp.target].target.contains(np.asarray(out))[0]
        # its "if" part lies inside the alternative's metarule
        assert point_inside(ex.metarule_conditions(exp.target, alt["metarule"]), start)
        # it changes only the features the alternative names, and says which
        named = {c["feature"] for c in alt["metachanges"]} | {c["feature"] for c in alt["changes"]}
        changed = {f for f in x.index if point[f] != x[f]}
        assert changed <= named and changed == set(alt["changed"])
        assert {f for f in x.index if start[f] != x[f]} == {c["feature"] for c in alt["metachanges"]}
        # the advice applied there follows the alternative's rule, and the sentence states the point's values
        assert point_inside(ex.rule_conditions(exp.target, alt["rule"]), point)
        assert "checked on the model" in alt["text"]
        assert alt["paper_text"] != alt["text"]
    return n_verified, len(exp.alternatives)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(model=st.sampled_from([diagonal_model, owner_model]), tau=st.sampled_from([0.8, 0.9]),
       age=st.sampled_from(["free", "increase_only"]), rows=st.lists(st.integers(0, 499), min_size=3, max_size=6))
def test_every_verified_alternative_is_confirmed_inside_its_metarule_and_changes_only_named_features(
        data, model, tau, age, rows):
    ex = TCREx(rho=0.03, tau=tau, constraints={"age": age} if age != "free" else None).fit(data, model)
    for i in rows:
        x = data.iloc[i]
        exp = ex.explain_one(data.iloc[[i]], model=model, n_alternatives=6)
        check_alternatives(ex, x, exp, model)


def test_alternatives_on_the_bundled_model_are_mostly_confirmed_and_carry_their_flag_in_json():
    df = load_bundled_loans()
    X = df.drop(columns=[LOANS_TARGET])
    bundled = load_bundled_model()
    ex = TCREx(rho=0.02, tau=0.9).fit(X, bundled)
    rejected = np.flatnonzero(np.asarray(bundled.predict(X)) == 0)[:12]
    verified = total = 0
    for i in rejected:
        exp = ex.explain_one(X.iloc[[i]], model=bundled)
        v, n = check_alternatives(ex, X.iloc[i], exp, bundled.predict)
        verified, total = verified + v, total + n
        doc = json.loads(json.dumps(exp.to_dict(), default=str))  # plain data: the flag travels with it
        assert [a["verified"] for a in doc["alternatives"]] == [a["verified"] for a in exp.alternatives]
    assert total and verified >= 1


def test_without_a_model_alternatives_are_not_checked_and_keep_the_papers_sentence(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, y_pred=diagonal_model(data))
    exp = ex.explain_one(data.iloc[[0]], y_pred=diagonal_model(data.iloc[[0]]))
    for alt in exp.alternatives:
        assert alt["verified"] is None and "point" not in alt and "checked" not in alt["text"]


def test_an_alternative_the_model_rejects_is_flagged_and_names_no_point(data):
    """A model that rejects everyone outside a narrow region: the rules (fitted on another model's outputs)
    promise alternatives that the model confirms nowhere."""
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)

    def never(Z):
        return np.zeros(len(Z), dtype=int)

    exp = ex.explain_one(data.iloc[[np.flatnonzero(diagonal_model(data) == 0)[0]]], model=never)
    assert exp.alternatives
    for alt in exp.alternatives:
        assert alt["verified"] is False and "point" not in alt
        assert "no change" not in alt["text"].lower()
        assert "does not confirm" in alt["text"] or "No actionable" in alt["text"]
