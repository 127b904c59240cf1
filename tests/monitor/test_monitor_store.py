"""The monitor's records in the workspace store: a run killed with SIGKILL at any moment leaves the history as it
was (or, killed after its commit, complete), runs are immutable and checked, a run computed from a stale history is
refused, budgets and expiry as for workspaces, workspaces and monitors share one store, and PostgreSQL serves the
same records as SQLite."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from tcrex.monitor import ConcurrentRun, DamagedMonitor, Monitor, MonitorLimits, MonitorTooLarge, UnknownMonitor
from tcrex.workspace import WorkspaceStore

from tests.support.monitor_case import GROUPS, ID, POLICY
from tests.support.servers import postgres_server, wait_until

pytestmark = pytest.mark.slow


def _start(store, case, n=300, name="small", **kw):
    mon = Monitor(store, **kw)
    mon.init(name, rules=case.rules, people=case.people.head(n), id_column=ID, model=case.models["v1"],
             version="v1", groups=GROUPS, reference_rows=case.fit_rows, policy=POLICY, n_boot=200)
    return mon


def _history_state(store_dir, name="small"):
    """What a reader sees: every run's record and each run's per-person results (read and checked)."""
    mon = Monitor(store_dir)
    h = mon.history(name)
    frames = [len(mon.people(name, r.version.label)) for r in h.runs]
    return [json.loads(r.to_json()) for r in h.runs], frames


def _sqlite_ok(store_dir) -> bool:
    con = sqlite3.connect(os.path.join(store_dir, "workspaces.sqlite"))
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()


def test_sigkill_during_a_run_leaves_the_history_as_it_was(case, tmp_path):
    store = str(tmp_path / "store")
    _start(store, case)
    before = _history_state(store)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    wal = os.path.join(store, "workspaces.sqlite-wal")
    # where to kill: as soon as the program starts, while it computes, the moment it says it records, and the moment
    # the database's write-ahead log grows (the transaction is being written)
    moments = ["start", "computing", "recording", "wal"]
    outcomes = []
    for i, moment in enumerate(moments):
        label = f"killed-{i}"
        size = os.path.getsize(wal) if os.path.exists(wal) else 0
        proc = subprocess.Popen([sys.executable, "-m", "tcrex", "monitor", "run", "--store", store, "--name", "small",
                                 "--model", str(case.models["v3"]), "--version", label, "--json",
                                 str(tmp_path / f"{label}.json")], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                text=True, env=env)
        try:
            if moment == "computing":
                wait_until(lambda: _reads_line(proc, "after v1"), "the run to start computing")
            elif moment == "recording":
                wait_until(lambda: _reads_line(proc, "recording the run"), "the run to start recording")
            elif moment == "wal":
                wait_until(lambda: proc.poll() is not None or (os.path.exists(wal) and os.path.getsize(wal) > size),
                           "the run to write to the store", every_s=0.0005)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc.stderr.close()
        assert _sqlite_ok(store)
        now = _history_state(store)
        if now == before:
            outcomes.append("unchanged")
            assert not (tmp_path / f"{label}.json").exists()
        else:  # killed after the commit: the whole run is there, readable, and nothing else changed
            assert now[0][:len(before[0])] == before[0] and len(now[0]) == len(before[0]) + 1
            assert now[0][-1]["version"] == label and now[1][-1] == 300
            outcomes.append("complete")
            before = now
    assert outcomes[:2] == ["unchanged", "unchanged"], outcomes
    # the history goes on from where it is: the next run completes on top of it
    Monitor(store).run("small", model=case.models["v2"], version="after-the-kills")
    runs, frames = _history_state(store)
    assert runs[-1]["version"] == "after-the-kills" and frames[-1] == 300


def _reads_line(proc, words) -> bool:
    if proc.poll() is not None:
        return True
    line = proc.stderr.readline()
    return words in line


def test_runs_are_immutable_checked_records(case, tmp_path):
    store = str(tmp_path / "store")
    mon = _start(store, case)
    mon.run("small", model=case.models["v2"], version="v2")
    con = sqlite3.connect(os.path.join(store, "workspaces.sqlite"))
    with con:
        con.execute("UPDATE monitor_runs SET record = replace(record, '\"n_people\":300', '\"n_people\":301') "
                    "WHERE seq = 1")
    con.close()
    with pytest.raises(DamagedMonitor, match="run 1 of monitor 'small' is damaged"):
        Monitor(store).history("small")
    con = sqlite3.connect(os.path.join(store, "workspaces.sqlite"))
    digest = json.loads(con.execute("SELECT record FROM monitor_runs WHERE seq = 0").fetchone()[0])["people_digest"]
    with con:
        con.execute("UPDATE monitor_blobs SET data = ? WHERE digest = ?", (b"not parquet", digest))
    con.close()
    with pytest.raises(DamagedMonitor, match="damaged in the store"):
        Monitor(store).people("small", "v1")


def test_a_run_computed_from_a_stale_history_is_refused(case, tmp_path):
    store = str(tmp_path / "store")
    mon = _start(store, case)
    last = mon.records.runs("small")[-1]
    mon.run("small", model=case.models["v2"], version="v2")
    stale = {**last, "seq": 1, "version": "late"}
    with pytest.raises(ConcurrentRun, match="another run was recorded"):
        mon.records.append("small", 0, {"label": "late", "seq": 1, "model_sha256": "0" * 64, "origin": "x"}, stale, {})
    assert [r.version.label for r in mon.history("small").runs] == ["v1", "v2"]


def test_budgets_and_expiry_as_for_workspaces(case, tmp_path):
    store = str(tmp_path / "store")
    clock = [1_900_000_000.0]  # a clock the test moves: expiry is about recorded times, not the machine's
    mon = _start(store, case, clock=lambda: clock[0])
    used = mon.size_of("small")
    assert used > 0
    tight = Monitor(store, limits=MonitorLimits(monitor_bytes=used + 10), clock=lambda: clock[0])
    with pytest.raises(MonitorTooLarge, match="over its budget"):
        tight.run("small", model=case.models["v2"], version="v2")
    assert [r.version.label for r in tight.history("small").runs] == ["v1"]  # nothing half-recorded
    aging = Monitor(store, limits=MonitorLimits(expire_after_s=3600), clock=lambda: clock[0])
    assert aging.records.expire() == []
    clock[0] += 7200
    assert aging.records.expire() == ["small"]
    with pytest.raises(UnknownMonitor):
        aging.history("small")


def test_monitors_and_workspaces_share_one_store(case, tmp_path):
    store = str(tmp_path / "store")
    ws_store = WorkspaceStore(store)
    ws = ws_store.create({"title": "kept"})
    _start(store, case)
    assert WorkspaceStore(store).open(ws.id).settings == {"title": "kept"}
    assert WorkspaceStore(store).check().ok
    assert Monitor(store).names() == ["small"]


def test_postgresql_serves_the_same_records(case, tmp_path):
    with postgres_server() as url:
        on_pg = _start(url, case, n=200, name="pg")
        on_pg.run("pg", model=case.models["v2"], version="v2")
        lite = _start(str(tmp_path / "lite"), case, n=200, name="pg")
        lite.run("pg", model=case.models["v2"], version="v2")
        a, b = Monitor(url).history("pg"), lite.history("pg")
        assert [r.to_dict()["groups"] for r in a.runs] == [r.to_dict()["groups"] for r in b.runs]
        assert [r.counts for r in a.runs] == [r.counts for r in b.runs]
        assert Monitor(url).people("pg", "v2").equals(lite.people("pg", "v2"))
        with pytest.raises(ConcurrentRun):
            on_pg.records.append("pg", 0, {"label": "late", "seq": 1, "model_sha256": "0" * 64, "origin": "x"},
                                 {"seq": 1}, {})
