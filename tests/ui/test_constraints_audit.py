"""The constraints editor, the no-actionable-rule statuses, the Subgroup audit page, parameter checks and the
report's audit section, in AppTest."""

from __future__ import annotations


from tcrex import datasets
from tcrex.ui.state import session

from tests.support.apptest_kit import (apply_params, assert_clean, csv_bytes, goto, last_result, new_app,
                                       planted_groups_app, sidebar_text, upload_data)

CONSTRAINED_PAGES = ["home", "global_rules", "rule_plot", "change_keep", "individual", "audit", "export"]


def kind_key(at, feature: str) -> str:
    return next(s.key for s in at.sidebar.selectbox
                if s.key.startswith("con_kind_") and s.key.endswith(f"_{feature}"))


def set_constraints(at, **kinds) -> None:
    for feature, kind in kinds.items():
        at.selectbox(key=kind_key(at, feature)).set_value(kind)


def apply_constraints(at):
    at.button(key="con_apply").click()
    return at.run()


# ------------------------------------------------------------------------------------------------ constraints
def test_suggestions_are_prefilled_but_not_applied():
    at = new_app()
    assert_clean(at)
    # age is suggested increase-only (suggest_constraints), shown as a suggestion to confirm ...
    assert at.selectbox(key=kind_key(at, "age")).value == "increase_only"
    assert any("Suggested" in i.value and "age" in i.value and "not applied" in i.value for i in at.sidebar.info)
    assert any("Not applied yet" in w.value for w in at.sidebar.warning)
    # ... but nothing reaches the explainer until the user applies
    assert "Constraints:** none" in sidebar_text(at)
    assert last_result(at).explainer.constraints_.trivial
    apply_constraints(at)
    assert_clean(at)
    applied = "age: increase only; credit_history_years: increase only; n_late_payments: immutable"
    assert f"Constraints:** {applied}" in sidebar_text(at)
    assert last_result(at).explainer.constraints_.describe() == applied


def test_applying_constraints_updates_without_regrowing_and_every_page_shows_them():
    at = new_app()
    goto(at, "global_rules")
    first = last_result(at)
    assert first.explainer.n_surrogate_fits_ == 1
    set_constraints(at, employment="immutable", n_late_payments="increase_only", debt_to_income="increase_only")
    at.number_input(key=kind_key(at, "income").replace("con_kind_", "con_w_")).set_value(2.0)
    apply_constraints(at)
    assert_clean(at)
    res = last_result(at)
    assert res.fit_key == first.fit_key and res.update_seconds is not None  # same surrogate, re-derived
    assert res.explainer.n_surrogate_fits_ == 1  # update(constraints=...) never regrows
    assert res.explainer is not first.explainer and first.explainer.constraints_.trivial  # a copy was updated
    text = res.explainer.constraints_.describe()
    assert "employment: immutable" in text and "income: weight 2" in text and "age: increase only" in text
    status = res.explanations["status"].astype(str)
    n_blocked = int((status == "no_actionable_rule").sum())
    assert n_blocked > 0
    assert f"{n_blocked:,} of 4,000 rows have no actionable rule" in sidebar_text(at)
    for page in CONSTRAINED_PAGES:
        goto(at, page)
        assert_clean(at)
        assert any("Constraints active" in i.value and "employment: immutable" in i.value for i in at.info), page
    goto(at, "change_keep")
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["No actionable rule"].replace(",", "")) > 0
    assert "no actionable rule" in at.dataframe[-1].value.columns  # the subgroup table counts them too
    # the individual page: the message and the nearby metarules that WOULD give recourse
    goto(at, "individual")
    row = int(status.index[status == "no_actionable_rule"][0])
    at.number_input(key=next(n.key for n in at.number_input if n.key.startswith("ind_row_"))).set_value(row).run()
    assert_clean(at)
    # the rules alone offer nothing actionable; a verified change beyond the rules may still exist
    assert any("No actionable recourse" in w.value for w in [*at.warning, *at.caption])
    assert any(s.value == "Where there would be recourse" for s in at.subheader)
    exp = res.explainer.explain_one(_row(at, row), y_pred=[_output(at, row)])
    alternatives = [a for a in exp.alternatives if a["rule"] >= 0]
    # the page words each alternative as a metacounterfactual checked on the model ("1. Had X been ..., the
    # advice would be ..."); the first names the same "if" features
    assert alternatives and any(m.value.startswith("1. Had ") and all(c["feature"] in m.value for c in
                                                                   alternatives[0]["metachanges"])
                                for m in at.markdown)
    # removing them re-derives again, still without regrowing
    at.button(key="con_reset").click()
    at.run()
    assert_clean(at)
    assert last_result(at).explainer.constraints_.trivial and last_result(at).explainer.n_surrogate_fits_ == 1
    assert "Constraints:** none" in sidebar_text(at)


