"""The workspace store (tcrex.workspace): links, read-only views, uploads, damage, durability, retention, archives.

Real SQLite files in a temporary state directory; a real PostgreSQL server (Debian's, started by the test as the
``postgres`` user) for the shared store; a real process killed with SIGKILL for durability.
"""
from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import zipfile

import pytest

from tcrex.workspace import (DamagedWorkspace, Limits, ReadOnlyWorkspace, UnknownWorkspace, WorkspaceError,
                             WorkspaceStore, WorkspaceTooLarge, export_workspace, import_workspace, is_id)

from tests.support.builders import zip_bytes
from tests.support.servers import postgres_server


@pytest.fixture
def store(tmp_path):
    return WorkspaceStore(str(tmp_path / "state"))


def test_ids_are_long_random_and_url_safe(store):
    ws = store.create({"title": "a"})
    assert is_id(ws.id) and is_id(ws.view_id) and ws.id != ws.view_id
    assert len(ws.id) == 32  # 24 random bytes = 192 bits
    assert len({store.create().id for _ in range(50)}) == 50


def test_settings_round_trip_and_revisions(store):
    ws = store.create({"page": "home"})
    assert store.save(ws.id, {"page": "audit", "params": {"tau": 0.9}}) == 1
    assert store.save(ws.id, {"page": "individual", "params": {"tau": 0.95}}) == 2
    again = store.open(ws.id)
    assert again.settings == {"page": "individual", "params": {"tau": 0.95}}
    assert again.revision == 2 and not again.read_only


def test_a_second_store_object_on_the_same_folder_sees_every_commit(tmp_path):
    # Two dashboard processes on one machine share the SQLite file: what one saved, the other opens.
    a, b = WorkspaceStore(str(tmp_path)), WorkspaceStore(str(tmp_path))
    ws = a.create({"n": 0})
    for n in range(1, 6):
        (a if n % 2 else b).save(ws.id, {"n": n})
        assert (b if n % 2 else a).open(ws.id).settings == {"n": n}


def test_read_only_link_opens_the_same_workspace_and_refuses_every_change(store):
    ws = store.create({"page": "audit"})
    digest = store.put_blob(ws.id, b"a,b\n1,2\n", "data.csv")
    view = store.open(ws.view_id)
    assert view.read_only and view.settings == {"page": "audit"} and view.link_id == ws.view_id
    assert store.get_blob(ws.view_id, digest) == b"a,b\n1,2\n"
    for change in (lambda: store.save(ws.view_id, {"page": "home"}),
                   lambda: store.put_blob(ws.view_id, b"x", "x.csv"),
                   lambda: store.drop_blob(ws.view_id, digest),
                   lambda: store.delete(ws.view_id)):
        with pytest.raises(ReadOnlyWorkspace, match="read-only link"):
            change()
    assert store.open(ws.id).settings == {"page": "audit"}
    # A viewer may take a copy of their own.
    mine = store.duplicate(ws.view_id)
    assert not mine.read_only and mine.id not in (ws.id, ws.view_id)
    assert store.get_blob(mine.id, digest) == b"a,b\n1,2\n"


@pytest.mark.parametrize("bad", ["", "nope", "../../../etc/passwd", "A" * 31 + "/", "x" * 33,
                                 "../" * 10 + "ab", "%2e%2e%2fworkspaces.sqlite", None, 12])
def test_forged_or_path_like_ids_are_unknown_workspaces(store, bad):
    store.create()
    with pytest.raises(UnknownWorkspace, match="does not name a workspace"):
        store.open(bad)


def test_a_well_formed_id_nobody_issued_and_a_deleted_one_are_unknown(store):
    ws = store.create({"t": 1})
    with pytest.raises(UnknownWorkspace, match="deleted, it expired, or the link is mistyped"):
        store.open("A" * 32)
    store.delete(ws.id)
    for link in (ws.id, ws.view_id):
        with pytest.raises(UnknownWorkspace, match="deleted"):
            store.open(link)


