"""The dashboard in Streamlit's AppTest (no server, no browser): every page, uploads, parameters, bad input."""

from __future__ import annotations

import io

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tcrex import datasets
from tcrex.text import pluralise
from tcrex.ui.state import session

from tests.support.apptest_kit import (PAGES, apply_params, assert_clean, charts, choose_upload, csv_bytes, goto,
                                       last_result, loans_with_income_gaps, loans_with_uploaded_model, new_app,
                                       outputs_from_a_column, show_row, sidebar_text, upload_bundled_model, upload_data,
                                       use_this_data)


# ------------------------------------------------------------------------------------------------ default sample
@pytest.fixture(scope="module")
def default_app() -> AppTest:
    return new_app()


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_the_default_sample(default_app, page):
    at = goto(default_app, page)
    assert_clean(at)
    assert at.title, "every page has a title"
    assert "Loans sample" in sidebar_text(at)
    if page in ("home", "global_rules", "rule_plot", "change_keep", "individual", "audit"):
        assert charts(at) >= 1, f"{page} draws figures"
    if page == "export":
        from tcrex.report import chromium  # the PDF is offered where the server has Chromium to print with

        assert len(at.get("download_button")) == 3 + (chromium() is not None)


def test_sidebar_names_data_model_task_target_and_parameters(default_app):
    at = goto(default_app, "home")
    text = sidebar_text(at)
    for word in ("Loans sample", "4,000 rows", "XGBoost", "classification", "Favourable outcome:** approved", "τ = 0.90", "ρ = 0.020",
                 "trees = 1", "rules", "metarules", "grid cells"):
        assert word in text, word
    result = last_result(at)
    assert (f"{pluralise(result.n_rules, 'rule')} · {pluralise(result.n_metarules, 'metarule')} · "
            f"{pluralise(result.n_cells, 'grid cell')}") in text  # "1 rule", never "1 rules"


def test_home_metrics(default_app):
    at = goto(default_app, "home")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Rows"] == "4,000"
    assert int(metrics["Rules"]) > 0 and int(metrics["Metarules"]) > 0
    assert float(metrics["Model accuracy"].rstrip("%")) > 80


def test_global_rules_page_lists_rules_summary_and_tree(default_app):
    at = goto(default_app, "global_rules")
    table = at.table[0].value
    assert {"conditions", "accuracy", "feasibility", "rows", "metarules"} <= set(table.columns)
    assert "Toward approved —" in at.code[0].value  # the textual global summary, named by the outcome
    at.toggle(key="tree_full").set_value(False).run()
    dot = at.get("graphviz_chart")[0].proto.spec
    assert dot.startswith("digraph")
    # a filter collapses the tree to where the chosen rows live
    at.segmented_control(key="tree_pop_mode").set_value("filter").run()
    assert_clean(at)
    assert at.get("graphviz_chart")[0].proto.spec != dot


def test_rule_plot_axes_and_focus(default_app):
    at = goto(default_app, "rule_plot")
    assert len(at.get("plotly_chart")) == 2
    at.selectbox(key="plot_x").set_value("age").run()
    assert_clean(at)
    assert "age" in at.get("plotly_chart")[0].proto.spec


def test_change_keep_population_and_subgroups(default_app):
    at = goto(default_app, "change_keep")
    n_test = {m.label: m.value for m in at.metric}["Individuals"]
    at.segmented_control(key="ck_mode").set_value("subgroup").run()
    assert_clean(at)
    n_group = {m.label: m.value for m in at.metric}["Individuals"]
    assert n_group != n_test
    assert len(at.get("plotly_chart")) == 2
    at.segmented_control(key="ck_mode").set_value("test").run()
    assert len(at.dataframe[-1].value) >= 2  # one row per subgroup of the test split


def test_individual_by_row_search_and_edit(default_app):
    at = goto(default_app, "individual")
    assert any("Recourse" in s.value or "already" in s.value for s in [*at.success, *at.info, *at.warning])
    at.number_input(key=next(n.key for n in at.number_input if n.key.startswith("ind_row_"))).set_value(7).run()
    assert_clean(at)
    assert any("Row 7" in m.value for m in at.markdown)
    at.segmented_control(key="ind_mode").set_value("search").run()
    at.text_input(key="ind_query").input("Unemployed").run()
    assert_clean(at)
    at.segmented_control(key="ind_mode").set_value("edit").run()
    at.number_input(key="ind_e_n_late_payments").set_value(0).run()
    next(b for b in at.button if b.label == "Explain these values").click()
    at.run()
    assert_clean(at)
    assert any("Edited individual" in m.value for m in at.markdown)