def _row(at, row):
    from tcrex.ui.state import sources

    frame, label, _ = sources.load_sample_frame("loans")
    return frame.drop(columns=[label]).loc[[row]]


def _output(at, row):
    return datasets.load_bundled_model().predict(_row(at, row))[0]


def test_category_transitions_are_collapsed_by_default_and_applied():
    at = new_app()
    limit = next(c for c in at.sidebar.checkbox if c.key.startswith("con_limit_") and c.key.endswith("_employment"))
    assert limit.value is False
    assert not [m for m in at.sidebar.multiselect if "_employment_" in m.key]  # collapsed
    limit.check().run()
    boxes = [m for m in at.sidebar.multiselect if "_employment_" in m.key]
    assert len(boxes) == 4  # one per source category
    unemployed = next(m for m in boxes if m.label == "From not currently employed (Unemployed) to")
    unemployed.set_value(["Self-employed"])
    apply_constraints(at)
    assert_clean(at)
    c = last_result(at).explainer.constraints_
    assert c.to_dict()["employment"]["transitions"] == {"Unemployed": ["Self-employed"]}


def test_invalid_constraint_is_refused_with_a_message(monkeypatch):
    at = new_app()
    # a direction on a categorical feature cannot be chosen in the editor; a weight out of range is clamped by the
    # widget, so check the engine's refusal through the callback with a spec it rejects
    from tcrex.ui.widgets import constraints

    goto(at, "home")
    monkeypatch.setattr(constraints, "draft_spec", lambda *a, **k: {"employment": "increase_only"})
    apply_constraints(at)
    assert not at.exception
    assert any("Not applied" in e.value and "employment" in e.value for e in at.sidebar.error)
    assert last_result(at).explainer.constraints_.trivial


# ------------------------------------------------------------------------------------------------ audit
def test_audit_page_on_the_loans_sample_has_content_at_once():
    at = new_app()
    goto(at, "audit")
    assert_clean(at)
    assert at.selectbox(key="audit_column").value == "employment"  # no non-feature column: a categorical one
    text = " ".join(m.value for m in at.markdown)
    assert "Audit of" in text and "employment = salaried employee (Salaried)" in text
    assert "need on average" in text and "95% CI" in text  # the plain-language findings are the headline
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    assert len(specs) == 4  # bars, changes distribution, forest plot, heatmap
    assert any("group" in at.dataframe[0].value.columns for _ in [0])
    # other settings
    at.selectbox(key="audit_column").set_value("age").run()  # numeric: quartiles
    assert_clean(at)
    assert "4 groups of age" in " ".join(m.value for m in at.markdown)
    at.select_slider(key="audit_confidence").set_value(0.99).run()
    assert_clean(at)
    assert "99% CI" in " ".join(m.value for m in at.markdown) or "99%" in " ".join(m.value for m in at.markdown)
    at.segmented_control(key="audit_pop_mode").set_value("all").run()
    assert_clean(at)
    assert "out of 4,000" in " ".join(m.value for m in at.markdown)


def test_audit_by_a_column_that_is_not_a_model_feature_finds_the_planted_disparity():
    at = planted_groups_app()  # "not a feature (audit only)" for group, as the column table sets it
    goto(at, "data_model")
    assert_clean(at)
    assert "not a feature (audit only)" in at.dataframe[-1].value.set_index("column").loc["group", "role"]
    ws_features = last_result(at).explainer.schema_.names
    assert "group" not in ws_features
    goto(at, "audit")
    assert_clean(at)
    assert at.selectbox(key="audit_column").value == "group"  # the non-feature column is the default
    # a 0/1 label reads as "1 is favourable": the sidebar starts there and the audit uses it (no second picker)
    assert session.params(at.session_state).target == 1
    text = " ".join(m.value for m in at.markdown)
    assert "**Favourable outcome** (sidebar)  \n1" in text
    assert "Individuals with group = B need on average" in text and "more changes than group = A" in text
    # the report includes the audit once one has been run

    run = session.last_audit(at.session_state)
    goto(at, "export")
    assert_clean(at)
    prov = at.dataframe[-1].value.set_index("item")["value"]
    assert prov["subgroup audit"].startswith("Subgroup audit by group")
    assert "Subgroup audit" in run.title


