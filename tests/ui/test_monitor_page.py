"""The Monitor page (AppTest): a monitor of the store opened by name shows its history (headline, versions on a
timeline, the groups' shares across versions, the alerts in plain words naming the group), the people who lost
recourse at the last release open on the Individual page under either version; a monitor started on the active
analysis takes the active model as its first version, and "register this model as a new version" records the next
one (the same file again: no invalidation, no alert)."""

from __future__ import annotations

import os

import pytest

from tests.support.apptest_kit import assert_clean, charts, goto, new_app
from tests.support.monitor_case import LOANS_DEGRADED, LOANS_MONITOR, bundled_loans_monitor

from tcrex import datasets
from tcrex.monitor import Monitor
from tcrex.ui.state import session, workspace


def _button(at, label):
    return next(b for b in at.button if b.label == label)


@pytest.fixture(scope="module")
def store_monitor(tmp_path_factory):
    """The loans monitor with three versions, in the store the dashboard uses (TCREX_STATE_DIR of this run)."""
    state = os.environ["TCREX_STATE_DIR"]
    mon = Monitor(state)
    if LOANS_MONITOR not in mon.names():
        bundled_loans_monitor(state, tmp_path_factory.mktemp("loans-monitor"))
    return Monitor(state)


def test_a_monitor_of_the_store_shows_its_history_and_alerts(store_monitor):
    at = new_app()
    goto(at, "monitor")
    assert_clean(at)
    at.text_input(key="monitor_open_name").input(LOANS_MONITOR)  # monitors are listed only on opt-in
    _button(at, "Open this monitor").click().run()
    assert_clean(at)
    assert session.monitor_choice(at.session_state)["name"] == LOANS_MONITOR
    h = store_monitor.history(LOANS_MONITOR)
    text = " ".join(m.value for m in at.markdown)
    assert h.last.headline() in text
    shown = [w.value for w in at.warning if w.value.startswith("**Alert")]  # one box each, in the run's words
    assert shown and [s.split(":** ", 1)[1] for s in shown] == [a.message for a in h.last.alerts]
    column, value = LOANS_DEGRADED
    assert any(f"{column} = {value}" in s for s in shown)
    assert charts(at) >= 2  # the timeline and the groups' shares across versions
    assert not [e for e in at.expander if "earlier versions" in e.label]  # v2 raised none
    # the people who lost recourse at v3, one opened on the Individual page under v3
    lost = at.dataframe[1].value  # versions table first, then the people
    assert len(lost) > 0 and set(lost["status"]) == {"invalidated"}
    person = at.selectbox(key="monitor_person").value
    _button(at, "Open on the Individual page under v3").click().run()
    assert session.individual(at.session_state) == person
    assert session.individual_under_version(at.session_state) == {"monitor": LOANS_MONITOR, "version": "v3"}
    assert_clean(at)
    assert any("version v3 of the monitor" in i.value for i in at.info)


def test_start_monitoring_the_analysis_and_register_the_model_again(store_monitor):
    at = new_app()
    goto(at, "monitor")
    at.text_input(key="monitor_name").input("app monitor")
    _button(at, "Start monitoring").click().run()
    assert_clean(at)
    assert not [w.value for w in at.warning if "cannot start" in w.value], [w.value for w in at.warning]
    mon = Monitor(workspace.store())  # the dashboard's own store, which it wrote to
    first = mon.history("app monitor").last
    assert first.version.label == "v1" and first.version.origin["kind"] == "dashboard"
    assert first.n_people == len(datasets.load_bundled_loans())  # every row of the active data
    _button(at, "Register and re-check").click().run()
    assert_clean(at)
    again = mon.history("app monitor").last
    assert again.version.label == "v2" and again.version.model_sha256 == first.version.model_sha256
    assert again.counts["invalidated"] == 0 and again.alerts == []
    assert any("No alert at v2" in s.value for s in at.success)


def test_a_read_only_link_shows_the_monitor_and_changes_nothing(store_monitor):
    owner = new_app()
    goto(owner, "monitor")
    owner.text_input(key="monitor_open_name").input(LOANS_MONITOR)
    _button(owner, "Open this monitor").click().run()
    bound = session.workspace_binding(owner.session_state)
    viewer = new_app()
    viewer.query_params["ws"] = bound.view_id
    viewer.run()
    goto(viewer, "monitor")
    assert_clean(viewer)
    assert session.workspace_binding(viewer.session_state).read_only
    h = store_monitor.history(LOANS_MONITOR)
    assert h.last.headline() in " ".join(m.value for m in viewer.markdown)  # the same monitor, from the saved choice
    assert [w for w in viewer.warning if w.value.startswith("**Alert")]
    labels = [b.label for b in viewer.button]
    assert "Register and re-check" not in labels and "Follow another monitor" not in labels
    assert not [t for t in viewer.text_input if t.key in ("monitor_label", "monitor_name")]