def test_uploads_are_kept_once_and_only_handed_to_workspaces_holding_them(store, tmp_path):
    a, b = store.create(), store.create()
    d1 = store.put_blob(a.id, b"model bytes", "m.json")
    d2 = store.put_blob(b.id, b"model bytes", "copy.json")
    assert d1 == d2
    files = [p for p in (tmp_path / "state" / "blobs").rglob("*") if p.is_file()]
    assert len(files) == 1  # one file for the same content
    assert store.open(a.id).blobs == {d1: ("m.json", 11)}
    c = store.create()
    with pytest.raises(UnknownWorkspace):  # knowing a digest is not enough
        store.get_blob(c.id, d1)
    with pytest.raises(UnknownWorkspace):
        store.get_blob(c.id, "../workspaces.sqlite")
    store.delete(a.id)
    assert store.get_blob(b.id, d1) == b"model bytes"  # still held by b
    store.delete(b.id)
    assert not [p for p in (tmp_path / "state" / "blobs").rglob("*") if p.is_file()]  # really removed


def test_a_damaged_upload_is_reported_not_returned(store, tmp_path):
    ws = store.create()
    digest = store.put_blob(ws.id, b"col\n1\n", "d.csv")
    path = tmp_path / "state" / "blobs" / digest[:2] / digest
    path.write_bytes(b"col\n2\n")
    with pytest.raises(DamagedWorkspace, match="damaged"):
        store.get_blob(ws.id, digest)
    path.unlink()
    with pytest.raises(DamagedWorkspace, match="missing"):
        store.get_blob(ws.id, digest)
    assert ws.id in store.check().damaged


def test_an_upload_replaced_by_a_huge_file_or_a_fifo_is_damage_never_read_whole(store, tmp_path):
    import os
    import resource
    ws = store.create()
    digest = store.put_blob(ws.id, b"col\n1\n", "d.csv")
    path = tmp_path / "state" / "blobs" / digest[:2] / digest
    path.unlink()
    with open(path, "wb") as fh:
        fh.truncate(8 * 2 ** 30)  # 8 GB on paper (sparse): read whole, it would fill memory
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(DamagedWorkspace, match="damaged"):
        store.get_blob(ws.id, digest)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 1_000_000  # KiB: far below 8 GB
    with pytest.raises(DamagedWorkspace, match="damaged"):  # the folder's own budget, without a recorded size
        store.blobs.get(digest)
    path.unlink()
    os.mkfifo(path)  # no writer: a plain open would wait for one for ever
    with pytest.raises(DamagedWorkspace, match="not a regular file"):
        store.get_blob(ws.id, digest)
    assert ws.id in store.check().damaged


def test_tampered_settings_are_detected_reported_and_skipped(store, tmp_path):
    good, bad = store.create({"title": "good"}), store.create({"title": "bad"})
    con = sqlite3.connect(tmp_path / "state" / "workspaces.sqlite")
    with con:
        con.execute("UPDATE workspaces SET settings = ? WHERE id = ?", ('{"title":"evil"}', bad.id))
    con.close()
    with pytest.raises(DamagedWorkspace, match="damaged"):
        store.open(bad.id)
    health = store.check()
    assert health.damaged == [bad.id]
    assert [s.title for s in store.recent()] == ["good"]
    assert store.open(good.id).settings == {"title": "good"}


def test_a_store_file_truncated_mid_write_is_detected_at_start(tmp_path):
    folder = tmp_path / "state"
    first = WorkspaceStore(str(folder))
    for i in range(200):
        first.create({"title": f"w{i}", "pad": "x" * 500})
    del first
    path = folder / "workspaces.sqlite"
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size // 2)
    again = WorkspaceStore(str(folder))  # never a crash
    notes = again.check().notes
    assert notes and "could not be read" in notes[0] and "moved aside" in notes[0]
    assert any(p.name.startswith("workspaces.sqlite.damaged-") for p in folder.iterdir())
    ws = again.create({"title": "fresh"})
    assert again.open(ws.id).settings == {"title": "fresh"}