def test_report_includes_audit_findings_table_forest_plot_and_constraints():
    from tcrex import TCREx
    from tcrex.audit import audit
    from tcrex.report import ReportOptions, build_report

    frame = datasets.make_recourse_groups(1200, random_state=1)
    X = frame.drop(columns=["approved", "group"])
    y = frame["approved"].to_numpy()
    ex = TCREx(target=1, constraints={"age": "increase_only"}).fit(X, y_pred=y)
    res = audit(ex, X, frame["group"], y_pred=y, n_boot=200)
    html = build_report(ex, ReportOptions(title="t", data_description="d", data_fingerprint="a" * 64,
                                          model_description="m", model_fingerprint="b" * 64, params={}, figures={},
                                          tables={}, audit=res, audit_title="Subgroup audit by group — all rows"))
    assert 'id="audit"' in html and "Subgroup audit by group — all rows" in html
    assert res.findings()[1].split(" (")[0].replace("=", "=") in html.replace("&#x27;", "'")
    assert 'id="audit-forest"' in html and "<svg" in html and "plotly" not in html.lower()  # static SVG, no script
    assert "share with a rule" in html and "Rules only — not checked on a model" in html  # no model: says so
    assert "age: increase only" in html  # the constraints are in the parameters


# ------------------------------------------------------------------------------------------------ parameters
def test_grower_choice_regrows_with_hist():
    at = new_app()
    first = last_result(at)
    apply_params(at, grower="hist")
    assert_clean(at)
    res = last_result(at)
    assert res.explainer.grower == "hist" and res.fit_key != first.fit_key
    assert "grower hist" in sidebar_text(at)


def test_param_checks_next_to_the_form_for_small_data():
    at = new_app()
    frame = datasets.make_loans(60, random_state=3)  # 45 fit rows: rho = 0.02 needs 50
    upload_data(at, "small.csv", csv_bytes(frame))
    next(b for b in at.button if b.label == "Use this data").click()
    at.run()
    assert not at.exception
    messages = " ".join(e.value for e in at.sidebar.error)
    assert "rho" in messages and "45" in messages  # check_rows_for_rho / validate_params, in the sidebar
    # a rho that needs more rows than there are is not applied
    apply_params(at, rho=0.01)
    assert not at.exception
    assert any("Not applied" in e.value for e in at.sidebar.error)
    assert "ρ = 0.020" in sidebar_text(at)
    apply_params(at, rho=0.05)
    assert not any("Not applied" in e.value for e in at.sidebar.error)
    assert "ρ = 0.050" in sidebar_text(at)


def test_audit_gap_is_red_only_above_the_practical_threshold():
    """A clear (red) finding needs a CI excluding zero AND a gap of at least the threshold the user sets."""
    import pandas as pd

    from tcrex.audit import clear_gaps, gap_direction
    from tcrex.ui.pages.audit import practical_gaps

    gaps = pd.DataFrame({"metric": ["recourse_share", "recourse_share", "mean_changes", "mean_changes"],
                         "difference": [0.003, 0.08, 0.02, 0.5], "reference_value": [0.9, 0.9, 1.0, 1.0]})
    assert practical_gaps(gaps, 5.0).tolist() == [False, True, False, True]  # 0.3 pt no, 8 pt yes; 2 % no, 50 % yes
    assert practical_gaps(gaps.assign(difference=0.0), 0.0).tolist() == [False] * 4  # 0.0 points is never a gap

    at = new_app()
    goto(at, "audit")
    assert_clean(at)
    red = [m.value for m in at.markdown if m.value.startswith("- :red[")]
    at.number_input(key="audit_practical").set_value(100.0).run()
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    red_now = [m.value for m in at.markdown if m.value.startswith("- :red[")]
    # at 100 only a gap as large as the reference's own value stays red (the verified advice to the unemployed
    # moves about twice as far as the reference's): exactly the engine's clear gaps at that threshold
    gaps = session.last_audit(at.session_state).result.gaps()
    clear = gaps[clear_gaps(gaps, 100.0)]
    assert len(red_now) == int((gap_direction(clear) == "worse").sum()) < len(red)
    assert (clear["difference"].abs() >= clear["reference_value"].abs()).all()
    if not len(clear):
        assert "No clear difference between the groups" in text
    assert "below the practical threshold of 100 points" in text  # gaps that were clear are still listed
