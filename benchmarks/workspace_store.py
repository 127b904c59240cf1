"""What workspaces cost: a saved action, restoring after a restart, disk per workspace, 8 concurrent writers.

    .venv/bin/python benchmarks/workspace_store.py [--rows 100000] [--postgres]

* **cost per saved action** — ``WorkspaceStore.save`` of the settings a dashboard session writes (a few kB of JSON),
  committed (SQLite WAL with synchronous=FULL: one fsync per save). Target ≤ 50 ms.
* **restore vs first view** — after a restart, reopening a workspace whose upload is a CSV of ``--rows`` rows reads
  the settings and the upload back from the store and then does what a first view of that upload does anyway
  (parse the table). Printed: the store's share (open + read the blob) against the parse itself, as a ratio; the
  target is that restoring is no slower than a first view, i.e. the store's share is small against the parse.
* **disk per workspace** — the SQLite file and blob folder after N workspaces of the bundled sample's settings.
* **8 concurrent writers** — threads each saving its own workspace, saves per second in all, on SQLite and (with
  ``--postgres``, a server started by this script as in the tests) PostgreSQL.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from tcrex.workspace import WorkspaceStore  # noqa: E402

SETTINGS = {"version": 1, "title": "loans.csv",
            "session": {"tcrex.params": {"__type__": "Params", "fields": {"rho": 0.02, "tau": 0.9, "n_trees": 1,
                                                                           "max_cells": 100000, "target": 1,
                                                                           "grower": "auto", "constraints": []}},
                        "tcrex.individual": 17,
                        "tcrex.edited_individual": {"__dict__": [[f"feature_{i}", i * 1.5] for i in range(20)]},
                        "tcrex.audit_prefs": {"__dict__": [["k", {"__dict__": [["column", "sex"]]}]]}},
            "files": {"data": {"latest": "0" * 64, "kept": [["0" * 64, "loans.csv"]]}}, "page": "audit"}


def _table(rows: int) -> bytes:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"x{i}": rng.normal(size=rows).round(4) for i in range(8)})
    frame["region"] = rng.choice(["north", "south", "east", "west"], size=rows)
    frame["approved"] = rng.integers(0, 2, size=rows)
    return frame.to_csv(index=False).encode()


def save_cost(store: WorkspaceStore, n: int = 200) -> list[float]:
    ws = store.create(SETTINGS)
    times = []
    for i in range(n):
        settings = dict(SETTINGS, session={**SETTINGS["session"], "tcrex.individual": i})
        t0 = time.perf_counter()
        store.save(ws.id, settings)
        times.append(time.perf_counter() - t0)
    return times


def concurrent(store: WorkspaceStore, sessions: int = 8, saves: int = 50) -> float:
    spaces = [store.create(SETTINGS) for _ in range(sessions)]

    def run(ws):
        for i in range(saves):
            store.save(ws.id, dict(SETTINGS, session={**SETTINGS["session"], "tcrex.individual": i}))

    threads = [threading.Thread(target=run, args=(ws,)) for ws in spaces]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sessions * saves / (time.perf_counter() - t0)


def restore_vs_parse(folder: str, rows: int) -> tuple[float, float]:
    from tcrex.intake import read_table
    raw = _table(rows)
    store = WorkspaceStore(folder)
    ws = store.create(SETTINGS)
    digest = store.put_blob(ws.id, raw, "upload.csv")
    store_s, parse_s = [], []
    for _ in range(5):
        again = WorkspaceStore(folder)  # a restarted server: a new store object, a new connection
        t0 = time.perf_counter()
        opened = again.open(ws.id)
        data = again.get_blob(ws.id, digest)
        store_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        read_table(data, "upload.csv")
        parse_s.append(time.perf_counter() - t0)
        assert opened.settings == SETTINGS
    return statistics.median(store_s), statistics.median(parse_s)


def disk(folder: str, n: int = 100) -> float:
    store = WorkspaceStore(folder)
    for _ in range(n):
        store.create(SETTINGS)
    size = sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
    return size / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        times = save_cost(WorkspaceStore(os.path.join(tmp, "a")))
        print(f"SQLite save: median {1000 * statistics.median(times):.1f} ms, p95 "
              f"{1000 * sorted(times)[int(0.95 * len(times))]:.1f} ms, max {1000 * max(times):.1f} ms (target 50 ms)")
        rate = concurrent(WorkspaceStore(os.path.join(tmp, "b")))
        print(f"SQLite, 8 sessions saving at once: {rate:.0f} saves/s in all")
        store_s, parse_s = restore_vs_parse(os.path.join(tmp, "c"), args.rows)
        print(f"restore of a {args.rows:,}-row upload: store {1000 * store_s:.1f} ms, parsing it (a first view's "
              f"work either way) {1000 * parse_s:.1f} ms; store/parse = {store_s / parse_s:.3f}")
        print(f"disk per workspace (settings only, 100 workspaces): {disk(os.path.join(tmp, 'd')) / 1024:.1f} kB")
    if args.postgres:
        from tests.support.servers import postgres_server  # the server the tests start
        with postgres_server() as url, tempfile.TemporaryDirectory() as tmp:
            store = WorkspaceStore(url, blobs=tmp)
            times = save_cost(store)
            print(f"PostgreSQL save: median {1000 * statistics.median(times):.1f} ms, max "
                  f"{1000 * max(times):.1f} ms")
            print(f"PostgreSQL, 8 sessions saving at once: {concurrent(store):.0f} saves/s in all")


if __name__ == "__main__":
    main()
