"""The activity log (tcrex.workspace): append-only, hash-chained, never the data; the chain check finds a changed,
removed or inserted entry; retention removes a prefix and keeps the chain checkable; exports neutralise formulas;
the CLI check says intact or broken. Real SQLite stores, and a real PostgreSQL server for the shared store."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pandas as pd
import pytest

from tcrex.workspace import Limits, ReadOnlyWorkspace, WorkspaceStore, log_csv, log_json

from tests.support.servers import postgres_server


def _walk(store):
    """A scripted walk: create, two uploads, parameters, constraints, an audit, an export, duplicate, delete."""
    ws = store.create({"title": "loans"}, actor="ana@bank.example")
    store.put_blob(ws.id, b"age,income\n30,40\n", "loans.csv", actor="ana@bank.example")
    store.put_blob(ws.id, b'{"learner": {}}', "model.json", actor="ana@bank.example")
    store.log(ws.id, "parameters", {"rho": 0.05, "tau": 0.9}, actor="ana@bank.example")
    store.log(ws.id, "constraints", {"constraints": {"age": "increase_only"}}, actor="ana@bank.example")
    store.log(ws.id, "audit", {"column": "sex"}, actor="ana@bank.example")
    store.log(ws.view_id, "export", {"file": "report.html"}, actor="board@bank.example")
    copy = store.duplicate(ws.view_id, actor="board@bank.example")
    store.delete(ws.id, actor="ana@bank.example")
    return ws, copy


def _check_walk(store):
    ws, copy = _walk(store)
    # The workspace's entries survive its deletion, under its read-only id, in the order they happened.
    with store.transaction() as tx:
        rows = tx.execute("SELECT action, actor, details FROM activity_log WHERE workspace = ? ORDER BY seq",
                          (ws.view_id,)).fetchall()
    assert [r[0] for r in rows] == ["create", "upload", "upload", "parameters", "constraints", "audit", "export",
                                    "delete"]
    upload = json.loads(rows[1][2])
    assert upload == {"name": "loans.csv", "sha256": upload["sha256"], "bytes": 17} and len(upload["sha256"]) == 64
    assert rows[6][1] == "board@bank.example"
    assert [e.action for e in store.activity(copy.id)] == ["duplicate"]
    assert store.activity(copy.id)[0].details == {"from": ws.view_id}
    everything = json.dumps([e.as_dict() for e in store.activity()])
    assert "30,40" not in everything and "learner" not in everything  # never the data
    assert ws.id not in everything  # never an editing link
    check = store.check_log()
    assert check.ok and check.entries == 9 and check.head == store.activity()[-1].hash
    return copy


def test_a_scripted_walk_is_recorded_in_order_and_the_chain_is_intact(tmp_path):
    _check_walk(WorkspaceStore(str(tmp_path)))


@pytest.mark.parametrize("tamper, problem", [
    ("UPDATE activity_log SET details = '{\"column\":\"age\"}' WHERE action = 'audit'", "was changed"),
    ("UPDATE activity_log SET actor = 'someone@else' WHERE seq = 2", "was changed"),
    ("DELETE FROM activity_log WHERE seq = 4", "entry 4 is missing"),
    ("UPDATE activity_log SET seq = seq + 100 WHERE seq = 9", "entry 9 is missing"),
])
def test_a_modified_entry_breaks_the_chain_check(tmp_path, tamper, problem):
    store = WorkspaceStore(str(tmp_path))
    _walk(store)
    assert store.check_log().ok
    con = sqlite3.connect(tmp_path / "workspaces.sqlite")
    with con:
        con.execute(tamper)
    con.close()
    check = store.check_log()
    assert not check.ok and problem in check.problem


def test_an_entry_rewritten_with_a_fresh_hash_still_breaks_the_chain(tmp_path):
    """Recomputing the changed entry's own hash does not help: the next entry links to the old one."""
    from tcrex.workspace._activity import entry_hash

    store = WorkspaceStore(str(tmp_path))
    _walk(store)
    con = sqlite3.connect(tmp_path / "workspaces.sqlite")
    seq, at, actor, workspace, action, _, prev, _ = con.execute("SELECT * FROM activity_log WHERE seq = 6").fetchone()
    text = '{"column":"age"}'
    with con:
        con.execute("UPDATE activity_log SET details = ?, hash = ? WHERE seq = 6",
                    (text, entry_hash(seq, at, actor, workspace, action, text, prev)))
    con.close()
    check = store.check_log()
    assert not check.ok and "entry 7 does not link" in check.problem


