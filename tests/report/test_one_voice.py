"""One voice: with a model, the report's first sentence (``id="summary"``), its executive tiles and its changes
tables are the per-person verified frame's aggregates; no one the model rejects is ever "0 changes"; the same
sentence is the Overview's first line (AppTest), the Export page's report's and ``tcrex report``'s output. Two
tables: the bundled loans sample and the generated credit-card table (degenerate at the defaults)."""
import html
import re

import pytest
from click.testing import CliRunner

from tcrex import TCREx
from tcrex.cli import main
from tcrex.report import ReportOptions, build_report, summary_sentence, verified_changes
from tcrex.report._recourse import verified_figures

from tests.support import apptest_kit as kit
from tests.support.voice_cases import credit_card_case, loans_case

CASES = {"loans": (loans_case, dict(target=1), "approved"),
         "credit card": (credit_card_case, dict(target=0), "no default")}

pytestmark = pytest.mark.slow  # fits, verifies and builds whole reports


def _report(ex, X, model, outcome):
    explanations = ex.explain(X, model=model)
    cf = ex.counterfactuals(X, model=model)
    html_text = build_report(ex, ReportOptions(
        title="t", data_description="d", data_fingerprint="a" * 64, model_description="m",
        model_fingerprint="b" * 64, params={}, explanations=explanations, counterfactuals=cf, people=X,
        effectiveness=ex.effectiveness(explanations=explanations, counterfactuals=cf),
        actions=ex.feature_actions(X, model=model), outcome_names={0: outcome}))
    return html_text, cf


def _summary(text: str) -> str:
    found = re.search(r'<p id="summary"[^>]*>(.*?)</p>', text, re.S)
    assert found, "the report has no id=summary"
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def _main_part(text: str) -> str:
    return text[text.index('<main id="main-part">'):text.index("</main>")]


def _cards(text: str) -> dict:
    block = re.search(r'<div class="headline">(.*?)</div></div>', text, re.S).group(0)
    return {html.unescape(k): html.unescape(v) for v, k in re.findall(r"<div><b>(.*?)</b>(.*?)</div>", block)}


@pytest.mark.parametrize("case", list(CASES))
def test_the_reports_main_part_is_the_verified_frames_aggregate(case):
    load, params, outcome = CASES[case]
    X, model = load()
    ex = TCREx(**params).fit(X, model)
    text, cf = _report(ex, X, model, outcome)
    figures = verified_figures(cf)
    assert figures["need"] and figures["verified"]
    sentence = _summary(text)
    assert sentence == summary_sentence(cf, X, outcome=outcome, labels=ex.schema_.value_labels)
    top = verified_changes(cf, X)[0]
    assert top.feature in sentence and f"{top.people:,} people" in sentence
    assert f"{figures['need']:,} (" in sentence and f"for {figures['verified']:,} of them" in sentence
    cards = _cards(text)
    assert cards["need a change to reach the favourable outcome"].startswith(f"{figures['need']:,} (")
    assert cards["of them get a change the model confirms"].startswith(f"{figures['verified']:,} (")
    assert float(cards["median features the confirmed change changes"]) == figures["median_changes"]
    main = _main_part(text)
    assert "median features the rule asks to change" not in main and "the rule asks to change 0" not in main
    # every changes table of the main part counts the confirmed points: a bar per count, never 0, and they add up
    rows = re.findall(r"<tr><td>(\d+)</td><td>([\d,]+)</td>", main)
    assert rows and all(int(c) >= 1 for c, _ in rows)
    assert sum(int(n.replace(",", "")) for _, n in rows) == figures["verified"]
    # the top rules count the people whose confirmed change follows them
    ids = dict(zip(ex.rules_frame()["rule_id"], ex.rules_frame()["rule"]))
    followed = re.findall(r"Rule (R\d+) — [^<]*?the confirmed change of ([\d,]+) (?:person|people) follows it",
                          html.unescape(main))
    assert followed
    through = cf.loc[(cf["recourse"].astype(object) == "verified") & (cf["source"].astype(object) != "minimal_change")]
    for rid, n in followed:
        assert int(n.replace(",", "")) == int((through["recommended_rule"] == ids[rid]).sum())
    # the rules' own count is secondary and says so; its 0 is named, not a number
    appendix = text[text.index("</main>"):]
    assert "What the rules alone say, not checked on the model" in appendix
    assert "<tr><td>0</td>" not in appendix


