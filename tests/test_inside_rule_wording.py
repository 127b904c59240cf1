"""A metarule that lies inside its rule serves people the model does not put in the target (they are
inside the rule already). Nothing a reader sees says "no change needed" to them; the paper's statement is kept,
labelled as the paper's, and the counts say what verifies them instead."""
import numpy as np
import pytest

from tcrex import TCREx
from tcrex.datasets import LOANS_TARGET, load_bundled_loans, load_bundled_model
from tcrex.figures import metarule_icicle, metarule_outline, metarule_tree_dot, metarule_tree_html
from tcrex.report._recourse import _top_rules
from tcrex.report._tables import _metarules_html

PAPER = "no change needed"


@pytest.fixture(scope="module")
def loans():
    df = load_bundled_loans()
    X = df.drop(columns=[LOANS_TARGET])
    model = load_bundled_model()
    ex = TCREx(rho=0.02, tau=0.9).fit(X, model)
    return ex, X, model


def _inside_metarules(ex):
    metas = ex.metarules_frame()
    inside = metas[metas["change"].map(len).eq(0) & metas["rule_id"].notna()]
    assert len(inside), "the bundled loans have metarules inside their rule (people rejected inside a rule)"
    return metas, inside


def test_frame_text_never_says_no_change_needed_and_keeps_the_papers_statement(loans):
    ex, X, model = loans
    metas, inside = _inside_metarules(ex)
    assert not metas["text"].str.lower().str.contains(PAPER).any()
    for _, m in inside.iterrows():
        assert m["paper_text"].lower().startswith(PAPER)
        assert m["text"].startswith(f"Inside rule {m['rule_id']} already") and "another rule's advice" in m["text"]
    # someone the model rejects is inside such a metarule: explain() puts them there, already inside the rule
    exp = ex.explain(X)
    has = exp["metarule"].notna()
    ids = [ex.metarule_id(int(t), int(m)) for t, m in zip(exp.loc[has, "target"], exp.loc[has, "metarule"])]
    rejected_inside = exp.loc[has, "status"].eq("already_in_rule") & np.isin(ids, list(inside["metarule_id"]))
    assert rejected_inside.any()
    assert PAPER not in ex.summary_text().lower()


def test_tree_outline_and_icicle_never_say_no_change_needed(loans):
    ex, X, model = loans
    _inside_metarules(ex)
    X = ex.explain(X)  # the population, as the figures take it
    said = ""
    for t in range(len(ex.targets_)):
        html = metarule_tree_html(ex, t, population=X)
        said += html
        assert PAPER not in html.lower()
        assert PAPER not in " ".join(metarule_tree_dot(ex, t, population=X, max_label=400).lower().split())
        outline = metarule_outline(ex, t, population=X)
        assert PAPER not in str(outline).lower()
        icicle = metarule_icicle(ex, t, population=X)
        hover = " ".join(str(h) for tr in icicle.data for h in (tr.hovertext or []))
        said += hover
        assert PAPER not in hover.lower()
    assert "Inside rule" in said and "another rule&#x27;s advice" in said or "another rule's advice" in said


def test_report_counts_what_verifies_the_people_each_metarule_serves(loans):
    ex, X, model = loans
    metas, inside = _inside_metarules(ex)
    eff = ex.effectiveness(X, model=model)
    frame = ex.metarules_frame(effectiveness=eff)
    counted = frame[["n_this_rule", "n_next_rule", "n_minimal_change", "n_not_verified"]].sum(axis=1)
    assert (counted == frame["n_served"]).all()
    # inside their rule, nobody the model rejects is verified "through this rule" without any change
    served_inside = frame[frame["metarule_id"].isin(set(inside["metarule_id"])) & (frame["n_served"] > 0)]
    assert len(served_inside) and (served_inside["n_next_rule"] + served_inside["n_minimal_change"]
                                   + served_inside["n_not_verified"] == served_inside["n_served"]).all()
    html = _metarules_html(frame, ex.explain(X), multi_target=len(ex.targets_) > 1)
    # the paper's statement appears only in its own column of the full table, once per such metarule
    assert html.lower().count(PAPER) == len(inside)
    assert "the paper&#x27;s statement" in html or "the paper's statement" in html
    assert "verified through the next rule" in html
    rules = ex.rules_frame(effectiveness=eff).set_index("rule_id")
    for s in _top_rules(ex, ex.explain(X), effectiveness=eff):
        if "its own advice is verified" in s:
            assert "only a real example" not in s
            rid = s.split("Rule ", 1)[1].split(" ", 1)[0]
            r = rules.loc[rid]
            if int(r["n_next_rule"]):
                assert f"{int(r['n_next_rule']):,} through the next rule" in s


