"""Wording owned by tcrex.text and used everywhere: change phrases, counts, values in messages, trivial rules, the
per-target text summary, and the audit's quartile labels (true of the values they name, never overlapping)."""
import re

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.errors import ParameterError
from tcrex.intake import read_table, target_findings
from tcrex.text import change_phrase, format_value, is_trivial_rule, pluralise


# ------------------------------------------------------------------------------------------------ change phrases
@pytest.mark.parametrize("condition, expected", [
    ("in [5, 8]", "x to a value from 5 to 8"),
    ("in (1.5, 3]", "x to a value above 1.5 and at most 3"),
    ("in {A, B}", "x to one of {A, B}"),
    ("not in {A, B}", "x to anything outside {A, B}"),
    ("= Married", "x to Married"),
    ("≠ Private", "x to anything but Private"),
    ("≥ 5", "x to ≥ 5"),
    ("> 2.5", "x to > 2.5"),
])
def test_change_phrase_reads_for_every_condition_form(condition, expected):
    assert change_phrase("x", condition) == expected
    assert " to in " not in change_phrase("x", condition)


def test_change_phrase_as_a_hypothesis_keeps_the_condition():
    assert change_phrase("age", "in [5, 8]", verb="were") == "age were in [5, 8]"
    assert change_phrase("status", "= Married", verb="were") == "status were Married"


def test_recourse_text_of_an_integer_interval_reads_naturally():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"n": rng.integers(0, 20, 800), "z": rng.uniform(0, 1, 800)})
    y = ((X["n"] >= 5) & (X["n"] <= 8)).astype(int).to_numpy()
    ex = TCREx(rho=0.02, tau=0.9, target=1).fit(X, y_pred=y)
    texts = ex.explain(X, y_pred=y)["text"].astype(str)
    assert not texts.str.contains(" to in ").any()
    assert texts.str.contains("n to a value from 5 to 8").any()


# ------------------------------------------------------------------------------------------------ counts and values
def test_pluralise():
    assert pluralise(1, "individual") == "1 individual"
    assert pluralise(np.int64(2), "individual") == "2 individuals"
    assert pluralise(0, "rule") == "0 rules"
    assert pluralise(1234, "row") == "1,234 rows"
    assert pluralise(2, "person", "people") == "2 people"


def test_format_value_gives_plain_numbers():
    assert format_value(np.int64(5)) == "5"
    assert format_value(np.float64(2.5)) == "2.5"
    assert format_value("FR") == "'FR'"
    assert format_value(None) == "missing"


def test_intake_messages_name_plain_numbers_not_numpy_reprs():
    csv = "a,b,y\n" + "".join(f"{i},5,3\n" for i in range(30))
    rep = read_table(csv.encode(), "t.csv")
    text = " ".join(rep.messages)
    assert "'b' has the same value (5) in every row" in text and "np." not in text
    [finding] = target_findings(rep.frame, "y")
    assert "single value (3)" in finding.message and "np." not in finding.message


def test_audit_findings_say_1_individual():
    from tcrex.audit import audit
    from tcrex.datasets import make_recourse_groups

    df = make_recourse_groups(1200, random_state=1)
    X = df.drop(columns=["approved", "group"])
    y = df["approved"].to_numpy()
    ex = TCREx(target=1, grower="exact").fit(X, y_pred=y)
    groups = df["group"].astype(object).copy()
    groups.iloc[np.flatnonzero(y == 0)[0]] = "C"  # one individual needing recourse in group C
    text = " ".join(audit(ex, X, groups, y_pred=y, n_boot=100).findings())
    assert "only 1 individual with group = C needs recourse" in text
    assert "1 individuals" not in text