def test_budgets_per_workspace_and_for_the_store(tmp_path):
    store = WorkspaceStore(str(tmp_path), limits=Limits(workspace_bytes=1000, total_bytes=1500))
    a, b = store.create(), store.create()
    store.put_blob(a.id, b"x" * 900, "a.csv")
    with pytest.raises(WorkspaceTooLarge, match="exceed"):
        store.put_blob(a.id, b"y" * 200, "b.csv")
    store.put_blob(b.id, b"x" * 900, "same.csv")  # the same content is not counted twice for the store
    c = store.create()
    with pytest.raises(WorkspaceTooLarge, match="store is full"):
        store.put_blob(c.id, b"z" * 700, "c.csv")
    with pytest.raises(WorkspaceTooLarge):
        store.save(a.id, {"pad": "p" * (3 * 2 ** 20)})


def test_unused_workspaces_expire_and_opening_keeps_one_alive(tmp_path):
    now = [1_000_000.0]
    store = WorkspaceStore(str(tmp_path), limits=Limits(expire_after_s=100.0), clock=lambda: now[0])
    old, used = store.create({"t": "old"}), store.create({"t": "used"})
    store.put_blob(old.id, b"old data", "old.csv")
    now[0] += 80
    store.open(used.id)
    now[0] += 40
    assert store.expire() == [old.id]
    assert not store.exists(old.id) and store.exists(used.id)
    assert not [p for p in (tmp_path / "blobs").rglob("*") if p.is_file()]


def test_eight_sessions_writing_at_once_lose_nothing(tmp_path):
    store = WorkspaceStore(str(tmp_path))
    spaces = [store.create({"n": 0}) for _ in range(8)]
    errors = []

    def session(ws):
        try:
            for n in range(1, 41):
                store.save(ws.id, {"n": n, "who": ws.id})
                store.put_blob(ws.id, f"{ws.id}-{n}".encode(), f"f{n}.csv")
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(ws,)) for ws in spaces]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for ws in spaces:
        again = store.open(ws.id)
        assert again.settings == {"n": 40, "who": ws.id} and again.revision == 40
        assert len(again.blobs) == 40


_WRITER = r"""
import sys
from tcrex.workspace import WorkspaceStore
store = WorkspaceStore(sys.argv[1])
ws_id = sys.argv[2]
n = 0
while True:
    n += 1
    store.save(ws_id, {"n": n})
    print(n, flush=True)   # printed only after save() returned: committed
"""


@pytest.mark.slow
def test_sigkill_at_any_moment_loses_at_most_the_action_in_flight(tmp_path):
    store = WorkspaceStore(str(tmp_path))
    ws = store.create({"n": 0})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    for stop_after in (3, 57):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), ws.id], stdout=subprocess.PIPE,
                                text=True, env=env)
        last = 0
        for line in proc.stdout:
            last = int(line)
            if last >= stop_after:
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        saved = WorkspaceStore(str(tmp_path)).open(ws.id).settings["n"]
        assert saved >= last  # every reported save survived; at most the one in flight is lost
        assert WorkspaceStore(str(tmp_path)).check().ok


def test_export_and_import_move_a_workspace_with_new_links(tmp_path):
    here, there = WorkspaceStore(str(tmp_path / "a")), WorkspaceStore(str(tmp_path / "b"))
    ws = here.create({"title": "board demo", "params": {"tau": 0.9}})
    d = here.put_blob(ws.id, b"x,y\n1,0\n", "loans.csv")
    data = export_workspace(here, ws.view_id)
    moved = import_workspace(there, data)
    assert moved.settings == ws.settings and moved.blobs == {d: ("loans.csv", 8)}
    assert moved.id != ws.id and there.get_blob(moved.id, d) == b"x,y\n1,0\n"
    assert json.loads(zipfile.ZipFile(io.BytesIO(data)).read("workspace.json"))["version"] == 1


def _manifest(**kw):
    base = {"format": "tcrex-workspace", "version": 1, "settings": {}, "files": []}
    base.update(kw)
    return json.dumps(base)


