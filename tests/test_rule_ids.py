"""One rule id per rule across the app, and class names in every renderer.

``TCREx.rule_id`` numbers the rules of every target from 1 ("R1", "R2", …), so rule 0 of target 0 and rule 0 of
target 1 no longer share a name; the rules table, the overview chart, the outline tree, the DOT tree, the icicle,
the rule plots, the summary, the report and the audit show that id. ``class_names`` ({label: name}) replaces
"output = 1" wherever a renderer names a class."""
import re

import pytest

from tcrex import TCREx
from tcrex import figures as F
from tcrex.audit import audit
from tcrex.report import ReportOptions, build_report

from tests.support.data import mixed

NAMES = {1: "approved", 0: "rejected"}


@pytest.fixture(scope="module")
def both():
    """Both directions: two targets (toward 1 and toward 0), each with rules numbered from 0."""
    X, y = mixed(n=800)
    ex = TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y)
    assert len(ex.targets_) == 2 and all(s.n_rules for s in ex.targets_)
    return ex, X, y


def test_rule_ids_are_unique_across_targets_and_in_the_frames(both):
    ex, X, y = both
    rules = ex.rules_frame()
    assert (rules.groupby("target").rule.min() == 0).all()  # per-target indices collide …
    assert rules.rule_id.is_unique  # … the ids do not
    assert list(rules.rule_id) == [f"R{k}" for k in range(1, len(rules) + 1)]
    n0 = ex.targets_[0].n_rules
    assert ex.rule_id(0, 0) == "R1" and ex.rule_id(1, 0) == f"R{n0 + 1}"
    assert ex.rule_id(0, -1) is None and ex.rule_id(0, None) is None
    metas = ex.metarules_frame()
    lookup = rules.set_index(["target", "rule"]).rule_id
    assert all(m.rule_id == lookup[(m.target, m.rule)] for m in metas.itertuples())


def test_metarule_ids_are_numbered_like_rule_ids_across_targets(both):
    """Metarules had only per-target indices ("M0" in both targets, next to rules numbered from R1): now every
    view names them by one id, numbered from M1 over every target in order."""
    ex, X, y = both
    metas = ex.metarules_frame()
    assert (metas.groupby("target").metarule.min() == 0).all()
    assert list(metas.metarule_id) == [f"M{k}" for k in range(1, len(metas) + 1)]
    n0 = len(ex.targets_[0].metarules)
    assert ex.metarule_id(0, 0) == "M1" and ex.metarule_id(1, 0) == f"M{n0 + 1}"
    assert ex.metarule_id(0, -1) is None and ex.metarule_id(0, None) is None
    row = next(i for i, s in enumerate(ex.explain(X, y_pred=y).status) if s == "ok")
    exp = ex.explain_one(X.iloc[[row]], y_pred=[y[row]])
    assert exp.metarule_id == ex.metarule_id(exp.target, exp.metarule)
    assert exp.to_dict()["metarule_id"] == exp.metarule_id
    assert all(a["metarule_id"] == ex.metarule_id(exp.target, a["metarule"]) for a in exp.alternatives)
    # the outline, the DOT tree, the icicle and the metacounterfactual table show the ids, never "M0"
    for t in range(2):
        ids = set(metas[metas.target == t].metarule_id)
        html = F.metarule_tree_html(ex, t)
        assert set(re.findall(r'data-metarule-id="(M\d+)"', html)) == ids
        assert not re.search(r"\bM0\b", html)
        dot = F.metarule_tree_dot(ex, t)
        assert {m for m in re.findall(r"Metarule (M\d+)", dot)} <= ids and "Metarule 0 " not in dot
    table = F.metacounterfactual_table(exp)
    assert set(table["metarule"]) == {a["metarule_id"] for a in exp.alternatives}
    report = build_report(ex, ReportOptions(title="t", data_description="d", data_fingerprint="f",
                                            model_description="m", model_fingerprint="g", params={}))
    assert all(m in report for m in metas.metarule_id)


def test_local_explanations_carry_the_rule_id(both):
    ex, X, y = both
    row = next(i for i, s in enumerate(ex.explain(X, y_pred=y).status) if s == "ok")
    exp = ex.explain_one(X.iloc[[row]], y_pred=[y[row]])
    assert exp.rule_id == ex.rule_id(exp.target, exp.rule)
    assert all(a["rule_id"] == ex.rule_id(exp.target, a["rule"]) for a in exp.alternatives if a["rule"] >= 0)