# ------------------------------------------------------------------------------------------------ parameters
def test_tau_change_updates_without_regrowing_the_surrogate():
    at = new_app()
    goto(at, "global_rules")
    first = last_result(at)
    assert first.update_seconds is None
    apply_params(at, tau=0.8)
    assert_clean(at)
    second = last_result(at)
    assert second.params.tau == 0.8
    assert second.fit_key == first.fit_key  # same surrogate
    assert second.explainer.n_surrogate_fits_ == 1 and second.update_seconds is not None
    assert second.explainer is not first.explainer and first.explainer.tau == 0.9  # a copy was updated
    assert "τ = 0.80" in sidebar_text(at) and "updated in" in sidebar_text(at)
    assert at.table[0].value.shape[0] == second.explainer.targets_[0].n_rules


def test_target_change_updates_and_rho_change_refits():
    at = new_app()
    goto(at, "global_rules")
    first = last_result(at)
    apply_params(at, target="class:1")
    assert_clean(at)
    targeted = last_result(at)
    assert len(targeted.explainer.targets_) == 1 and targeted.fit_key == first.fit_key
    assert "approved = 1" in " ".join(o for o in at.sidebar.selectbox[0].options)
    apply_params(at, rho=0.05)
    assert_clean(at)
    assert last_result(at).fit_key != first.fit_key


def test_no_valid_rule_and_cell_limit_say_what_to_change():
    at = new_app()
    goto(at, "global_rules")
    apply_params(at, tau=1.0, rho=0.2)
    assert not at.exception
    assert at.error and "Lower tau" in at.error[0].value
    apply_params(at, tau=0.9, rho=0.005, trees=20, max_cells=1000)
    assert not at.exception
    assert at.error and "max_cells" in at.error[0].value or "cell" in at.error[0].value.lower()


# ------------------------------------------------------------------------------------------------ other samples
@pytest.mark.parametrize("sample", ["wine", "diabetes"])
def test_other_samples_render_every_page(sample):
    at = new_app()
    goto(at, "data_model")
    at.radio(key=session.SETUP_DATA_CHOICE).set_value(f"sample:{sample}").run()
    assert_clean(at)
    assert "trained in the app" in sidebar_text(at)
    assert ("regression" if sample == "diabetes" else "classification") in sidebar_text(at)
    for page in PAGES:
        goto(at, page)
        assert_clean(at)
    if sample == "diabetes":
        # regression never starts on both directions: "progression" reads as something to reduce
        assert "Favourable outcome:** output ≤" in sidebar_text(at)
        apply_params(at, threshold=150.0)
        assert_clean(at)
        assert "output ≤ 150" in sidebar_text(at)


# ------------------------------------------------------------------------------------------------ uploads
def test_upload_csv_trains_a_model_and_every_page_works():
    at = new_app()
    frame = datasets.make_loans(500, random_state=5)
    frame.insert(0, "application_id", np.arange(100000, 100500))
    upload_data(at, "applicants.csv", csv_bytes(frame))
    assert_clean(at)
    review = next(d.value for d in at.dataframe if "use as" in d.value.columns)  # the review table (st.data_editor)
    assert "use as" in review.columns
    assert bool(review.set_index("column").loc["application_id", "drop"])  # ID-like: drop pre-ticked
    assert "ID-like" in review.set_index("column").loc["application_id", "reason / notes"]
    assert any("application_id" in w.value and "ID-like" in w.value for w in at.warning)  # offered, with a reason
    use_this_data(at)
    assert_clean(at)
    text = sidebar_text(at)
    assert "applicants.csv" in text and "500 rows" in text and "trained in the app" in text
    assert "8 features" not in text and "9 features" in text  # the ID-like column was dropped
    for page in PAGES:
        goto(at, page)
        assert_clean(at)


def test_upload_xgboost_model_file():
    at = loans_with_uploaded_model()
    assert_clean(at)
    assert "Uploaded model" in sidebar_text(at)
    goto(at, "global_rules")
    assert_clean(at)
    assert charts(at) >= 1


def test_predictions_column_mode_says_validity_is_estimated_on_the_data():
    at = outputs_from_a_column()
    assert_clean(at)
    assert "model_says" in sidebar_text(at)
    assert any("only on" in i.value for i in at.info)
    goto(at, "individual")
    assert_clean(at)


def test_malformed_csv_gives_an_error_not_an_exception():
    at = new_app()
    upload_data(at, "broken.csv", b"\x00\x01\x02garbage\xff\xfe\x00" * 50)
    assert not at.exception
    assert at.error


def test_csv_with_missing_values_is_handled():
    at = new_app()
    upload_data(at, "gaps.csv", loans_with_income_gaps(17))
    assert not at.exception
    assert any("missing" in w.value.lower() for w in at.warning)
    use_this_data(at)
    assert_clean(at)
    assert "gaps.csv" in sidebar_text(at)


def test_mismatched_model_names_the_mismatch():
    at = new_app()
    goto(at, "data_model")
    at.radio(key=session.SETUP_DATA_CHOICE).set_value("sample:wine").run()
    upload_bundled_model(at)
    assert not at.exception
    message = " ".join(e.value for e in at.error)
    assert "does not match" in message or "does not fit" in message
    assert "debt_to_income" in message or "income" in message


