"""The Compare models page (AppTest): the bundled retrained model by default, numbers equal to compare_models on the
same rows, a selectable reference group, the drill-down, a model trained in the app, bad model files, and the
comparison in the exports and the report."""

from __future__ import annotations

import pytest

from tests.support.apptest_kit import assert_clean, charts, goto, new_app

from tcrex import datasets
from tcrex.compare import compare_models
from tcrex.ui.state import session


@pytest.fixture(scope="module")
def compared():
    at = new_app()
    goto(at, "compare")
    return at


def test_default_compares_the_bundled_retrained_model(compared):
    at = compared
    assert_clean(at)
    assert at.title[0].value == "Compare models"
    run = session.last_comparison(at.session_state)
    res = run.result
    assert run.model_b_label == "Bundled XGBoost, retrained"
    head = res.headline()
    assert any(head in m.value for m in at.markdown), "the headline is the page's first statement"
    assert "lose recourse" in head or "loses recourse" in head
    assert charts(at) >= 3  # flow, group gaps, rules under B
    # the same numbers as the engine on the same rows (the test split), with the public API
    fit = session.current_fit(at.session_state)
    frame = datasets.load_bundled_loans()
    X = frame.loc[res.people.index, fit.explainer.schema_.names]
    model_a = datasets.load_bundled_model()
    model_b = datasets.load_bundled_model(datasets.SAMPLE_DATA_DIR / datasets.LOANS_MODEL_B)
    want = compare_models(fit.explainer, X, model_b, model_a=model_a, target=1, n_boot=20)
    assert want.summary["changes"] == res.summary["changes"]
    assert want.summary["n_holds"] == res.summary["n_holds"]
    assert (want.people["change"].to_numpy() == res.people["change"].to_numpy()).all()
    assert res.summary["n"] == len(res.people) < len(frame)  # the test split by default


def _reference_key(at) -> str:
    return next(s.key for s in at.selectbox if s.label == "Reference group")


def test_reference_group_follows_the_grouping(compared):
    """The reference box is one widget per grouping: a group chosen under one column never shows (nor is used)
    under another, which starts at its own default reference."""
    at = compared
    first = session.last_comparison(at.session_state)
    other = next(g for g in first.result.group_labels if g != first.result.reference)
    before = _reference_key(at)
    at.selectbox(key=before).set_value(other).run()
    assert at.selectbox(key=before).value == other
    columns = at.selectbox(key="compare_column")
    raw = [c.split("  (")[0] for c in columns.options[1:]]  # the options as shown: "name  (its role)"
    column = next(c for c in raw if c != first.column)
    columns.set_value(column).run()
    assert_clean(at)
    now = session.last_comparison(at.session_state)
    assert now.column == column and now.column != first.column
    box = at.selectbox(key=_reference_key(at))
    # a new widget for the new grouping: the browser keeps a widget's chosen text under its key (AppTest does not
    # show that; the key is what keeps the old column's group out of the new column's box)
    assert box.key != before
    assert box.value == now.result.reference and box.value in now.result.group_labels
    at.selectbox(key="compare_column").set_value(first.column).run()  # back: a group of that column again
    assert at.selectbox(key=_reference_key(at)).value in first.result.group_labels
    assert_clean(at)


def test_reference_group_is_selectable_and_people_drill_down(compared):
    at = compared
    res = session.last_comparison(at.session_state).result
    assert res.groups is not None and len(res.group_labels) >= 2
    other = next(g for g in res.group_labels if g != res.reference)
    at.selectbox(key=_reference_key(at)).set_value(other).run()
    assert_clean(at)
    shown = next(d.value for d in at.dataframe if "reference" in d.value.columns)
    assert shown.set_index("group").loc[other, "reference"]
    at.multiselect(key="compare_changes").set_value(["kept"]).run()
    assert_clean(at)
    people = next(d.value for d in at.dataframe if "change" in d.value.columns)
    assert set(people["change"]) == {"kept"} and len(people) == res.summary["changes"]["kept"]
    person = at.selectbox(key="compare_person").value
    both = next(d.value for d in at.dataframe if "model B (new)" in d.value.columns)
    assert both.loc["recourse", "model B (new)"] == "verified"
    at.button(key="compare_open").click().run()
    assert session.individual(at.session_state) == person


def test_drill_down_opens_the_individual_page_under_model_b_and_back():
    """The person chosen on the Compare page, explained on the Individual page by explainer B on model B (what B's
    column of the side-by-side said), with a way back to the active model A."""
    at = new_app()
    goto(at, "compare")
    run = session.last_comparison(at.session_state)
    at.multiselect(key="compare_changes").set_value(["kept"]).run()
    person = at.selectbox(key="compare_person").value
    at.button(key="compare_open_b").click().run()
    goto(at, "individual")
    assert_clean(at)
    assert any("model B (Bundled XGBoost, retrained)" in i.value for i in at.info)
    frame = datasets.load_bundled_loans()
    x = frame.loc[[person], run.result.explainer_b.schema_.names]
    want = run.result.explainer_b.explain_one(x, model=run.model_b, class_names={0: "rejected", 1: "approved"})
    assert any(want.text in s.value for s in [*at.success, *at.info, *at.warning]), want.text
    at.button(key="ind_back_to_a").click().run()
    assert_clean(at)
    assert not any("model B" in i.value for i in at.info)


def test_export_page_offers_the_comparison_and_the_report_includes_it(compared):
    at = goto(compared, "export")
    assert_clean(at)
    labels = [b.label for b in at.get("download_button")]
    assert "Download comparison (JSON)" in labels and "Download comparison people (CSV)" in labels
    from tcrex.ui.pages import compare
    run = session.last_comparison(at.session_state)
    csv = compare.people_csv(run)()
    assert csv.splitlines()[0].startswith("row,") and len(csv.splitlines()) == len(run.result.people) + 1


def _kind(at, value):
    seg = next(w for w in at.get("button_group") if w.key == "compare_kind")
    seg.set_value(value).run()
    return at


def test_model_trained_in_the_app_and_a_bad_file(tmp_path):
    import xgboost as xgb

    at = new_app()
    goto(at, "compare")
    _kind(at, "train")
    assert_clean(at)
    run = session.last_comparison(at.session_state)
    assert "bootstrap resample" in run.model_b_label and run.result.summary["n"] > 0
    _kind(at, "upload")
    assert_clean(at)
    frame = datasets.make_loans(300, random_state=2)
    other = xgb.XGBClassifier(n_estimators=5).fit(frame[["income", "age"]], frame["approved"])
    other.save_model(str(tmp_path / "other.json"))
    at.get("file_uploader")[0].set_value(("other.json", (tmp_path / "other.json").read_bytes(),
                                          "application/json")).run()
    assert not at.exception
    assert any("Model B cannot be used" in w.value for w in at.warning), [w.value for w in at.warning]
