"""Searching individuals by label and model output (errors reported, no stale individual),
the "not applied yet" cue of the parameter form, the kept-result banner naming its parameters, the text summary of
the selected target, trivial rules flagged, and the audit's practical threshold reaching the report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.support.apptest_kit import (apply_params, assert_clean, csv_bytes, goto, last_result, new_app, sidebar_text,
                                       upload_data, use_this_data)

from tcrex.ui.state import session


@pytest.fixture(scope="module")
def app() -> AppTest:
    return new_app()


def _search(at: AppTest, query: str) -> AppTest:
    goto(at, "individual")
    at.segmented_control(key="ind_mode").set_value("search").run()
    at.text_input(key="ind_query").input(query).run()
    return at


def _hits(at: AppTest) -> list:
    box = next(s for s in at.selectbox if s.key == "ind_hit")
    return list(box.options)


def _shown_individual(at: AppTest) -> bool:
    return any(m.value.startswith("#### Row ") for m in at.markdown) or bool(at.success)


# ------------------------------------------------------------------------------------------------ search
def test_search_by_model_output_and_label(app):
    _search(app, '`model output` == "approved"')
    assert_clean(app)
    result = last_result(app)
    expl = result.explanations
    hits = [int(h.split(":")[0].removeprefix("row ")) for h in _hits(app)]
    assert hits, "approved rows are found"
    statuses = set(expl.loc[hits, "status"].astype(str))
    assert statuses == {"already_in_target"}  # approved is the favourable outcome: all of them already have it
    _search(app, "label == 0 and `model output` == 1")  # declined in the data, approved by the model
    assert_clean(app)
    assert _hits(app)
    _search(app, "approved == 0")  # the label under its own name
    assert_clean(app)
    assert _hits(app)


def test_search_syntax_error_is_reported_and_no_individual_is_shown(app):
    _search(app, "income = 80")
    assert not app.exception
    message = " ".join(e.value for e in app.error)
    assert "Search not understood" in message and "==" in message
    assert not _shown_individual(app)
    _search(app, "incme > 80")
    assert "there is no column incme" in " ".join(e.value for e in app.error)
    _search(app, "income.to_csv('x') == 1")  # no code runs from a search
    assert "function call is not allowed" in " ".join(e.value for e in app.error)


def test_search_without_a_match_clears_the_shown_individual(app):
    _search(app, "Unemployed")
    assert_clean(app)
    assert _shown_individual(app)
    _search(app, "income > 1e12")
    assert_clean(app)
    assert any("No row matches" in w.value for w in app.warning)
    assert not _shown_individual(app)
    assert any("stays selected" in c.value for c in app.caption)


# ------------------------------------------------------------------------------------------------ parameters
def _param_cue(at: AppTest) -> str:
    return " ".join(w.value for w in at.sidebar.warning if "Apply parameters" in w.value)


def test_parameter_edits_say_not_applied_until_applied():
    at = new_app()
    assert not _param_cue(at)
    next(s for s in at.sidebar.get("slider") if s.key == session.PARAM_TAU).set_value(0.8)
    at.run()
    pending = _param_cue(at)
    assert "Not applied yet" in pending and "τ 0.90 → 0.80" in pending
    assert "τ = 0.90" in sidebar_text(at)  # still the applied value
    apply_params(at, tau=0.8)
    assert_clean(at)
    assert not _param_cue(at)
    assert "τ = 0.80" in sidebar_text(at)


def test_kept_result_banner_names_the_parameters_of_the_shown_fit():
    at = new_app()
    goto(at, "global_rules")
    apply_params(at, tau=0.9, rho=0.005, trees=20, max_cells=1000)  # the grid cell limit is hit
    assert not at.exception
    banner = at.error[0].value
    assert "last good result is shown below" in banner
    assert "τ = 0.90, ρ = 0.020, 1 surrogate tree, grid cell limit 100,000" in banner


# ------------------------------------------------------------------------------------------------ global rules
def test_text_summary_shows_the_selected_target_only():
    at = new_app()
    apply_params(at, target="__default__")  # both directions: two targets
    goto(at, "global_rules")
    assert_clean(at)
    assert "Toward approved —" in at.code[0].value and "Toward rejected" not in at.code[0].value
    at.selectbox(key="global_target").set_value(1).run()
    assert_clean(at)
    assert "Toward rejected —" in at.code[0].value and "Toward approved" not in at.code[0].value


def test_trivial_rule_is_flagged_in_the_rules_list():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x1": rng.integers(0, 100, 600), "x2": rng.uniform(0, 1, 600).round(3)})
    frame["y"] = (frame["x1"] >= 7).astype(int)
    frame["model_says"] = frame["y"]
    at = new_app()
    upload_data(at, "lopsided.csv", csv_bytes(frame))
    use_this_data(at)
    at.radio(key=session.SETUP_MODEL_CHOICE).set_value("column").run()
    at.selectbox(key="setup_output_column").set_value("model_says").run()
    next(b for b in at.button if b.label == "Use this column").click()
    at.run()
    goto(at, "global_rules")
    assert_clean(at)
    notes = " ".join(w.value for w in at.warning)
    assert "no condition" in notes and "not advice" in notes
    conditions = at.table[0].value["conditions"].tolist()
    assert any(c.startswith("⚠ any input") for c in conditions)
    assert "no condition" in at.code[0].value  # the text summary flags it too


# ------------------------------------------------------------------------------------------------ audit → report
def test_audit_practical_threshold_reaches_the_report():
    from tcrex.ui.pages import export
    from tcrex.ui.state import active, sources

    at = new_app()
    goto(at, "audit")
    assert_clean(at)
    at.number_input(key="audit_practical").set_value(100.0).run()
    assert_clean(at)
    run = session.last_audit(at.session_state)
    assert run.practical == 100.0 and "practical threshold 100 points" in run.title
    result = last_result(at)
    frame, label, categorical = sources.load_sample_frame("loans")
    data = active.sources.prepare_frame(frame, sources.DataSpec("sample", "loans", label=label,
                                                               categorical=categorical), categorical)
    model = active.sources.bundled_model(data)
    X = data.frame[data.features]
    ws = active.DataAndModel(data=data, model=model, X=X, y_pred=model.predict(X))
    html = export.build_html(ws, result, individual=ws.X.index[0], audit=run)
    # the report applies the page's threshold: as many clear gaps as the audit finds at 100 points (a mean
    # distance twice the reference group's is one even there), and says which threshold it used
    from tcrex.audit import split_findings
    from tcrex.text import pluralise
    n_clear = len(split_findings(run.result, practical=100.0).clear)
    assert f"{pluralise(n_clear, 'clear gap')}: at least 100 percentage points" in html
    assert n_clear < len(split_findings(run.result).clear)  # fewer than at the default threshold
    assert "<script" not in html.lower()
