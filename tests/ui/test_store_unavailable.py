"""A workspace store that cannot be used (here: a state folder that is a file) is said in the dashboard in words
naming the folder and what to do, and the dashboard works on as an unsaved session (AppTest)."""
from __future__ import annotations

import pytest

from tests.support.apptest_kit import goto, new_app

from tcrex.ui.state import session, workspace


@pytest.fixture
def broken_state(tmp_path, monkeypatch):
    path = tmp_path / "state"
    path.write_text("a file where the state folder should be")
    monkeypatch.setenv("TCREX_STATE_DIR", str(path))
    workspace.store.clear()
    yield path
    workspace.store.clear()  # the next test opens the suite's own store again


def test_an_unusable_store_is_said_with_the_folder_and_the_dashboard_works_on(broken_state):
    at = new_app()
    shown = [i.value for i in at.info if "Workspaces are unavailable on this server" in i.value]
    assert len(shown) == 1 and f"{broken_state} already exists and is not a folder; give a folder" in shown[0]
    assert "this session will not be saved" in shown[0] and not at.exception
    goto(at, "global_rules")  # the dashboard works on, unsaved
    bound = session.workspace_binding(at.session_state)
    assert not at.exception and bound.id == "" and bound.read_only  # no workspace was started in its place
