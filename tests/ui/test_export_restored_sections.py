"""The Export page's report after a restart or from a shared link (tcrex.ui.pages.export.report_sections): a
workspace keeps the audit's and the comparison's settings, never their results, and the report lost its "Where groups
differ" and "What changed between models" sections until those pages were visited again. The Export page now builds
them from the saved settings through the pages' own cached functions, and says so; settings it cannot use are said,
never dropped."""
from __future__ import annotations

import re
from datetime import datetime, timezone

from tcrex.ui.pages import export
from tcrex.ui.state import active, session

from tests.support.apptest_kit import assert_clean, goto, last_result, new_app

WHEN = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _section(html: str, anchor: str) -> str:
    found = re.search(rf'<section id="{anchor}" class="question">.*?</section>', html, flags=re.S)
    assert found, f"no {anchor} section in the report"
    return found.group(0)


def _report(at) -> str:
    ws = active.data_and_model()  # the default choices (loans sample, bundled model), outside the app's session
    return export.build_html(ws, last_result(at), audit=session.last_audit(at.session_state),
                             comparison=session.last_comparison(at.session_state), individuals=[], generated_at=WHEN)


def _other(box) -> str:
    """An option of the grouping box that is not its default (so the restored grouping is the saved one)."""
    default = box.value
    return next(o for o in box.options[1:] if o.split("  (")[0] != default and "(none)" not in o).split("  (")[0]


def test_a_new_session_on_the_saved_workspace_reports_the_same_audit_and_comparison_without_visiting_them():
    owner = new_app()
    bound = session.workspace_binding(owner.session_state)
    assert bound is not None and bound.id
    goto(owner, "audit")
    column = _other(owner.selectbox(key="audit_column"))
    owner.selectbox(key="audit_column").set_value(column).run()
    assert_clean(owner)
    goto(owner, "compare")
    grouping = _other(owner.selectbox(key="compare_column"))
    owner.selectbox(key="compare_column").set_value(grouping).run()
    assert_clean(owner)
    audit_a, comparison_a = session.last_audit(owner.session_state), session.last_comparison(owner.session_state)
    assert audit_a.column == column and comparison_a.column == grouping
    goto(owner, "export")  # the workspace is saved as the session runs
    seen = _report(owner)

    fresh = new_app()
    fresh.query_params["ws"] = bound.id
    fresh.run()  # the link reopens the saved page (Export); the audit and compare pages are never drawn here
    goto(fresh, "export")
    assert_clean(fresh)
    assert not session.has_widget("audit_column", fresh.session_state)  # the audit page was never drawn
    assert not session.has_widget("compare_column", fresh.session_state)
    listed = " ".join(m.value for m in fresh.markdown)
    assert f"audit by {column}: computed from the saved settings" in listed
    assert f"by {grouping}: computed from the saved settings" in listed
    assert "the subgroup audit" in listed and "the comparison with another model" in listed
    restored_audit = session.last_audit(fresh.session_state)
    restored_comparison = session.last_comparison(fresh.session_state)
    assert restored_audit.restored and restored_comparison.restored
    assert restored_audit.title == audit_a.title and restored_comparison.title == comparison_a.title
    assert restored_audit.result.table().equals(audit_a.result.table())
    assert restored_comparison.result.summary == comparison_a.result.summary

    built = _report(fresh)
    for anchor in ("groups-differ", "models-changed"):
        assert _section(built, anchor) == _section(seen, anchor)

    fresh.run()  # a rerun keeps saying where the sections come from
    assert f"audit by {column}: computed from the saved settings" in " ".join(m.value for m in fresh.markdown)


def test_a_saved_comparison_whose_model_b_file_is_gone_is_said_not_dropped():
    at = new_app()
    at.session_state[session.COMPARE_CHOICE] = {"kind": "upload", "target": 1, "target_label": "Good",
                                                "population": "test split"}
    goto(at, "export")
    assert_clean(at)
    listed = " ".join(m.value for m in at.markdown)
    assert "no comparison with another model: the saved comparison cannot be rebuilt" in listed
    assert "model B's file is not in this workspace" in listed
    assert "the comparison with another model;" not in listed and session.last_comparison(at.session_state) is None


def test_an_audit_and_a_comparison_of_a_filtered_population_are_rebuilt_from_the_saved_filter():
    """A filter's choices are saved with the workspace (Population.spec): the report after a restart rebuilds the
    same audit and comparison of the filtered rows, where it used to say "its population is a filter, which is not
    saved"."""
    owner = new_app()
    bound = session.workspace_binding(owner.session_state)
    goto(owner, "audit")
    next(s for s in owner.get("button_group") if s.key == "audit_pop_mode").set_value("filter").run()
    owner.selectbox(key="audit_pop_filter_feature").set_value("employment").run()
    values = owner.multiselect(key="audit_pop_filter_values_employment")
    values.set_value(list(values.options[:2])).run()
    assert_clean(owner)
    audit_a = session.last_audit(owner.session_state)
    assert audit_a.population.startswith("employment in {"), audit_a.population
    goto(owner, "compare")
    next(s for s in owner.get("button_group") if s.key == "compare_pop_mode").set_value("filter").run()
    owner.selectbox(key="compare_pop_filter_feature").set_value("age").run()
    assert_clean(owner)
    comparison_a = session.last_comparison(owner.session_state)
    assert " ≤ age ≤ " in comparison_a.population, comparison_a.population
    goto(owner, "export")
    seen = _report(owner)

    fresh = new_app()
    fresh.query_params["ws"] = bound.id
    fresh.run()
    goto(fresh, "export")
    assert_clean(fresh)
    listed = " ".join(m.value for m in fresh.markdown)
    assert "not saved" not in listed and "computed from the saved settings" in listed, listed
    restored_audit = session.last_audit(fresh.session_state)
    restored_comparison = session.last_comparison(fresh.session_state)
    assert restored_audit.restored and restored_audit.population == audit_a.population
    assert restored_audit.result.table().equals(audit_a.result.table())
    assert restored_comparison.restored and restored_comparison.population == comparison_a.population
    assert restored_comparison.result.summary == comparison_a.result.summary
    built = _report(fresh)
    for anchor in ("groups-differ", "models-changed"):
        assert _section(built, anchor) == _section(seen, anchor)


def test_every_population_the_selector_gives_is_rebuilt_from_its_spec_with_the_same_rows_and_label():
    """Population.spec is plain JSON (a workspace keeps it) and rebuilds exactly what the selector chose."""
    import json

    from tcrex.ui.widgets import components as ui

    new_app()
    ws = active.data_and_model()
    chosen = [ui.population_of(ws, mode) for mode in ("all", "fit", "test")] + [
        ui._kept_values(ws, "employment", ["Salaried", "Retired"]),
        ui._kept_range(ws, "age", 30.0, 45.5),
        ui._subgroup(ws, "home_ownership", "Rent"),
        ui._constant(ws, "age", 40.0),
    ]
    for pop in chosen:
        back = ui.population_from_spec(ws, json.loads(json.dumps(pop.spec)))
        assert back is not None and back.label == pop.label and back.index.equals(pop.index), pop.spec
    assert ui.population_from_spec(ws, {"mode": "filter", "feature": "gone", "values": [1]}) is None