def test_credit_card_people_inside_a_rule_the_model_rejects_are_never_zero_changes():
    X, model = credit_card_case()
    ex = TCREx(target=0).fit(X, model)
    explanations = ex.explain(X, model=model)
    inside = (explanations["status"].astype(str) == "already_in_rule").to_numpy()
    assert inside.any()  # the case this is about: people inside the rule whom the model rejects
    text, cf = _report(ex, X, model, "no default")
    verified = cf.loc[inside & (cf["recourse"].astype(object) == "verified").to_numpy()]
    assert len(verified) and (verified["n_changes"] >= 1).all()
    assert "inside a rule the model does not confirm" in text


@pytest.mark.apptest
def test_the_same_sentence_in_the_app_the_export_report_and_tcrex_report(tmp_path):
    from tcrex.ui.pages import export
    from tcrex.ui.state import active

    from tcrex.ui.state import checks

    at = kit.new_app()
    key = kit.last_result(at).key
    for check in [c for c in checks.REGISTRY.checks() if c.key[0] == key]:  # the model check of the Overview
        check.wait(timeout=600)
    at.run()
    kit.assert_clean(at)
    shown = [m.value for m in at.markdown if 'id="summary"' in m.value]
    assert len(shown) == 1
    app_sentence = html.unescape(re.sub(r"<[^>]+>", "", shown[0]))
    result = kit.last_result(at)
    ws = active.data_and_model()
    report_text = export.build_html(ws, result)
    assert _summary(report_text) == app_sentence
    # the same rules, rows, model and fit rows through the command line
    (tmp_path / "rules.json").write_text(export.rules_json(result, ws.class_names)())
    ws.X.to_csv(tmp_path / "data.csv", index=False)
    ws.X.loc[ws.data.fit_index].to_csv(tmp_path / "fit.csv", index=False)
    from tcrex.datasets import LOANS_MODEL, SAMPLE_DATA_DIR

    res = CliRunner().invoke(main, ["report", "--rules", str(tmp_path / "rules.json"), "--model",
                                    str(SAMPLE_DATA_DIR / LOANS_MODEL), "--data", str(tmp_path / "data.csv"),
                                    "--reference-rows", str(tmp_path / "fit.csv"), "--out",
                                    str(tmp_path / "report.html")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert app_sentence in res.output
    cli_text = (tmp_path / "report.html").read_text()
    assert _summary(cli_text) == app_sentence
    assert _cards(cli_text) == _cards(report_text)
    section_ids = re.compile(r'<section id="([^"]+)"')
    assert section_ids.findall(_main_part(cli_text)) == section_ids.findall(_main_part(report_text))


@pytest.mark.parametrize("case", list(CASES))
def test_the_tree_outline_counts_the_verified_frame(case):
    """The metarule tree's outline (the Global rules page's and the report's) says, per leaf, what verifies the
    people it serves: summed over the leaves, the verified frame's own count of verified people."""
    from tcrex.figures import metarule_tree_html

    load, params, _ = CASES[case]
    X, model = load()
    ex = TCREx(**params).fit(X, model)
    explanations = ex.explain(X, model=model)
    cf = ex.counterfactuals(X, model=model)
    population = explanations.assign(source=cf["source"].astype(object))
    text = html.unescape(metarule_tree_html(ex, 0, population=population, open_all=True))
    said = sum(int(n.replace(",", "")) for n in re.findall(
        r"([\d,]+) (?:verified through this rule|through the next rule|by a minimal change)", text))
    served = explanations["metarule"].notna().to_numpy() & (cf["recourse"].astype(object) == "verified").to_numpy()
    assert said == int(served.sum()) > 0
    assert "up to 0 change" not in text
