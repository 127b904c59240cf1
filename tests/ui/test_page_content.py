"""Page content in AppTest: the Model panel on Data & model, one rule id across the app, class names,
constraints for many features, sentinel findings on upload, the Rule-map axes hint, readable metacounterfactual
headers, the plotly toolbar, and notes when the app resets state on its own."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.support.apptest_kit import (apply_params, assert_clean, csv_bytes, goto, last_result,
                                       loans_with_uploaded_model, new_app, sidebar_text, upload_data, use_this_data,
                                       wide_frame)

from tcrex.constraints import pack_constraints
from tcrex.ui.state import session, active
from tcrex.ui.state.sources import DataSpec, ModelSpec


def _messages(at) -> str:
    return " ".join(m.value for m in [*at.error, *at.warning, *at.info, *at.success])


def _figures(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _kinds(at) -> list[str]:
    return [(f["layout"].get("meta") or {}).get("kind") for f in _figures(at)]


@pytest.fixture(scope="module")
def loans():
    return new_app()


# ------------------------------------------------------------------------------------------------ Model panel
def test_model_panel_says_the_bundled_models_figures_are_optimistic(loans):
    at = goto(loans, "data_model")
    assert_clean(at)
    assert any("training rows — optimistic" in w.value for w in at.warning)
    metrics = {m.label: m.value for m in at.metric}
    assert {"accuracy", "balanced accuracy", "ROC AUC (approved)", "average precision (approved)"} <= set(metrics)
    kinds = _kinds(at)
    assert {"confusion_matrix_figure", "roc_curve_figure", "pr_curve_figure"} <= set(kinds)
    confusion = next(f for f in _figures(at) if f["layout"]["meta"]["kind"] == "confusion_matrix_figure")
    assert confusion["data"][0]["x"] == ["rejected", "approved"]  # class names, not 0/1
    per_class = next(d.value for d in at.dataframe if "precision" in d.value.columns)
    assert list(per_class["class"]) == ["rejected", "approved"]


def test_model_panel_of_a_model_trained_in_the_app_is_hold_out():
    at = new_app()
    goto(at, "data_model")
    at.radio(key=session.SETUP_DATA_CHOICE).set_value("sample:wine").run()
    assert_clean(at)
    assert any("Hold-out performance" in c.value and "hold-out rows" in c.value for c in at.caption)
    assert "confusion_matrix_figure" in _kinds(at) and "roc_curve_figure" not in _kinds(at)  # three classes
    at.radio(key=session.SETUP_DATA_CHOICE).set_value("sample:diabetes").run()
    assert_clean(at)
    assert {"MAE", "RMSE", "R²"} <= {m.label for m in at.metric}
    assert "residual_plot" in _kinds(at)


def test_model_panel_without_labels_says_there_is_no_performance():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    frame["score"] = (frame.a + frame.b > 0).astype(int)
    at = new_app()
    upload_data(at, "nolabel.csv", csv_bytes(frame))
    next(b for b in at.selectbox if b.label.startswith("Label column")).set_value("(none)")
    use_this_data(at)
    at.radio(key=session.SETUP_MODEL_CHOICE).set_value("column").run()
    at.selectbox(key="setup_output_column").set_value("score")
    next(b for b in at.button if b.key == "setup_use_column").click()
    at.run()
    assert_clean(at)
    assert any("No labels: no performance" in i.value for i in at.info)
    assert not any(k in _kinds(at) for k in ("confusion_matrix_figure", "residual_plot"))


def test_model_panel_of_an_uploaded_model_uses_the_labelled_test_split():
    at = loans_with_uploaded_model()
    assert_clean(at)
    note = next(i.value for i in at.info if i.value.startswith("**Measured on"))
    assert "200 rows of this data's test split" in note and "not known" in note
    assert "accuracy" in {m.label for m in at.metric}
    assert "confusion_matrix_figure" in _kinds(at)


# ------------------------------------------------------------------------------------------------ rule ids
def test_rules_table_shows_the_ids_the_tree_uses_and_ids_never_collide():
    at = new_app()
    goto(at, "global_rules")
    ex = last_result(at).explainer
    table = at.table[0].value
    assert table.index.name == "rule" and list(table.index) == list(ex.rules_frame().rule_id)
    at.toggle(key="tree_full").set_value(False).run()
    dot = at.get("graphviz_chart")[0].proto.spec
    assert set(__import__("re").findall(r"→ (R\d+)", dot)) <= set(table.index)
    apply_params(at, target="__default__")  # both directions: two targets, each with a rule 0
    assert_clean(at)
    ex = last_result(at).explainer
    assert len(ex.targets_) == 2
    at.selectbox(key="global_target").set_value(1).run()
    second = list(at.table[0].value.index)
    assert second[0] == f"R{ex.targets_[0].n_rules + 1}"
    goto(at, "home")
    overview = next(f for f in _figures(at) if f["layout"]["meta"]["kind"] == "rules_overview")
    labels = [t for d in overview["data"] if (d.get("meta") or {}).get("kind") == "rules" for t in d["text"]]
    assert len(labels) == len(set(labels)) == len(ex.rules_frame())


# ------------------------------------------------------------------------------------------------ class names
def test_class_names_replace_output_equals_on_the_pages(loans):
    at = goto(loans, "global_rules")
    summary = at.code[0].value
    assert "approved" in summary and "output =" not in summary
    at = goto(loans, "home")
    assert "output =" not in at.get("plotly_chart")[0].proto.spec
    at = goto(loans, "rule_plot")
    assert_clean(at)
    assert all("output =" not in c.proto.spec for c in at.get("plotly_chart"))


# ------------------------------------------------------------------------------------------------ smaller
def test_rule_map_lists_the_features_the_rules_use(loans):
    at = goto(loans, "rule_plot")
    hint = next(c.value for c in at.caption if "Features the rules use" in c.value)
    from tcrex.ui.widgets.components import used_feature_counts
    counts = used_feature_counts(last_result(at), 0)
    first, k = next(iter(counts.items()))
    assert f"`{first}` ({k} of" in hint


def test_metacounterfactual_table_has_readable_headers(loans):
    at = goto(loans, "individual")
    assert_clean(at)
    # a static table (long texts wrap: it fits the page), without the sentence column that repeats the advice
    table = next(d.value for d in at.table if "then change" in d.value.columns)
    assert {"if", "then change", "then keep", "changes needed there"} <= set(table.columns)
    assert "text" not in table.columns and table.index.name == "alternative"  # the counts are in the figure
    assert not any(c.startswith("n_") for c in table.columns)
    assert all(str(r).startswith("R") or r == "none" for r in table["rule"])


def test_plotly_toolbar_shows_on_hover_below_no_title(loans):
    at = goto(loans, "home")
    chart = at.get("plotly_chart")[0]
    assert '"displayModeBar": "hover"' in chart.proto.config or '"displayModeBar":"hover"' in chart.proto.config
    title = json.loads(chart.proto.spec)["layout"]["title"]
    from tcrex.ui.widgets.components import MODEBAR_PX
    assert title["pad"]["t"] >= MODEBAR_PX  # the title starts below the toolbar band


def test_sentinel_codes_are_a_finding_on_upload():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"MSinceMostRecentDelq": rng.integers(0, 90, 300), "income": rng.normal(50, 9, 300)})
    frame.loc[:19, "MSinceMostRecentDelq"] = -7
    frame["label"] = (frame.income > 50).astype(int)
    at = new_app()
    upload_data(at, "bureau.csv", csv_bytes(frame))
    assert not at.exception
    finding = next(w.value for w in at.warning if w.value.startswith("**Findings**"))
    assert "MSinceMostRecentDelq" in finding and "20 row(s) hold −7" in finding and "sentinel" in finding
    # used as they are unless the user asks: then they are missing values, dropped here, with the counts
    box = next(c for c in at.checkbox if c.label.startswith("Treat the sentinel codes as missing"))
    assert box.value is False and "`MSinceMostRecentDelq` (20 rows)" in box.label
    box.check()
    use_this_data(at)
    assert_clean(at)
    assert "20 sentinel code(s) treated as missing values: 'MSinceMostRecentDelq' (20)" in _messages(at)
    active = session.data_spec(at.session_state)
    assert active.sentinels == ("MSinceMostRecentDelq",)
    assert "280 rows" in sidebar_text(at)  # the 20 rows with a code were dropped (the strategy chosen)


# ------------------------------------------------------------------------------------------------ many features
def test_many_features_edit_constraints_in_a_main_area_table():
    at = new_app()
    upload_data(at, "wide.csv", csv_bytes(wide_frame()))
    use_this_data(at)
    assert_clean(at)
    # the sidebar stays short: a summary and a link, no row per feature
    assert not [s for s in at.sidebar.selectbox if str(s.key).startswith("con_kind_")]
    assert any("Edit the constraints" in str(p.proto) for p in at.sidebar.get("page_link"))
    assert any("Suggested, not applied" in c.value and "age" in c.value for c in at.sidebar.caption)
    goto(at, "data_model")
    (editor,) = [d for d in at.data_editor if str(d.key).startswith("con_table_")]
    table = editor.value
    assert len(table) == 15 and table.set_index("feature").loc["age", "constraint"] == "increase only"
    assert "region" not in set(table.feature)  # the categorical feature has its own table (free / immutable only)
    row = list(table.feature).index("f03")
    at.session_state[editor.key] = {"edited_rows": {row: {"constraint": "immutable", "weight": 2.0}},
                                    "added_rows": [], "deleted_rows": []}
    next(b for b in at.button if b.label == "Apply constraints").click()
    at.run()
    assert_clean(at)
    applied = active.unpack_constraints(session.params(at.session_state).constraints)
    assert applied == {"age": "increase_only", "f03": {"kind": "immutable", "weight": 2.0}}
    described = set(last_result(at).explainer.constraints_.describe().split("; "))
    assert described == {"age: increase only", "f03: immutable, weight 2"}
    assert all(part in sidebar_text(at) for part in described)


# ------------------------------------------------------------------------------------------------ notes
def test_a_vanished_upload_switches_back_to_the_sample_and_its_model_with_a_note():
    at = new_app()
    session.set_data_spec(DataSpec("upload", "gone.csv", "0" * 64, label="approved"), at.session_state)
    session.set_model_spec(ModelSpec("upload", "model.json", "1" * 64), at.session_state)
    session.set_params(active.Params(constraints=pack_constraints({"age": "increase_only"})), at.session_state)
    goto(at, "home")
    assert not at.exception
    assert session.data_spec(at.session_state) == active.DEFAULT_DATA
    assert session.model_spec(at.session_state) == active.SAMPLE_MODELS["loans"]  # not the other data's model
    note = " ".join(i.value for i in at.sidebar.info)
    assert "'gone.csv' is no longer in this session" in note and "loans sample" in note
    assert "constraints were cleared" in note
    at.run()
    assert_clean(at)
    assert "Loans sample" in sidebar_text(at) and session.params(at.session_state).constraints == ()


def test_a_new_model_clears_the_constraints_with_a_note():
    at = new_app()
    session.set_params(active.Params(target=1, constraints=pack_constraints({"age": "increase_only"})), at.session_state)
    goto(at, "data_model")
    at.radio(key=session.SETUP_MODEL_CHOICE).set_value("train").run()
    next(b for b in at.button if b.key == "setup_train").click()
    at.run()
    assert_clean(at)
    assert "constraints were cleared because the model changed" in _messages(at)
    assert session.params(at.session_state).constraints == ()


def test_many_features_limit_category_moves_below_the_table():
    at = new_app()
    upload_data(at, "wide.csv", csv_bytes(wide_frame()))
    use_this_data(at)
    goto(at, "data_model")
    scope = next(str(d.key) for d in at.data_editor if str(d.key).startswith("con_table_")).split("_")[2]
    assert at.selectbox(key=f"con_moves_feature_{scope}").value == "region"  # the one categorical feature
    north = next(m for m in at.multiselect if m.label == "From north to")
    north.set_value(["south"])
    next(b for b in at.button if b.label == "Apply region's moves").click()
    at.run()
    assert_clean(at)
    applied = active.unpack_constraints(session.params(at.session_state).constraints)
    assert applied == {"region": {"transitions": {"north": ["south"]}}}
    assert "region: limited category moves" in sidebar_text(at)
    table = next(d.value for d in at.data_editor if str(d.key).startswith("con_cattable_"))
    assert "limited category moves (kept)" in table.set_index("feature").loc["region", "note"]
