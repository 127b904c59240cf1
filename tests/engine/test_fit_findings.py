"""TCREx.fit_findings: a degenerate explanation is said in plain sentences, each with a suggestion that was fitted
and gives more rules; an explanation with several rules and metarules gets none."""
import json

import pytest

from tcrex import FINDING_KINDS, TCREx

from tests.support.voice_cases import credit_card_case, loans_case

pytestmark = pytest.mark.slow  # several fits per finding's suggestion


def test_credit_card_defaults_are_degenerate_and_the_suggestion_gives_more_rules():
    X, model = credit_card_case()
    ex = TCREx(target=0).fit(X, model)
    assert ex.targets_[0].n_rules == 1  # the degenerate default this finding is about
    findings = ex.fit_findings()
    kinds = {f.kind for f in findings}
    assert {"one_rule", "one_metarule"} <= kinds <= set(FINDING_KINDS)
    f = findings[0]
    assert "status_1" in f.text and f.suggestion
    assert set(f.suggestion) <= {"rho", "n_trees"}
    applied = TCREx(**{**ex.get_params(deep=False), **f.suggestion}).fit(X, model)
    assert applied.targets_[0].n_rules == f.suggested_rules > 1
    assert len(applied.targets_[0].metarules) == f.suggested_metarules > 1
    assert applied.fit_findings(budget=0) == []
    assert f"{f.suggested_rules} rules" in f.suggestion_text()


def test_findings_travel_in_the_rules_json_and_the_json_still_loads():
    X, model = credit_card_case()
    ex = TCREx(target=0).fit(X, model)
    findings = ex.fit_findings()
    doc = json.loads(ex.to_json(findings=findings))
    assert [d["kind"] for d in doc["findings"]] == [f.kind for f in findings]
    assert doc["findings"][0]["suggestion"] == findings[0].suggestion
    back = TCREx.from_json(json.dumps(doc))
    assert back.targets_[0].n_rules == 1
    # restored from JSON: no fit rows, so sentences from given explanations and no suggestion
    again = back.fit_findings(explanations=ex.explain(X, model=model))
    assert {f.kind for f in again} == {f.kind for f in findings} and all(f.suggestion is None for f in again)


def test_unconditional_metarule_serving_most_people_is_a_finding():
    X, model = credit_card_case()
    ex = TCREx(target=0, n_trees=3).fit(X, model)
    explanations = ex.explain(X, model=model)
    m = len(ex.targets_[0].metarules)
    # every person needing recourse sent to a metarule with no condition, if there is one; else none is a finding
    free = [k for k in range(m) if not ex.metarule_conditions(0, k)]
    forced = explanations.copy()
    if free:
        forced["metarule"] = free[0]
        assert "unconditional_metarule" in {f.kind for f in ex.fit_findings(explanations=forced, budget=0)}
    assert "unconditional_metarule" not in {f.kind for f in ex.fit_findings(explanations=explanations, budget=0)}


def test_many_more_verified_beyond_the_rules_is_a_finding():
    X, model = credit_card_case()
    ex = TCREx(target=0, n_trees=3).fit(X, model)
    cf = ex.counterfactuals(X, model=model)
    assert "beyond_rules" not in {f.kind for f in ex.fit_findings(counterfactuals=cf, budget=0)}
    beyond = cf.copy()
    verified = beyond["recourse"].astype(object) == "verified"
    beyond["source"] = beyond["source"].astype(object).where(~verified, "minimal_change")
    found = [f for f in ex.fit_findings(counterfactuals=beyond, budget=0) if f.kind == "beyond_rules"]
    assert found and f"{int(verified.sum()):,} people are verified by a change beyond the rules" in found[0].text


def test_loans_sample_at_the_defaults_gives_no_finding():
    X, model = loans_case()
    ex = TCREx(target=1).fit(X, model)
    assert ex.targets_[0].n_rules > 1
    assert ex.fit_findings(counterfactuals=ex.counterfactuals(X, model=model)) == []