# ------------------------------------------------------------------------------------------------ trivial rules
@pytest.fixture(scope="module")
def trivial():
    """A model that gives 1 to 92 % of the inputs: the rule "any input" is valid for target 1."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x1": rng.integers(0, 100, 600), "x2": rng.uniform(0, 1, 600)})
    y = (X["x1"] >= 7).astype(int).to_numpy()
    ex = TCREx(target=1).fit(X, y_pred=y)
    rules = ex.rules_frame()
    assert rules["complexity"].map(is_trivial_rule).any()
    return ex, X, y


def test_trivial_rule_is_flagged_in_the_text_summary(trivial):
    ex, X, y = trivial
    line = next(s for s in ex.summary_text().splitlines() if "Rule R1: any input" in s)
    assert "no condition" in line and "not advice" in line


def test_trivial_rule_is_left_out_of_the_report_top_rules(trivial):
    from tcrex.report._recourse import _top_rules

    ex, X, y = trivial
    top = _top_rules(ex, ex.explain(X, y_pred=y))
    assert not any(t.startswith("To reach") and "have any input" in t for t in top)
    assert any("is left out: no condition" in t for t in top)


def test_row_sent_to_a_trivial_rule_is_not_told_it_is_inside_the_recommended_rule(trivial):
    """A row whose model output is 0 but whose recommended rule is "any input" has nothing to change by the rule:
    its sentence says so instead of "already inside the recommended rule" (which reads as advice)."""
    from tcrex.vocabulary import ALREADY_IN_RULE

    ex, X, y = trivial
    exp = ex.explain(X, y_pred=y)
    rows = exp[exp["status"] == ALREADY_IN_RULE]
    assert len(rows)  # the fixture's model gives 0 to 8 % of the rows, all inside "any input"
    assert set(rows["text"]) == {"No change suggested: the recommended rule has no condition (it covers every "
                                 "input), although the model output is not in the target"}
    one = ex.explain_one(X.iloc[int(np.flatnonzero(y == 0)[0])], y_pred=0)
    assert one.text.startswith("No change suggested")


# ------------------------------------------------------------------------------------------------ summary per target
def test_summary_text_of_one_target():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.uniform(0, 10, 600), "b": rng.uniform(0, 10, 600)})
    y = (X["a"] + X["b"] > 10).astype(int).to_numpy()
    ex = TCREx().fit(X, y_pred=y)  # both directions: two targets
    assert len(ex.targets_) == 2
    one = ex.summary_text(target=1)
    # named by its outcome, never by the internal index of the target entry
    assert one.startswith("Toward output = 0 —") and "output = 1" not in one and "Target" not in one
    assert one in ex.summary_text()
    for bad in (2, -1, "0", True):
        with pytest.raises(ParameterError, match="target must be the index"):
            ex.summary_text(target=bad)


# ------------------------------------------------------------------------------------------------ audit bins
def _label_holds(label: str, v: float) -> bool:
    m = re.fullmatch(r"(-?[\d.]+)–(-?[\d.]+)", label)
    if m:
        return float(m.group(1)) <= v <= float(m.group(2))
    m = re.fullmatch(r"over (-?[\d.e+-]+) to (-?[\d.e+-]+)", label)
    if m:
        return float(m.group(1)) < v <= float(m.group(2))
    m = re.fullmatch(r"(-?[\d.e+-]+) to (-?[\d.e+-]+)", label)
    if m:
        return float(m.group(1)) <= v <= float(m.group(2))
    return label == str(int(v)) if float(v).is_integer() else False


@pytest.mark.parametrize("values", [
    pd.Series(np.arange(18, 91)),  # ages 18..90
    pd.Series(np.random.default_rng(0).integers(18, 91, 500)),
    pd.Series(np.random.default_rng(1).normal(50, 12, 500).round(3)),
])
def test_audit_quartile_labels_do_not_overlap_and_are_true(values):
    from tcrex.ui.pages.audit import bin_labels

    bins, edges = pd.qcut(values, 4, duplicates="drop", retbins=True)
    labels = bin_labels(edges, values)
    assert len(set(labels)) == len(labels) == len(edges) - 1
    for v, code in zip(values, bins.cat.codes):
        assert _label_holds(labels[code], float(v)), (labels[code], v)
    if (values == values.round()).all():
        assert all("to" not in lab for lab in labels)  # whole numbers: "18–37", "38–56"
        assert labels[0].startswith(str(int(values.min())))


# ------------------------------------------------------------------------------------------------ counts in figures
def test_counts_in_the_summary_and_figures_are_pluralised_not_hedged(trivial):
    """"1 individual", "2 changes", never "individual(s)": counts a stakeholder reads go through pluralise; the
    text summary names each metarule by its id next to its rule."""
    from tcrex import figures as F

    ex, X, y = trivial
    summary = ex.summary_text()
    assert "(s)" not in summary
    assert re.search(r"\(M1 → R1, (the rules alone ask up to \d+ changes?|inside the rule \(the rules alone ask "
                     r"nothing\))[ )]", summary) and "1 rule, 1 metarule, 1 grid cell" in summary
    exp = ex.explain(X, y_pred=y)
    def caption(fig):
        return fig.layout.title.text + " " + (fig.layout.title.subtitle.text or "")

    one = F.changes_histogram(exp.iloc[:1])
    assert "1 individual;" in caption(one) and "(s)" not in caption(one)
    many = F.changes_histogram(exp)
    assert f"{len(exp):,} individuals;" in caption(many)
    bars = F.change_keep_bars(ex.feature_actions(X, y_pred=y))
    assert f"{len(X):,} individuals" in caption(bars) and "(s)" not in caption(bars)
    overview = F.rules_overview(ex)
    assert all("(s)" not in h for t in overview.data for h in (t.hovertext or []))


def test_audit_finding_on_a_model_feature_suggests_marking_it_immutable_in_words():
    """The finding that a grouping column is a model feature says what to do in words, with no code to paste (it
    printed ``constraints={'n_late_payments': 'immutable'}})`` with a stray brace; the dashboard now offers a
    button beside it)."""
    from tcrex.audit import audit
    from tcrex.datasets import make_loans

    df = make_loans(2500, random_state=0)
    X, y = df.drop(columns=["approved"]), df["approved"].to_numpy()
    ex = TCREx(rho=0.02, tau=0.9, target=1).fit(X, y_pred=y)
    found = [f for f in audit(ex, X, "n_late_payments", y_pred=y, n_boot=20).findings() if "immutable" in f]
    assert len(found) == 1
    assert "consider marking it immutable" in found[0] and "constraints=" not in found[0]
    assert found[0].count("(") == found[0].count(")") and "}" not in found[0]


def test_summary_text_names_a_metarule_without_an_actionable_rule():
    """No "nan" (or "up to 0 changes") for the metarule where constraints forbid every rule."""
    from tests.support.data import figure1

    X, y = figure1()
    ex = TCREx(rho=0.02, tau=0.9, constraints={"x1": "immutable"}).fit(X, y_pred=y)
    assert ex.metarules_frame().rule.isna().any()
    text = ex.summary_text()
    assert "nan" not in text.lower()
    line = next(s for s in text.splitlines() if "no actionable recourse" in s)
    assert re.search(r"\(M\d+ → no actionable rule\)$", line), line


def test_regression_default_threshold_is_short_and_splits_the_fit_outputs_as_the_mean():
    """The default regression split printed 16 digits (``output > 5.817982904952789``): it is now the shortest
    number between the fit outputs on either side of the mean, so every fit output is on the same side."""
    rng = np.random.default_rng(7)
    X = pd.DataFrame({"a": rng.uniform(0, 10, 700), "b": rng.uniform(0, 1, 700)})
    y = (X.a * 1.1 + X.b * 0.37 + rng.normal(0, 0.3, 700)).to_numpy()
    ex = TCREx(rho=0.05, tau=0.8).fit(X, y_pred=y)
    mu = float(np.mean(y))
    (low, _), (_, high) = (s.target.interval for s in ex.targets_)
    assert low == high
    assert ((y > low) == (y > mu)).all()
    assert len(repr(low)) <= 6, low
    text = ex.summary_text()
    assert re.search(r"output > \d+\.?\d{0,3} ", text), text.splitlines()[0]