@pytest.mark.parametrize("data, message", [
    (b"not a zip", "not a zip archive"),
    (zip_bytes({"other.txt": "x"}), "workspace.json is missing"),
    (zip_bytes({"workspace.json": "{"}), "not JSON"),
    (zip_bytes({"workspace.json": json.dumps({"format": "other"})}), "not tcrex-workspace"),
    (zip_bytes({"workspace.json": _manifest(version=99)}), "version 99 is not supported"),
    (zip_bytes({"workspace.json": _manifest(files=[{"digest": "0" * 64, "name": "a.csv", "size": 3}])}),
     "lacks the upload"),
    (zip_bytes({"workspace.json": _manifest(files=[{"digest": "0" * 64, "name": "a.csv", "size": 3}]),
           "files/" + "0" * 64: "abc"}), "damaged"),
    (zip_bytes({"workspace.json": _manifest(files=[{"digest": "../../x", "name": "a.csv", "size": 3}])}),
     "does not describe"),
])
def test_hostile_workspace_files_get_a_clear_message(tmp_path, data, message):
    store = WorkspaceStore(str(tmp_path))
    with pytest.raises(WorkspaceError, match=message):
        import_workspace(store, data)
    assert store.recent() == []  # nothing half-imported


def test_a_zip_bomb_is_refused_from_its_directory(tmp_path):
    store = WorkspaceStore(str(tmp_path), limits=Limits(workspace_bytes=10_000))
    big = b"\0" * 50_000
    import hashlib
    digest = hashlib.sha256(big).hexdigest()
    data = zip_bytes({"workspace.json": _manifest(files=[{"digest": digest, "name": "big.csv", "size": len(big)}]),
                 f"files/{digest}": big})
    assert len(data) < 1_000
    with pytest.raises(WorkspaceTooLarge, match="budget"):
        import_workspace(store, data)


# ------------------------------------------------------------------ PostgreSQL: two "servers" on one database
@pytest.fixture
def postgres_url():
    with postgres_server() as url:
        yield url


@pytest.mark.cluster
def test_two_servers_on_one_postgresql_serve_one_workspace_alternately(postgres_url, tmp_path):
    blobs = str(tmp_path / "shared-blobs")
    one = WorkspaceStore(postgres_url, blobs=blobs)
    two = WorkspaceStore(postgres_url, blobs=blobs)
    ws = one.create({"n": 0})
    digest = two.put_blob(ws.id, b"a,b\n1,2\n", "d.csv")
    for n in range(1, 7):
        (one if n % 2 else two).save(ws.id, {"n": n})
        seen = (two if n % 2 else one).open(ws.id)
        assert seen.settings == {"n": n} and seen.revision == n
    assert one.get_blob(ws.view_id, digest) == b"a,b\n1,2\n"
    with pytest.raises(ReadOnlyWorkspace):
        two.save(ws.view_id, {"n": 99})
    errors = []

    def session(store, i):
        try:
            mine = store.create({"i": i})
            for n in range(20):
                store.save(mine.id, {"i": i, "n": n})
            assert store.open(mine.id).settings == {"i": i, "n": 19}
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=session, args=((one, two)[i % 2], i)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    two.delete(ws.id)
    with pytest.raises(UnknownWorkspace):
        one.open(ws.id)


@pytest.mark.slow
def test_cli_exports_and_imports_a_workspace(tmp_path):
    env = {**os.environ, "TCREX_STATE_DIR": str(tmp_path / "state"), "TCREX_STORE": ""}
    store = WorkspaceStore(str(tmp_path / "state"))
    ws = store.create({"title": "audit of loans"})
    store.put_blob(ws.id, b"a,b\n1,2\n", "loans.csv")
    cli = [sys.executable, "-m", "tcrex", "workspace"]
    out = tmp_path / "ws.zip"
    done = subprocess.run(cli + ["export", ws.id, "--out", str(out)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stderr
    env["TCREX_STATE_DIR"] = str(tmp_path / "other")
    done = subprocess.run(cli + ["import", str(out)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    new_id = done.stdout.split("id: ", 1)[1].split()[0]
    moved = WorkspaceStore(str(tmp_path / "other")).open(new_id)
    assert moved.settings == {"title": "audit of loans"} and len(moved.blobs) == 1
    bad = subprocess.run(cli + ["export", "../../etc/passwd", "--out", str(tmp_path / "x.zip")], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "does not name a workspace" in bad.stderr and "Traceback" not in bad.stderr