def test_retention_removes_a_prefix_and_the_rest_still_checks(tmp_path):
    now = [1_000_000.0]
    store = WorkspaceStore(str(tmp_path), limits=Limits(log_retention_s=100.0), clock=lambda: now[0])
    ws = store.create({"t": 1}, actor="a")
    store.log(ws.id, "parameters", {"rho": 0.1}, actor="a")
    now[0] += 150
    store.log(ws.id, "audit", {"column": "x"}, actor="a")
    assert store.expire_log() == 2
    assert [e.action for e in store.activity()] == ["audit"]
    assert store.check_log().ok
    con = sqlite3.connect(tmp_path / "workspaces.sqlite")
    with con:
        con.execute("UPDATE activity_anchor SET hash = ?", ("f" * 64,))
    con.close()
    assert not store.check_log().ok  # the kept entries must link to what retention removed
    assert Limits().log_retention_s >= 183 * 86400  # six months at least by default
    assert Limits.from_env({"TCREX_LOG_RETENTION_DAYS": "400"}).log_retention_s == 400 * 86400
    assert Limits.from_env({"TCREX_LOG_RETENTION_DAYS": "0"}).log_retention_s is None


def test_exports_neutralise_formulas_and_keep_every_field(tmp_path):
    store = WorkspaceStore(str(tmp_path))
    ws = store.create({}, actor="=HYPERLINK(\"http://evil\")")
    store.put_blob(ws.id, b"x\n1\n", "+cmd|'/C calc'!A0.csv", actor="@SUM(1)")
    entries = store.activity(ws.id)
    frame = pd.read_csv(__import__("io").BytesIO(log_csv(entries)), dtype=str)
    assert frame["who"].tolist() == ["'=HYPERLINK(\"http://evil\")", "'@SUM(1)"]
    assert not [v for v in frame.to_numpy().ravel() if isinstance(v, str) and v[:1] in "=+-@"]
    doc = json.loads(log_json(entries))
    assert doc["format"] == "tcrex-activity" and [e["hash"] for e in doc["entries"]] == [e.hash for e in entries]


def test_a_read_only_link_cannot_write_but_its_export_is_logged(tmp_path):
    store = WorkspaceStore(str(tmp_path))
    ws = store.create({})
    with pytest.raises(ReadOnlyWorkspace):
        store.put_blob(ws.view_id, b"x", "x.csv")
    store.log(ws.view_id, "export", {"file": "r.json"}, actor="viewer")
    assert [e.action for e in store.activity(ws.id)] == ["create", "export"]


@pytest.mark.slow
def test_the_cli_says_whether_the_chain_is_intact(tmp_path):
    env = {**os.environ, "TCREX_STATE_DIR": str(tmp_path), "TCREX_STORE": ""}
    store = WorkspaceStore(str(tmp_path))
    _walk(store)
    cli = [sys.executable, "-m", "tcrex", "workspace"]
    ok = subprocess.run(cli + ["log-check"], env=env, capture_output=True, text=True)
    assert ok.returncode == 0 and "entries: 9" in ok.stdout and "intact" in ok.stderr, ok.stderr
    out = tmp_path / "log.csv"
    done = subprocess.run(cli + ["log-export", "--format", "csv", "--out", str(out)], env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert len(pd.read_csv(out)) == 9
    con = sqlite3.connect(tmp_path / "workspaces.sqlite")
    with con:
        con.execute("UPDATE activity_log SET at = at + 1 WHERE seq = 3")
    con.close()
    broken = subprocess.run(cli + ["log-check"], env=env, capture_output=True, text=True)
    assert broken.returncode == 1 and "entry 3 was changed" in broken.stderr and "Traceback" not in broken.stderr


@pytest.mark.cluster
def test_the_log_on_postgresql_keeps_one_chain_for_two_servers(tmp_path):
    with postgres_server() as url:
        one = WorkspaceStore(url, blobs=str(tmp_path / "blobs"))
        two = WorkspaceStore(url, blobs=str(tmp_path / "blobs"))
        copy = _check_walk(one)
        import threading

        def writer(store, i):
            for n in range(10):
                store.log(copy.view_id, "export", {"i": i, "n": n}, actor=f"user{i}")

        threads = [threading.Thread(target=writer, args=((one, two)[i % 2], i)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        check = two.check_log()
        assert check.ok and check.entries == 9 + 40