def test_overview_tree_outline_and_icicle_use_the_same_ids(both):
    ex, X, y = both
    rules = ex.rules_frame()
    fig = F.rules_overview(ex)
    labels = [lab for t in fig.data if t.meta and t.meta.get("kind") == "rules" for lab in t.text]
    assert sorted(labels) == sorted(rules.rule_id) and len(set(labels)) == len(labels)  # no "R0" twice
    for t in range(2):
        ids = set(rules[rules.target == t].rule_id)
        dot = F.metarule_tree_dot(ex, t)
        shown = set(re.findall(r"Metarule M\d+ → (R\d+)", dot))
        assert shown and shown <= ids
        outline = F.metarule_outline(ex, t)

        def leaves(node):
            return [node] if node["kind"] == "leaf" else [x for c in node.get("children", []) for x in leaves(c)]
        for leaf in leaves(outline["root"]):
            assert leaf["rule_id"] == ex.rule_id(t, leaf["rule"])
        html = F.metarule_tree_html(ex, t)
        assert set(re.findall(r"M\d+ → (R\d+)", html)) <= ids and "→ rule " not in html
        icicle = F.metarule_icicle(ex, t)
        assert set(re.findall(r"M\d+ → (R\d+)", " ".join(icicle.data[0].labels))) <= ids


def test_rule_plots_and_summary_use_ids(both):
    ex, X, y = both
    fig = F.rule_plot(ex, 1, "age", "income", X, y)
    names = [t.name for t in fig.data if t.meta and t.meta.get("kind") == "rule"]
    assert names and all(re.match(r"R\d+: ", n) for n in names)
    assert {t.meta["rule_id"] for t in fig.data if t.meta and t.meta.get("kind") == "rule"} <= \
        set(ex.rules_frame().rule_id)
    focus = F.rule_focus_plot(ex, 1, 0, X, y, X.iloc[:5])
    assert focus.layout.title.text.startswith(ex.rule_id(1, 0) + " → ")
    text = ex.summary_text()
    assert f"Rule {ex.rule_id(1, 0)}:" in text and "Rule 0:" not in text


def test_class_names_replace_output_equals_everywhere(both):
    ex, X, y = both
    assert ex.targets_[0].target.describe(NAMES) in ("approved", "rejected")
    assert ex.targets_[0].target.describe() .startswith("output = ")
    text = ex.summary_text(NAMES)
    assert "output =" not in text and "approved" in text and "rejected" in text
    for fig in (F.rules_overview(ex, class_names=NAMES), F.metarule_icicle(ex, 0, class_names=NAMES),
                F.rule_plot(ex, 0, "age", "income", X, y, F.RulePlotOptions(class_names=NAMES)),
                F.rule_focus_plot(ex, 0, 0, X, y, X.iloc[:5], class_names=NAMES)):
        assert "output =" not in fig.to_json(), fig.layout.meta
    assert "output =" not in F.metarule_tree_dot(ex, 0, class_names=NAMES)
    assert "output =" not in F.metarule_tree_html(ex, 0, class_names=NAMES)
    legend = [t.name for t in F.rule_plot(ex, 0, "age", "income", X, y, F.RulePlotOptions(class_names=NAMES)).data
              if t.meta and t.meta.get("kind") == "points"]
    assert sorted(n.replace(" (target)", "") for n in legend) == ["approved", "rejected"]


def test_audit_finding_names_the_target_by_class_name(both):
    ex, X, y = both
    res = audit(ex, X, "owner", y_pred=y, target=1, n_boot=50, class_names=NAMES)
    findings = " ".join(res.findings())
    assert "output =" not in findings and "approved" in findings


def test_report_uses_ids_and_class_names(both):
    ex, X, y = both
    row = next(i for i, s in enumerate(ex.explain(X, y_pred=y).status) if s == "ok")
    exp = ex.explain_one(X.iloc[[row]], y_pred=[y[row]])
    html = build_report(ex, ReportOptions(title="t", data_description="d", data_fingerprint="", model_description="m",
                                          model_fingerprint="", params={}, individuals={"Row": (exp, X.iloc[row])},
                                          explanations=ex.explain(X, y_pred=y), class_names=NAMES))
    assert "output =" not in html
    rules_section = html.split('id="rules"')[1].split("</section>")[0]
    assert "<th>rule</th>" in rules_section and f'<td class="short">{ex.rule_id(1, 0)}</td>' in rules_section
    assert f"<td>{exp.rule_id}</td>" in html  # the individual's rule, by id
