"""Read-only enforced on the server, and secure defaults, in the real app (AppTest runs app.py and its pages):
a viewer's session has every input disabled on every page, a value forged for a disabled input is discarded and
the store's contents are unchanged; Duplicate by a viewer gives links of the viewer's own; no page lists
editing links unless the operator opts in on a loopback-only server."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from tcrex.ui.state import read_only, session, workspace
from tcrex.workspace import WorkspaceStore

from tests.support.apptest_kit import APP, PAGES, goto, new_app

_INPUT_TYPES = ("button", "checkbox", "toggle", "radio", "selectbox", "multiselect", "select_slider", "slider",
                "text_input", "text_area", "number_input", "date_input", "time_input", "color_picker",
                "button_group", "chat_input")


def _inputs(at: AppTest) -> list:
    found = []
    for kind in _INPUT_TYPES:
        found.extend(at.get(kind))
    return found


def _store_contents() -> str:
    """Every workspace row and upload of the test's store, as text (what a viewer must never change)."""
    db = WorkspaceStore.from_env()
    with db.transaction() as tx:
        rows = tx.execute("SELECT id, view_id, settings, checksum, revision, created, updated FROM workspaces "
                          "ORDER BY id").fetchall()
        blobs = tx.execute("SELECT ws_id, digest, size, name FROM workspace_blobs ORDER BY ws_id, digest").fetchall()
    return json.dumps([[list(r) for r in rows], [list(b) for b in blobs]])


def _owner_with_a_change():
    owner = new_app()
    goto(owner, "individual")
    key = next(n.key for n in owner.number_input if str(n.key).startswith("ind_row_")) \
        if any(str(n.key).startswith("ind_row_") for n in owner.number_input) else None
    if key is None:
        owner.segmented_control(key="ind_mode").set_value("row").run()
        key = next(n.key for n in owner.number_input if str(n.key).startswith("ind_row_"))
    owner.number_input(key=key).set_value(7).run()
    return owner, session.workspace_binding(owner.session_state)


def _viewer(view_id: str, page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["ws"] = view_id
    at.run()
    if page:
        goto(at, page)
    return at


def test_a_viewer_has_every_input_disabled_on_every_page_and_changes_nothing():
    owner, bound = _owner_with_a_change()
    assert bound.id and not bound.read_only
    assert not read_only.active(owner.session_state)
    assert [w for w in _inputs(owner) if not w.disabled]  # the owner's inputs are live (the check can fail)
    before = _store_contents()
    viewer = _viewer(bound.view_id)
    assert read_only.active(viewer.session_state)
    for page in [*PAGES, "workspaces"]:
        goto(viewer, page)
        assert not viewer.exception, (page, [e.value for e in viewer.exception])
        live = [(type(w).__name__, w.key) for w in _inputs(viewer) if not w.disabled
                and w.key not in read_only.ALLOWED_KEYS]
        assert not live, (page, live)
    # What a forged websocket message does: report a value for a disabled input (AppTest's set_value refuses, as
    # a browser would, so the value is put in the widget state it sends). Streamlit discards it on the server.
    goto(viewer, "individual")
    box = next(n for n in viewer.number_input if str(n.key).startswith("ind_row_"))
    shown = box.value
    box._value = int(shown) + 3
    viewer.run()
    assert next(n for n in viewer.number_input if n.key == box.key).value == shown
    assert _store_contents() == before  # not one row or upload changed


def test_a_viewer_duplicate_gives_links_of_their_own_and_never_the_originals_editing_link():
    owner, bound = _owner_with_a_change()
    viewer = _viewer(bound.view_id, "workspaces")
    viewer.button(key="ws_duplicate").click().run()
    mine = session.workspace_binding(viewer.session_state)
    assert not mine.read_only and mine.id not in (bound.id, bound.view_id)
    assert not read_only.active(viewer.session_state)
    goto(viewer, "workspaces")
    shown = [*(m.value for m in viewer.markdown), *(c.value for c in viewer.code), *(c.value for c in viewer.caption)]
    assert not [s for s in shown if bound.id in s], shown  # the original's editing link appears nowhere
    assert any(mine.id in s for s in shown) and any(mine.view_id in s for s in shown)
    db = workspace.store()  # the store the dashboard wrote the copy to
    assert db.open(mine.id).settings["session"] == db.open(bound.id).settings["session"]  # the same analysis


def test_no_page_lists_editing_links_by_default(monkeypatch):
    owner, bound = _owner_with_a_change()
    stranger = new_app()  # no link: a visitor of the server
    goto(stranger, "workspaces")
    shown = [*(m.value for m in stranger.markdown), *(c.value for c in stranger.code)]
    assert not [s for s in shown if bound.id in s or bound.view_id in s], shown
    assert not workspace.listing_allowed()


@pytest.mark.parametrize("address, listed", [("127.0.0.1", True), ("0.0.0.0", False), (None, False)])
def test_listing_is_an_opt_in_honoured_on_loopback_only(monkeypatch, address, listed):
    from streamlit import config

    monkeypatch.setenv("TCREX_LIST_WORKSPACES", "1")
    old = config.get_option("server.address")
    config.set_option("server.address", address)
    try:
        assert workspace.listing_allowed() is listed
        monkeypatch.setenv("TCREX_SHARED_SERVER", "1")
        assert workspace.listing_allowed() is False
    finally:
        config.set_option("server.address", old)


def test_a_walk_through_the_app_is_recorded_in_order_and_only_the_owner_sees_the_log():
    from tests.support.apptest_kit import apply_params

    at = new_app()
    bound = session.workspace_binding(at.session_state)
    apply_params(at, tau=0.95)
    goto(at, "audit")
    assert not at.exception, [e.value for e in at.exception]
    goto(at, "audit")  # the same audit shown again is not a new run
    goto(at, "activity")
    assert not at.exception, [e.value for e in at.exception]
    actions = [e.action for e in workspace.store().activity(bound.id)]
    assert actions[0] == "create" and actions.count("audit") == 1
    params = [e for e in workspace.store().activity(bound.id) if e.action == "parameters"][-1]
    assert params.seq < next(e.seq for e in workspace.store().activity(bound.id) if e.action == "audit")
    assert params.details["tau"] == 0.95 and params.actor == "editing link"
    assert any("chain is intact" in s.value for s in at.success)
    viewer = _viewer(bound.view_id, "activity")
    assert any("owner only" in i.value for i in viewer.info)
    assert not viewer.dataframe
