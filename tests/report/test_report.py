"""The HTML report: one self-contained, offline, escaped document."""
import re
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex import figures as F
from tcrex.report import ReportOptions, build_report, fingerprint_bytes, fingerprint_frame

from tests.support.data import mixed

WHEN = datetime(2024, 7, 21, 9, 30, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def report(fitted):
    ex, X, y = fitted
    out = ex.explain(X, y_pred=y)
    figures = {
        "Rules overview": F.rules_overview(ex),
        "Changes <per> individual": F.changes_histogram(out),
        "Rule plot": F.rule_plot(ex, 0, "age", "income", X, y, F.RulePlotOptions(individual=X.iloc[1],
                                                                                 individual_y=y[1])),
    }
    tables = {"Explanations": out.head(20), "Many rows": pd.DataFrame({"n": range(600)})}
    html = build_report(ex, ReportOptions(title='Loans <script>alert("t")</script>',
                                          data_description="4 columns & 400 rows",
                                          data_fingerprint=fingerprint_frame(X),
                                          model_description="<b>predictions</b> column",
                                          model_fingerprint=fingerprint_bytes(b"model bytes"),
                                          params={"rho": 0.03, "tau": 0.85, "<img src=x onerror=alert(1)>": "<i>v</i>"},
                                          figures=figures, tables=tables, generated_at=WHEN))
    return html, figures, X


def test_one_self_contained_html_document(report):
    html, figures, X = report
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert html.count("<html") == 1 and html.count("</body>") == 1
    for i in range(len(figures)):
        assert f'id="figure-{i}"' in html
    # plotly.js inlined exactly once; no external scripts, stylesheets or CDN links
    assert len(re.findall(r"plotly\.js v\d+\.\d+\.\d+", html)) == 1
    assert not re.search(r"<script[^>]*\ssrc\s*=", html, re.I)
    assert not re.search(r"<link[^>]*href\s*=\s*[\"']?https?:", html, re.I)
    assert not re.search(r"@import|url\(\s*[\"']?https?:", html, re.I)


def test_fingerprints_parameters_date_summary_and_tables(report, fitted):
    html, _, X = report
    ex = fitted[0]
    assert fingerprint_frame(X) in html and fingerprint_bytes(b"model bytes") in html
    assert f"sha256:{fingerprint_frame(X)[:16]}" in html
    assert "2024-07-21T09:30:00+00:00" in html
    assert "<th>rho</th><td>0.03</td>" in html and "<th>tau</th><td>0.85</td>" in html
    summary_line = ex.summary_text().splitlines()[0]
    assert summary_line.replace("<", "&lt;").replace(">", "&gt;") in html
    assert html.count("<table>") >= 4  # rules, metarules, two tables
    assert "First 500 of 600 rows." in html


def test_user_strings_are_escaped(report):
    html, _, _ = report
    assert "<script>alert" not in html and "&lt;script&gt;alert(&quot;t&quot;)" in html
    assert "<script>job" not in html and "&lt;script&gt;job&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<b>predictions</b>" not in html and "&lt;i&gt;v&lt;/i&gt;" in html
    assert "Changes &lt;per&gt; individual" in html


def test_metarule_trees_are_static_outlines(report, fitted):
    html, _, _ = report
    ex = fitted[0]
    assert html.count('<div class="tcrex-outline">') == len(ex.targets_)
    assert "<svg" not in html.split('id="figures"')[0]  # no wide SVG picture to clip
    for t, sol in enumerate(ex.targets_):
        assert f"Toward {sol.target.describe()}" in html and f"Target {t}:" not in html  # no internal index


def test_dot_argument_and_non_tree_fallback(fitted):
    ex, X, y = fitted
    common = dict(title="t", data_description="d", data_fingerprint="ab", model_description="m",
                  model_fingerprint="cd", params={}, figures={}, tables={}, generated_at=WHEN)
    none = build_report(ex, ReportOptions(dot={}, **common))
    assert "<svg" not in none and "plotly" not in none.lower()
    odd = build_report(ex, ReportOptions(dot={"two parents": "digraph { a -> c; b -> c; }"}, **common))
    assert "not a simple tree" in odd and "<svg" not in odd and "digraph { a -&gt; c; b -&gt; c; }" in odd
    own = build_report(ex, ReportOptions(dot={"tree 0": F.metarule_tree_dot(ex, 0)}, **common))
    assert own.count("<svg") == 1


def test_report_is_deterministic(fitted):
    ex, X, y = fitted
    args = dict(title="t", data_description="d", data_fingerprint="ab", model_description="m",
                model_fingerprint="cd", params={"a": 1}, figures={"o": F.rules_overview(ex)},
                tables={"r": ex.rules_frame()}, generated_at=WHEN)
    assert build_report(ex, ReportOptions(**args)) == build_report(ex, ReportOptions(**args))


def test_fingerprint_frame_changes_with_the_data(fitted):
    X = fitted[1]
    assert fingerprint_frame(X) == fingerprint_frame(X.copy())
    changed = X.copy()
    changed.iloc[0, 0] += 1
    assert fingerprint_frame(changed) != fingerprint_frame(X)
    assert len(fingerprint_frame(X)) == 64


# ------------------------------------------------------------------------------------------------ for stakeholders
def _stakeholder_report(ex, X, y, rows=(7,), **extra):
    out = ex.explain(X, y_pred=y)
    individuals = {f"Row {r}": (ex.explain_one(X.loc[[r]], y_pred=[y[r]]), X.loc[r]) for r in rows}
    return build_report(ex, ReportOptions(title="t", data_description="loans, 400 rows", data_fingerprint="ab",
                                          model_description="a model", model_fingerprint="cd",
                                          params={"flag": True, "n": np.int64(3)}, generated_at=WHEN,
                                          individuals=individuals, explanations=out,
                                          actions=ex.feature_actions(X, y_pred=y), **extra))


def _values(X, r):
    return [str(v) if not isinstance(v, float) else f"{v:.4g}" for v in X.loc[r]]


def test_executive_summary_comes_first(fitted):
    ex, X, y = fitted
    html = _stakeholder_report(ex, X, y)
    sections = re.findall(r'<section id="([^"]+)"', html)
    # an executive page, one short section per question, then the appendix: the glossary, the person chosen, the
    # rules; what the report contains is part of the first page
    assert sections[:7] == ["executive-summary", "who-gets-recourse", "how-hard", "glossary", "individuals", "rules",
                            "metarules"]
    main, appendix = html.split('<details class="appendix" id="appendix">')
    assert '<section id="how-hard"' in main and '<section id="individuals">' in appendix
    head = html.split('<section id="individuals">')[0]
    assert "This report contains" in head
    for word in ("a model", "loans, 400 rows", "outcome", "individuals explained",
                 "Top rules in plain words", "To reach "):
        assert word in head, word
    for sol in ex.targets_:
        assert _e(sol.target.describe()) in head


def _e(s):
    import html
    return html.escape(s, quote=True)


def test_the_chosen_individual_appears_not_row_0(fitted):
    ex, X, y = fitted
    html = _stakeholder_report(ex, X, y, rows=(123,))
    assert "Row 123" in html and "Row 0" not in html
    exp = ex.explain_one(X.loc[[123]], y_pred=[y[123]])
    assert _e(exp.text) in html
    section = re.sub(r"<td[^>]*>", "<td>", html.split('<section id="individuals">')[1].split("</section>")[0])
    for v in _values(X, 123):
        assert f"<td>{_e(v)}</td>" in section
    two = _stakeholder_report(ex, X, y, rows=(5, 9))
    assert "Row 5" in two and "Row 9" in two and "Chosen individuals" in two


def test_no_row_data_unless_asked(fitted):
    ex, X, y = fitted
    html = _stakeholder_report(ex, X, y, rows=(11,))
    assert "does <b>not</b> contain the uploaded table" in html
    assert 'id="rows"' not in html
    # another individual's exact feature values are not in the report
    probe = X.drop(index=11)
    unique_incomes = [f"{v:.4g}" for v in probe["income"] if "." in f"{v:.4g}" and f"{v:.4g}" not in _values(X, 11)]
    assert len(unique_incomes) > 100
    cells = re.sub(r"<td[^>]*>", "<td>", html)
    leaked = [v for v in unique_incomes if f"<td>{v}</td>" in cells]
    assert not leaked, leaked
    with_rows = build_report(
        ex, ReportOptions(title="t", data_description="d", data_fingerprint="ab", model_description="m",
                          model_fingerprint="cd", params={}, generated_at=WHEN, rows=X, include_rows=True))
    assert 'id="rows"' in with_rows and "row-level data: the first 400 of 400 rows" in with_rows
    assert "does <b>not</b> contain" not in with_rows


def test_size_is_bounded_and_no_scripts_by_default(fitted):
    ex, X, y = fitted
    html = _stakeholder_report(ex, X, y)
    assert len(html.encode()) < 300_000
    assert "<script" not in html.lower().replace("&lt;script", "")
    assert "plotly" not in html.lower()


def test_values_are_formatted_for_readers(fitted):
    ex, X, y = fitted
    html = _stakeholder_report(ex, X, y)
    assert ">True<" not in html and ">False<" not in html
    assert "np.int64" not in html and "np.float64" not in html
    assert "<th>flag</th><td>yes</td>" in html and "<th>n</th><td>3</td>" in html


def test_rule_effectiveness_sentence_says_what_the_share_leaves_out():
    """A rule's "works" share leaves out individuals only a real example helps, and a real example is also a point
    inside the rule: the stakeholder sentence says so rather than "a point inside it works for 99 %"."""
    from tcrex.report._recourse import _top_rules

    X, _ = mixed(n=1500, seed=3)

    def model(frame):  # rule-like with a wavy income threshold, so some nearest points of a rule fail
        wavy = 40 + 6 * np.sin(frame.age.to_numpy() / 3.0)
        return (((frame.income > wavy) & frame.job.isin(["manager", "teacher"]))
                | ((frame.age > 50) & (frame.owner == "yes"))).astype(int).to_numpy()

    ex = TCREx(rho=0.03, tau=0.85, target=1).fit(X, model)
    eff = ex.effectiveness(X, model=model)
    rules = ex.rules_frame(effectiveness=eff).set_index("rule_id")
    sentences = [s for s in _top_rules(ex, ex.explain(X), effectiveness=eff) if "Checked on the model" in s]
    assert sentences
    for s in sentences:
        rid = re.search(r"Rule (R\d+)", s).group(1)
        r = rules.loc[rid]
        assert f"its own advice is verified for {r['effectiveness']:.0%} of the {int(r['n_served']):,} it is " \
               "the optimal rule for" in s
        # the sentence agrees with the summary's counts: the others are counted by what verifies them
        assert "only a real example from the data" not in s
        others = int(r["n_served"]) - int(r["n_this_rule"])
        if int(r["n_next_rule"]):
            assert f"of the other {others:,}, {int(r['n_next_rule']):,} through the next rule" in s
        if int(r["n_not_verified"]):
            assert f"{int(r['n_not_verified']):,} have no verified recourse" in s
        if not others:
            assert "of the other" not in s


def test_report_built_from_the_api_does_not_speak_for_the_dashboard():
    """The effectiveness sentence of a report built with build_report() said "the dashboard recommends"."""
    X, _ = mixed(n=800, seed=5)

    def model(frame):
        wavy = 40 + 6 * np.sin(frame.age.to_numpy() / 3.0)
        return (((frame.income > wavy) & frame.job.isin(["manager", "teacher"]))
                | ((frame.age > 50) & (frame.owner == "yes"))).astype(int).to_numpy()

    ex = TCREx(rho=0.03, tau=0.85, target=1).fit(X, model)
    eff = ex.effectiveness(X, model=model)
    html = build_report(ex, ReportOptions(title="API report", data_description="d",
                                          data_fingerprint=fingerprint_frame(X), model_description="m",
                                          model_fingerprint=fingerprint_bytes(b"m"), params={},
                                          explanations=ex.explain(X), effectiveness=eff, generated_at=WHEN))
    assert "Checked on the model" in html
    assert "dashboard" not in html.lower()


# ------------------------------------------------------------------------------------------------ plain words
def _reader_text(html: str) -> str:
    """What a person reads: the document without its style sheet and scripts."""
    return re.sub(r"<(style|script)\b.*?</\1>", "", html, flags=re.S)


def test_numbers_and_headings_are_for_people(fitted):
    from tcrex.audit import audit

    ex, X, y = fitted
    groups = np.where(X["age"].to_numpy() > 45, "older", "younger")
    res = audit(ex, X, groups, y_pred=y, n_boot=50, target=1)
    html = _reader_text(_stakeholder_report(ex, X, y, audit=res))
    for raw in ("None", "nan", "NaN", "ci_low", "ci_high", "small_group", "is_reference", ">significant<",
                "already_in_rule", "recourse_share"):
        assert not re.search(rf"(?<![\w-]){re.escape(raw)}(?![\w-])", html), raw
    # the audit's shares read as percentages, its group notes sit on the group's name
    audit_part = html.split('<section id="audit">')[1].split("</section>")[0]
    table = audit_part.split("<table>")[1].split("</table>")[0]
    heads = re.findall(r"<th[^>]*>(.*?)</th>", table)
    share = heads.index("share with a rule")
    first = re.findall(r"<td[^>]*>(.*?)</td>", table.split("<tbody>")[1].split("</tr>")[0])
    assert re.fullmatch(r"\d+%", first[share]), first
    assert "(reference)" in table and "small group" not in heads and "reference" not in heads
    assert not re.search(r">0\.\d{4,}<", html)  # no raw shares such as 0.1579 in a cell


def test_plain_number_helpers():
    from tcrex.report._markup import _interval, _mean, _percent, _points

    assert _percent(0.1579) == "16%" and _percent(None) == "" and _percent(float("nan")) == ""
    assert _points(-0.0312) == "-3.1 points" and _points(0.08) == "+8.0 points" and _points(None) == "–"
    assert _interval(-0.0312, 0.08) == "-3.1 to 8.0 points" and _interval(float("nan"), 0.1) == "–"
    assert _mean(1.514) == "1.51" and _mean(None) == "–"


def test_no_individual_without_being_asked(fitted):
    ex, X, y = fitted
    html = _stakeholder_report(ex, X, y, rows=())
    assert 'id="individuals"' not in html and "no individual&#x27;s values" in html
    with_person = _stakeholder_report(ex, X, y)
    assert "1 chosen person with their feature values" in with_person
