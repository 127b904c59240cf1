"""The paper's Figure 1 logic on a hand-built 2-D example."""
import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx

from tests.support.data import figure1


@pytest.fixture(scope="module")
def explainer():
    X, y = figure1()
    return TCREx(rho=0.02, tau=0.9).fit(X, y_pred=y)


def _blue_target(ex):
    return next(t for t, s in enumerate(ex.targets_) if s.target.classes == ("blue",))


def test_two_blue_rules_are_found(explainer):
    rules = explainer.rules_frame()
    blue = rules[rules.target == _blue_target(explainer)]
    assert sorted(blue.conditions) == ["x1 > 3.125 and x2 > 5.125", "x1 ≤ 1.125 and x2 ≤ 5.125"]
    assert blue.accuracy.min() == 1.0


def test_sparsity_beats_feasibility(explainer):
    # A = (2, 2): the small "orange" rule needs one change, the larger "green" rule two; orange wins.
    X = pd.DataFrame({"x1": [2.0], "x2": [2.0]})
    out = explainer.explain(X, y_pred=["red"]).iloc[0]
    sol = explainer.targets_[out.target]
    assert out.changes == 1
    assert sol.rule_n[out.rule] == sol.rule_n.min()  # the less feasible rule was chosen for sparsity
    assert out.text == "Change x1 to ≤ 1.125, while keeping x2 ≤ 5.125"


def test_feasibility_breaks_ties_in_changes(explainer):
    # (2, 8) and (6, 2) need one change to either rule: the more feasible (green) rule wins
    X = pd.DataFrame({"x1": [2.0, 6.0], "x2": [8.0, 2.0]})
    out = explainer.explain(X, y_pred=["red", "red"])
    sol = explainer.targets_[out.target.iloc[0]]
    assert (out.changes == 1).all()
    assert (out.rule == int(np.argmax(sol.rule_n))).all()


def test_same_rule_different_changes_in_different_metarules(explainer):
    X = pd.DataFrame({"x1": [2.0, 6.0], "x2": [8.0, 2.0]})
    out = explainer.explain(X, y_pred=["red", "red"])
    assert out.rule.iloc[0] == out.rule.iloc[1]
    assert out.metarule.iloc[0] != out.metarule.iloc[1]
    assert out.text.iloc[0] == "Change x1 to > 3.125, while keeping x2 > 5.125"
    assert out.text.iloc[1] == "Change x2 to > 5.125, while keeping x1 > 3.125"


def test_three_metarules_as_in_the_figure(explainer):
    metas = explainer.metarules_frame()
    blue = metas[metas.target == _blue_target(explainer)]
    assert sorted(blue.conditions) == ["x1 > 3.125 and x2 ≤ 5.125", "x1 ≤ 3.125 and x2 ≤ 5.125", "x2 > 5.125"]
    assert blue.rule.nunique() == 2


def test_metacounterfactual_for_point_a(explainer):
    e = explainer.explain_one({"x1": 2.0, "x2": 2.0}, y_pred="red")
    assert e.status == "ok" and e.n_changes == 1
    assert e.counterfactual == {"x1": 1.125, "x2": 2.0}
    assert e.example is not None and e.example["x1"] <= 1.125 and e.example["x2"] <= 5.125
    alts = e.alternatives
    assert len(alts) == 2 and all(a["n_metachanges"] == 1 for a in alts)
    assert all(a["rule"] != e.rule for a in alts)
    assert {a["text"] for a in alts} == {
        "If x1 were > 3.125: change x2 to > 5.125, while keeping x1 > 3.125",
        "If x2 were > 5.125: change x1 to > 3.125, while keeping x2 > 5.125",
    }


def test_feature_actions_split_change_and_keep(explainer):
    X = pd.DataFrame({"x1": [2.0, 2.0, 6.0], "x2": [2.0, 8.0, 2.0]})
    actions = explainer.feature_actions(X, y_pred=["red"] * 3)
    assert actions.to_dict("list") == {"x1": ["change", "change", "keep"], "x2": ["keep", "keep", "change"]}


def test_nearest_points_into_a_chosen_rule(explainer):
    t = _blue_target(explainer)
    rules = explainer.rules_frame()
    big = int(rules[(rules.target == t) & (rules.conditions == "x1 > 3.125 and x2 > 5.125")].rule.iloc[0])
    pts = explainer.nearest_points(pd.DataFrame({"x1": [2.0, 6.0], "x2": [2.0, 9.0]}), t, big)
    assert pts.x1.iloc[0] == np.nextafter(3.125, np.inf) and pts.x2.iloc[0] == np.nextafter(5.125, np.inf)
    assert pts.iloc[1].tolist() == [6.0, 9.0]  # already inside: unchanged
