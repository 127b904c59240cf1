"""A categorical feature (without a declared order) is offered only *free* or *immutable* -- never "increase only"
or "decrease only" -- in the sidebar editor and in the Data & model page's constraints tables, in AppTest."""

from __future__ import annotations

import json

from tests.support.apptest_kit import assert_clean, csv_bytes, goto, last_result, new_app, upload_data, \
    use_this_data, wide_frame

from tcrex.ui.state import active, session

DIRECTIONS = {"increase only", "decrease only"}


def _options(editor) -> list:
    return json.loads(editor.proto.columns)["constraint"]["type_config"]["options"]


def test_the_sidebar_offers_categorical_features_no_direction():
    at = new_app()
    assert_clean(at)
    categorical = {f.name for f in last_result(at).explainer.schema_.features if f.is_categorical}
    boxes = {s.label: s.options for s in at.sidebar.selectbox
             if str(s.key).startswith("con_kind_")}
    assert categorical and categorical <= set(boxes), (categorical, boxes)
    for feature, options in boxes.items():
        if feature in categorical:
            assert options == ["free", "immutable"], (feature, options)
        else:
            assert DIRECTIONS <= set(options), (feature, options)


def test_the_constraints_tables_offer_categorical_features_no_direction():
    frame = wide_frame()
    frame["education"] = frame.f02.map(lambda v: "school" if v < -0.5 else "college" if v < 0.5 else "university")
    at = new_app()
    upload_data(at, "wide.csv", csv_bytes(frame))
    use_this_data(at)
    goto(at, "data_model")
    assert_clean(at)
    numeric = next(d for d in at.data_editor if str(d.key).startswith("con_table_"))
    categorical = next(d for d in at.data_editor if str(d.key).startswith("con_cattable_"))
    assert set(categorical.value.feature) == {"region", "education"}
    assert set(categorical.value["type"]) == {"categorical"}
    assert _options(categorical) == ["free", "immutable"]
    assert not set(numeric.value.feature) & {"region", "education"}
    assert DIRECTIONS <= set(_options(numeric))
    # an edit in the categorical table applies with the numeric table's rows
    row = list(categorical.value.feature).index("education")
    at.session_state[categorical.key] = {"edited_rows": {row: {"constraint": "immutable"}}, "added_rows": [],
                                         "deleted_rows": []}
    at.run()
    next(b for b in at.button if b.label == "Apply constraints").click()
    at.run()
    assert_clean(at)
    assert active.unpack_constraints(session.params(at.session_state).constraints) == {
        "age": "increase_only", "education": "immutable"}
    assert "education: immutable" in last_result(at).explainer.constraints_.describe()


def test_a_direction_forced_on_a_categorical_feature_is_refused_not_applied():
    """The table's cell choices are the browser's; a direction sent for a categorical feature anyway (the
    widget state written directly) is refused with the engine's reason and nothing is applied."""
    at = new_app()
    upload_data(at, "wide.csv", csv_bytes(wide_frame()))
    use_this_data(at)
    goto(at, "data_model")
    categorical = next(d for d in at.data_editor if str(d.key).startswith("con_cattable_"))
    at.session_state[categorical.key] = {"edited_rows": {0: {"constraint": "increase only"}}, "added_rows": [],
                                         "deleted_rows": []}
    at.run()
    next(b for b in at.button if b.label == "Apply constraints").click()
    at.run()
    assert not at.exception
    refused = [e.value for e in at.error if e.value.startswith("Not applied")]
    assert refused and "region" in refused[0] and "categorical" in refused[0], [e.value for e in at.error]
    assert session.params(at.session_state).constraints == ()