def test_tree_and_outline_count_what_verifies_the_people_each_metarule_serves(loans):
    ex, X, model = loans
    metas, inside = _inside_metarules(ex)
    explained = ex.explain(X)
    cf = ex.counterfactuals(X, model=model)
    population = explained.assign(source=cf["source"].astype(object))
    eff = ex.metarules_frame(effectiveness=ex.effectiveness(X, model=model)).set_index("metarule_id")
    for t in range(len(ex.targets_)):
        outline = metarule_outline(ex, t, population=population, max_leaves=10_000)
        leaves = []

        def walk(node):
            if node["kind"] == "leaf":
                leaves.append(node)
            for child in node.get("children", []):
                walk(child)

        walk(outline["root"])
        for leaf in leaves:
            row = eff.loc[leaf["metarule_id"]]
            if not int(row["n_served"]):
                assert not leaf["checked"]
                continue
            # the same counts as the effectiveness frame, in words
            expected = [f"{int(row['n_this_rule'])} verified through this rule" if int(row["n_this_rule"]) else None,
                        f"{int(row['n_next_rule'])} through the next rule" if int(row["n_next_rule"]) else None,
                        f"{int(row['n_not_verified'])} not verified" if int(row["n_not_verified"]) else None]
            for part in filter(None, expected):
                assert part in leaf["checked"], (leaf["metarule_id"], leaf["checked"])
            if leaf["metarule_id"] in set(inside["metarule_id"]):
                assert "verified through this rule" not in leaf["checked"]
        dot = metarule_tree_dot(ex, t, population=population, max_label=400)
        assert "through the next rule" in dot or not any(leaf["checked"] for leaf in leaves)


def test_report_heads_a_person_with_the_recommended_rule_and_flags_the_alternatives(loans):
    from tcrex.report._recourse import _individual_html

    ex, X, model = loans
    rejected = np.flatnonzero(np.asarray(model.predict(X)) == 0)
    for i in rejected[:400]:
        exp = ex.explain_one(X.iloc[[i]], model=model)
        if exp.recommended_rule_id and exp.recommended_rule_id != exp.rule_id:
            break
    else:
        pytest.fail("some rejected row of the loans sample is served by the next rule")
    html = _individual_html(ex, "Row", exp, X.iloc[i])
    head = (f"Rule {exp.recommended_rule_id} — the paper&#x27;s optimal rule {exp.rule_id} is not confirmed by the "
            "model here")
    assert head in html or head.replace("&#x27;", "'") in html
    assert f"<th>rule</th><td>{exp.recommended_rule_id}</td>" in html
    assert f"{exp.rule_id}, not confirmed by the model here" in html
    for alt in exp.alternatives:
        mark = "✓ " if alt["verified"] else "✗ "
        assert mark in html
    assert "no change needed" not in html.lower()


def test_metacounterfactuals_are_framed_as_the_persons_past_not_advice():
    from tcrex.text import framed_alternative

    said = framed_alternative("If income were 35.1 and debt_to_income were 0.24: change age to 40")
    assert said == ("Had income been 35.1 and debt_to_income been 0.24 (not something you can change now), the "
                    "advice would be: change age to 40")
    assert framed_alternative("If status_1 ≥ 2, status_2 ≥ 2: keep credit_limit ≥ 105001").startswith(
        "Had status_1 been ≥ 2, status_2 been ≥ 2 (not something you can change now)")
    assert framed_alternative("No other metarule") == "No other metarule"
