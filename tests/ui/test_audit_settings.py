"""The audit page: choose the reference, colours by direction, settings kept across pages,
intersectional groups, a sensible default column, and constraint hints as buttons."""

from __future__ import annotations

from tcrex.ui.pages import audit
from tcrex.ui.state import session

from tests.support.apptest_kit import assert_clean, goto, last_result, new_app, planted_groups_app


def _markdown(at) -> str:
    return " ".join(m.value for m in at.markdown)


def groups_app():
    """The planted-disparity data on the audit page, with ``group`` kept as "audit only"."""
    at = planted_groups_app()
    goto(at, "audit")
    assert_clean(at)
    return at


def test_reference_group_is_chosen_and_colours_follow_the_direction():
    at = groups_app()
    assert at.selectbox(key="audit_column").value == "group"
    assert at.selectbox(key=audit.reference_key("audit", "group")).value == "__largest__"
    text = _markdown(at)
    # group B needs more changes than the reference A: worse for B, red
    assert ":red[**Individuals with group = B need on average" in text and "(worse for this group)" in text
    at.selectbox(key=audit.reference_key("audit", "group")).set_value("B").run()
    assert_clean(at)
    text = _markdown(at)
    assert "each group is compared with group = B" in text
    # the same gap seen from A: fewer changes is good news for A -- green, never red
    assert ":green[**Individuals with group = A need on average" in text and "fewer changes" in text
    assert ":red[**Individuals with group = A need on average" not in text
    forest = next(c.proto.spec for c in at.get("plotly_chart") if "Gaps vs group = B" in c.proto.spec)
    from tcrex.figures import _audit as figs
    assert figs.BETTER_COLOR in forest
    at.segmented_control(key="audit_pop_mode").set_value("all").run()
    assert_clean(at)
    # the choices are kept across pages
    goto(at, "global_rules")
    goto(at, "audit")
    assert_clean(at)
    assert at.selectbox(key=audit.reference_key("audit", "group")).value == "B"
    assert at.segmented_control(key="audit_pop_mode").value == "all"
    assert "each group is compared with group = B" in _markdown(at) and "out of 1,600" in _markdown(at)
    assert last_result(at) is not None


def test_two_grouping_columns_audit_their_intersections_and_keep_the_small_group_rule():
    at = groups_app()
    at.selectbox(key="audit_second").set_value("employment").run()
    assert_clean(at)
    text = _markdown(at)
    assert "groups of group × employment" in text
    table = at.dataframe[0].value
    assert set(table["group"]) >= {"A · Salaried", "B · Unemployed"}
    assert "group = B and employment = Unemployed" in text or "group = A and employment" in text
    small = table[table["need recourse"] < 30]
    assert small.empty or small["small group"].all()
    # a smaller minimum group size applies to every intersection
    at.number_input(key="audit_min_size").set_value(400).run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert table["small group"].all() == (table["need recourse"] < 400).all()
    assert "Small group: only" in _markdown(at)
    # the intersections are kept across pages too
    goto(at, "home")
    goto(at, "audit")
    assert at.selectbox(key="audit_second").value == "employment"
    assert at.number_input(key="audit_min_size").value == 400


def test_audit_hints_are_buttons_that_apply_the_constraint():
    at = new_app()
    goto(at, "audit")
    assert_clean(at)
    at.selectbox(key="audit_column").set_value("debt_to_income").run()  # a feature people are told to change
    text = _markdown(at)
    assert "consider marking it immutable" in text
    assert "constraints={" not in text  # no Python snippet for a person to copy: buttons instead
    assert "n_late_payments" in text and "past events" in text  # each suggestion with its reason
    next(b for b in at.button if b.label.startswith("Apply these")).click()
    at.run()
    assert_clean(at)
    assert session.params(at.session_state).constraint_spec == {
        "age": "increase_only", "credit_history_years": "increase_only", "n_late_payments": "immutable"}
    assert not any(b.label.startswith("Apply these") for b in at.button)  # applied: no longer offered
    next(b for b in at.button if b.label == "Mark debt_to_income immutable").click()
    at.run()
    assert_clean(at)
    spec = session.params(at.session_state).constraint_spec
    assert spec["debt_to_income"] == "immutable" and spec["n_late_payments"] == "immutable"
    assert not any(b.label == "Mark debt_to_income immutable" for b in at.button)
    assert "debt_to_income: immutable" in " ".join(c.value for c in at.sidebar.caption)
    assert at.selectbox(key="audit_column").value == "debt_to_income"  # the audit stays where it was
    assert not any("Not applied yet" in w.value for w in at.sidebar.warning)  # the editor shows what is applied
    # advice never asks to change an immutable feature
    actions = last_result(at).actions(_workspace())
    assert not actions["n_late_payments"].eq("change").any() and not actions["debt_to_income"].eq("change").any()


def _workspace():
    from tcrex.ui.state import active
    return active.data_and_model()  # the default choices (loans sample, bundled model)


def test_default_group_column_is_a_protected_looking_column_or_asks():
    from tcrex.ui.pages import audit
    import numpy as np
    import pandas as pd
    from tcrex.ui.state.sources import ActiveData, ActiveModel, DataSpec, ModelSpec
    from tcrex.ui.state.active import DataAndModel

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"income": rng.normal(size=200), "colour": rng.choice(list("abc"), 200),
                          "gender": rng.choice(["F", "M"], 200), "label": rng.integers(0, 2, 200)})

    def ws_of(frame, categorical):
        data = ActiveData(key="k", label="", description="", frame=frame, label_column="label",
                          categorical=tuple(categorical), numeric=(), fit_index=frame.index, test_index=frame.index[:0],
                          spec=DataSpec("upload", "x"))
        model = ActiveModel(key="m", label="", description="", kind="column", task="classification", predict=None,
                            spec=ModelSpec("column", "label"))
        return DataAndModel(data=data, model=model, X=frame[[c for c in frame.columns if c != "label"]],
                         y_pred=frame["label"].to_numpy())

    ws = ws_of(frame, ["colour", "gender"])
    assert audit.default_column(ws, audit.group_columns(ws)) == "gender"  # protected-looking first
    numeric = frame[["income", "label"]].assign(score=rng.normal(size=200))
    ws = ws_of(numeric, [])
    assert audit.default_column(ws, audit.group_columns(ws)) is None  # nothing sensible: the page asks
