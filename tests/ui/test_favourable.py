"""One favourable outcome for every page, export, report and audit; recourse checked on the model."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from tcrex import datasets
from tcrex.vocabulary import ALREADY_IN_TARGET, RECOURSE_PLAIN, STATUS_PLAIN
from tcrex.ui.state import session

from tests.support.apptest_kit import (apply_params, assert_clean, csv_bytes, goto, last_result, new_app,
                                       outputs_from_a_column, sidebar_text, upload_data, use_this_data)


def _markdown(at) -> str:
    return " ".join(m.value for m in at.markdown)


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_the_loans_sample_starts_at_approved_and_every_page_counts_the_same_people():
    at = new_app()
    assert session.params(at.session_state).target == 1  # the sample's metadata: 1 = approved
    assert "Favourable outcome:** approved" in sidebar_text(at)
    result = last_result(at)
    assert len(result.explainer.targets_) == 1  # no rules toward "rejected"
    expl = result.explanations
    y = session.caches(at.session_state)["outputs"]
    approved = np.asarray(next(iter(y.values()))) == 1
    assert (expl["status"].astype(str)[approved] == ALREADY_IN_TARGET).all()  # nobody is told how to lose it

    goto(at, "change_keep")  # the test split by default
    assert_clean(at)
    need = int(_metric(at, "Need recourse").replace(",", ""))
    assert _metric(at, "Verified by a point that follows the advice").endswith("%")
    assert any("a similar real case only" in c.value for c in at.caption)  # the fall-backs counted apart

    goto(at, "audit")  # the same population (test split), the same favourable outcome, no second picker
    assert_clean(at)
    assert "**Favourable outcome** (sidebar)  \napproved" in _markdown(at)
    table = at.dataframe[0].value
    assert int(table["need recourse"].sum()) == need
    assert "share with verified recourse" in table.columns  # the audit counts the verified advice

    goto(at, "global_rules")
    assert_clean(at)
    assert _metric(at, "Target") == "approved"
    rules = at.table[0].value
    assert {"serves", "at nearest point", "own advice", "via next rule", "by minimal change",
            "not verified"} <= set(rules.columns)
    # every individual a rule serves is counted by what verifies them (or as not verified)


def test_exports_and_report_describe_the_favourable_outcome_and_the_model_check():
    from tcrex.ui.pages import export
    from tcrex.ui.state import active

    at = new_app()
    goto(at, "export")
    assert_clean(at)
    result = last_result(at)
    ws = active.data_and_model()  # the default choices (loans sample, bundled model), outside the app's session
    assert ws.key() == session.last_good_fit(at.session_state)[0]
    frame = pd.read_csv(io.StringIO(export.explanations_csv(ws, result)()))
    assert set(frame["target_description"].fillna("")) <= {"approved", ""}
    assert set(frame["model_output_name"]) == {"approved", "rejected"}
    assert (frame.loc[frame["model_output"] == 1, "status_code"] == ALREADY_IN_TARGET).all()
    assert set(frame["status"]) <= set(STATUS_PLAIN.values())  # plain words for people, the codes beside them
    need = frame["status_code"] != ALREADY_IN_TARGET
    # every point is checked: "verified" exactly where the model confirms it; the others (advice beyond max_changes
    # features) get a similar case, said as such
    assert (frame.loc[need, "recourse_verified"].astype(bool) == (frame.loc[need, "recourse_code"] == "verified")).all()
    assert set(frame.loc[need & (frame["recourse_code"] != "verified"), "recourse_code"]) <= {"similar_case", "none"}
    assert set(frame["point_source_code"].dropna()) <= {"boundary", "searched", "next_rule", "minimal_change",
                                                        "example"}
    assert set(frame["recourse"].dropna()) <= set(RECOURSE_PLAIN.values())
    verified = frame["recourse_code"] == "verified"
    # the changes a person reads are the confirmed point's: never 0 for someone who needs a change
    assert (frame.loc[verified, "changes"] == frame.loc[verified, "changed"].str.count("; ") + 1).all()
    assert frame.loc[need & ~verified, "changes"].isna().all()
    assert verified.any() and (frame.loc[verified, "recourse_verified"].astype(bool)).all()
    # the exported sentence names exactly the exported changed features
    for text, changed in zip(frame.loc[verified, "verified_text"], frame.loc[verified, "changed"]):
        assert all(f"{f} to " in text for f in changed.split("; "))
    html = export.build_html(ws, result)
    assert "of them get a change the model confirms" in html and "Checked on the model" in html
    assert "median features the rule asks to change" not in html  # the verified figures head the report
    assert "favourable outcome" in html and "approved" in html
    assert "the model agrees at the recommended point" in html


def test_both_directions_stays_an_explicit_choice():
    at = new_app()
    apply_params(at, target="__default__")
    assert_clean(at)
    assert session.params(at.session_state).target is None
    assert "both directions" in sidebar_text(at)
    assert len(last_result(at).explainer.targets_) == 2
    goto(at, "audit")  # the audit needs one favourable outcome: it asks, defaulting to approved
    assert_clean(at)
    assert at.selectbox(key="audit_target").value == 1
    goto(at, "change_keep")  # the choice stands across pages
    assert session.params(at.session_state).target is None


def test_the_individual_page_shows_the_models_verdict_at_the_recommended_point():
    at = new_app()
    goto(at, "individual")
    assert_clean(at)
    text = _markdown(at)
    assert "Checked on the model" in text or "Only the real example works" in text
    table = at.dataframe[0].value
    assert table.iloc[0]["feature"] == "⟨model output⟩"
    assert str(table.iloc[0]["recommended point"]).startswith("✓")
    actions = list(table["action"].iloc[1:])
    assert actions == sorted(actions, key={"change": 0, "keep": 1, "free": 2}.get)  # changes first


def test_a_label_nothing_names_makes_the_sidebar_ask():
    at = new_app()
    frame = datasets.load_bundled_loans().head(600)
    frame["approved"] = np.where(frame["approved"] == 1, "B", "A")
    upload_data(at, "ab.csv", csv_bytes(frame))
    use_this_data(at)
    assert_clean(at)
    assert session.params(at.session_state).target is None
    assert any("only suggested" in i.value for i in at.sidebar.info)
    apply_params(at, target="class:B")  # choosing it in the sidebar answers the question too
    assert_clean(at)
    assert session.params(at.session_state).target == "B"
    assert not any("only suggested" in i.value for i in at.sidebar.info)


def test_outputs_from_a_column_say_the_points_are_not_checked():
    at = outputs_from_a_column()
    goto(at, "individual")
    assert_clean(at)
    assert "Not checked on a model" in _markdown(at) or "already" in _markdown(at).lower()
    goto(at, "change_keep")
    assert _metric(at, "Verified on the model") == "–"
