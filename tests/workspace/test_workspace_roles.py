"""Roles per workspace, enforced in the store (tcrex.workspace): owner, editor, viewer by e-mail, or viewers
"anyone signed in"; a stranger cannot open, read or change it; a viewer's every write is refused whatever id they
hold; the list shows each user only what they may open; the owner alone shares and deletes; every grant is logged."""
from __future__ import annotations

import pytest

from tcrex.workspace import (ANYONE, ReadOnlyWorkspace, UnknownWorkspace, WorkspaceError, WorkspaceStore)

OWNER, EDITOR, VIEWER, STRANGER = "ana@bank.example", "ed@bank.example", "vic@bank.example", "eve@else.example"


@pytest.fixture
def shared(tmp_path):
    store = WorkspaceStore(str(tmp_path))
    ws = store.create({"title": "loans"}, user=OWNER)
    digest = store.put_blob(ws.id, b"a,b\n1,2\n", "loans.csv", user=OWNER)
    store.grant(ws.id, EDITOR, "editor", user=OWNER)
    store.grant(ws.id, "Vic@Bank.example ", "viewer", user=OWNER)  # e-mail addresses compare trimmed, lower case
    return store, ws, digest


def _writes(store, ws, digest, user):
    """Every write the store offers, each through both ids."""
    for link in (ws.id, ws.view_id):
        yield lambda link=link: store.save(link, {"title": "changed"}, user=user)
        yield lambda link=link: store.put_blob(link, b"x", "x.csv", user=user)
        yield lambda link=link: store.drop_blob(link, digest, user=user)
        yield lambda link=link: store.delete(link, user=user)
        yield lambda link=link: store.grant(link, STRANGER, "viewer", user=user)


def test_roles_decide_what_each_user_may_do_whatever_id_they_hold(shared):
    store, ws, digest = shared
    for link in (ws.id, ws.view_id):
        assert store.open(link, user=OWNER).role == "owner"
        assert store.open(link, user=EDITOR).role == "editor" and not store.open(link, user=EDITOR).read_only
        seen = store.open(link, user=VIEWER)
        assert seen.role == "viewer" and seen.read_only
        assert store.get_blob(link, digest, user=VIEWER) == b"a,b\n1,2\n"
        with pytest.raises(UnknownWorkspace, match="not shared with you"):
            store.open(link, user=STRANGER)
        with pytest.raises(UnknownWorkspace):
            store.get_blob(link, digest, user=STRANGER)
    before = store.open(ws.id, touch=False)
    for write in _writes(store, ws, digest, VIEWER):
        with pytest.raises(ReadOnlyWorkspace):
            write()
    for write in _writes(store, ws, digest, STRANGER):
        with pytest.raises(UnknownWorkspace):
            write()
    after = store.open(ws.id, touch=False)
    assert (after.settings, after.revision, after.blobs) == (before.settings, before.revision, before.blobs)
    # The editor changes it through either id, but neither shares nor deletes it.
    store.save(ws.view_id, {"title": "edited"}, user=EDITOR)
    assert store.open(ws.id, user=OWNER).settings == {"title": "edited"}
    for owner_only in (lambda: store.delete(ws.id, user=EDITOR), lambda: store.grant(ws.id, STRANGER, "viewer",
                                                                                         user=EDITOR)):
        with pytest.raises(ReadOnlyWorkspace, match="owner"):
            owner_only()


def test_the_list_shows_each_user_only_what_they_may_open(shared):
    store, ws, _ = shared
    other = store.create({"title": "mine"}, user=STRANGER)
    assert [(s.title, s.role) for s in store.visible(OWNER)] == [("loans", "owner")]
    assert [(s.title, s.role) for s in store.visible(VIEWER.upper())] == [("loans", "viewer")]
    assert [s.title for s in store.visible(STRANGER)] == ["mine"]
    store.grant(other.id, ANYONE, "viewer", user=STRANGER)
    assert {(s.title, s.role) for s in store.visible(OWNER)} == {("loans", "owner"), ("mine", "viewer")}
    assert store.open(other.id, user="new@anywhere.example").read_only  # anyone signed in may look
    with pytest.raises(WorkspaceError, match="viewer only"):
        store.grant(other.id, ANYONE, "editor", user=STRANGER)


def test_sharing_is_logged_the_last_owner_stays_and_a_revoked_user_is_a_stranger(shared):
    store, ws, _ = shared
    assert store.roles(ws.id, user=OWNER) == {OWNER: "owner", EDITOR: "editor", VIEWER: "viewer"}
    shares = [e.details for e in store.activity(ws.id, user=OWNER) if e.action == "share"]
    assert shares == [{"principal": EDITOR, "role": "editor"}, {"principal": VIEWER, "role": "viewer"}]
    with pytest.raises(ReadOnlyWorkspace, match="owner only"):
        store.activity(ws.id, user=VIEWER)
    with pytest.raises(WorkspaceError, match="at least one owner"):
        store.revoke(ws.id, OWNER, user=OWNER)
    store.revoke(ws.id, VIEWER, user=OWNER)
    with pytest.raises(UnknownWorkspace):
        store.open(ws.view_id, user=VIEWER)
    with pytest.raises(WorkspaceError, match="not an e-mail"):
        store.grant(ws.id, "not an address", "viewer", user=OWNER)


def test_a_viewers_duplicate_is_theirs_alone(shared):
    store, ws, digest = shared
    copy = store.duplicate(ws.view_id, user=VIEWER)
    assert copy.role == "owner" and copy.id not in (ws.id, ws.view_id)
    assert store.roles(copy.id, user=VIEWER) == {VIEWER: "owner"}
    with pytest.raises(UnknownWorkspace):
        store.open(copy.id, user=OWNER)  # the original's owner has no role on the viewer's copy
    assert store.get_blob(copy.id, digest, user=VIEWER) == b"a,b\n1,2\n"


def test_links_without_sign_in_work_as_before(tmp_path):
    store = WorkspaceStore(str(tmp_path))
    ws = store.create({"t": 1})
    assert store.open(ws.id).role == "owner" and store.open(ws.view_id).role == "viewer"
    assert store.open(ws.id, user=STRANGER).role == "owner"  # a workspace nobody was granted a role on: by link