def test_pickle_model_is_refused_by_default():
    import pickle

    at = new_app()
    goto(at, "data_model")
    at.radio(key=session.SETUP_MODEL_CHOICE).set_value("upload").run()
    uploader = at.get("file_uploader")[-1]
    assert "pkl" not in uploader.proto.type and ".pkl" not in uploader.proto.type
    # a pickle renamed to .json is still recognised and refused
    uploader.set_value(("model.json", pickle.dumps({"a": 1}), "application/json")).run()
    assert not at.exception
    assert at.error and "pickle" in " ".join(e.value for e in at.error).lower()


def test_parquet_upload():
    at = new_app()
    buf = io.BytesIO()
    datasets.make_loans(400, random_state=4).to_parquet(buf)
    choose_upload(at)
    at.get("file_uploader")[0].set_value(("loans.parquet", buf.getvalue(), "application/octet-stream")).run()
    assert_clean(at)
    use_this_data(at)
    assert_clean(at)
    assert "loans.parquet" in sidebar_text(at)


# ------------------------------------------------------------------------------------------------ exports
def test_exports_build_json_csv_and_html(default_app):
    from tcrex import TCREx
    from tcrex.ui.pages import export
    from tcrex.ui.state import active

    goto(default_app, "export")
    result = last_result(default_app)
    ws_key = result.fit_key
    assert ws_key
    text = result.explainer.to_json()
    assert TCREx.from_json(text).targets_
    # rebuild the workspace outside a script run from the same pieces
    data = active.sources.prepare_frame(*_loans_inputs())
    model = active.sources.bundled_model(data)
    ws = active.DataAndModel(data=data, model=model, X=data.frame[data.features],
                         y_pred=model.predict(data.frame[data.features]))
    csv = export.explanations_frame(ws, result)
    assert len(csv) == 4000 and {"row", "split", "model_output", "rule", "text"} <= set(csv.columns)
    ex = result.explainer  # public ids next to the per-target indices, as every table shows them
    has = csv["metarule"].notna()
    assert "target" not in csv.columns  # the internal index of the target entry is never exported to people
    target = result.explanations["target"]
    assert list(csv.loc[has, "metarule_id"]) == [ex.metarule_id(int(t), int(m))
                                                  for t, m in zip(target[has], csv.loc[has, "metarule"])]
    assert csv.loc[~has, "metarule_id"].isna().all()
    assert list(csv.columns).index("metarule_id") == list(csv.columns).index("metarule") + 1
    html = export.build_html(ws, result, individual=ws.X.index[0])
    assert html.startswith("<!DOCTYPE html>") and data.key in html and "plotly" not in html.lower()
    assert "plotly" in export.build_html(ws, result, individual=ws.X.index[0], interactive=True).lower()


def _loans_inputs():
    from tcrex.ui.state import sources

    frame, label, categorical = sources.load_sample_frame("loans")
    return frame, sources.DataSpec("sample", "loans", label=label, categorical=categorical), categorical


def test_following_the_sentence_in_edit_values_gives_the_favourable_outcome_whenever_the_page_shows_a_tick():
    """The ✓ point is the sentence's point. For rows whose page shows ✓, Edit values filled with the
    values the sentence states (every other feature as it is) gets the favourable outcome from the model."""
    import re

    at = new_app()
    goto(at, "individual")
    checked = 0
    for row in range(0, 60, 3):
        show_row(at, row)
        assert_clean(at)
        ticked = [m.value for m in at.markdown if "✓ Checked on the model" in m.value]
        if not ticked:
            continue
        sentence = next(s.value for s in at.success if "Recourse" in s.value)
        advice = re.split(r" \(the rule asks|, while keeping| \(rule R", sentence.split("Change ", 1)[1])[0]
        ex = last_result(at).explainer
        for feature, labels in ex.schema_.value_labels.items():  # a labelled value is stated "label (code)"
            for value in labels:
                advice = advice.replace(ex.value_text(feature, value), ex.value_text(feature, value).rsplit(" (", 1)[1][:-1])
        stated = dict(re.findall(r"(\w+) to ([^ ,()]+)", advice))
        assert stated, sentence
        next(b for b in at.button if b.label == "Try this advice in Edit values").click()
        at.run()
        assert_clean(at)
        for feature, value in stated.items():  # the form holds exactly the stated values
            widget = [w for w in [*at.number_input, *at.selectbox] if w.key == f"ind_e_{feature}"][0]
            assert str(widget.value) == value or float(widget.value) == float(value), (feature, widget.value, value)
        assert any("Edited individual" in m.value for m in at.markdown)
        assert any("already in the target" in i.value for i in at.info), sentence  # the model now says yes
        checked += 1
        if checked >= 4:
            break
    assert checked >= 2
