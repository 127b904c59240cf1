"""The monitor's tables in the workspace store: monitors, model versions, runs and their blobs, immutable records.

The store is the workspaces' own (:class:`tcrex.workspace.WorkspaceStore`: SQLite in the state folder by default,
PostgreSQL for a team), reached through its public :meth:`~tcrex.workspace.WorkspaceStore.transaction`; these tables
are this module's, created beside the workspaces' ones.

* A **run** is written in ONE transaction with its model version and every blob it needs (the per-person Parquet,
  the model file): a process killed at any moment (SIGKILL included) leaves either the whole run or nothing, and
  the history as it was. Nothing is ever updated in place: a run, a version and a blob are inserted once and read
  as they were written (only deleting a whole monitor, or its expiry, removes rows).
* Every record's JSON text carries its SHA-256, every blob is named by its SHA-256 and checked when read: a
  damaged record or blob is reported (:class:`DamagedMonitor`), never used.
* Blobs live in the database itself (``BLOB`` / ``BYTEA``), so the transaction that records a run also records its
  per-person results; identical bytes are stored once and shared by the monitors that hold them.
* Budgets and retention as for workspaces: a monitor's blobs at most :attr:`MonitorLimits.monitor_bytes`, all
  monitors' at most :attr:`MonitorLimits.total_bytes`; :meth:`MonitorRecords.expire` deletes the monitors nobody
  ran or opened for :attr:`MonitorLimits.expire_after_s` (default never: a monitoring history is an audit trail).
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass

from ..workspace import new_id, size_text
from ._errors import ConcurrentRun, DamagedMonitor, MonitorError, MonitorTooLarge, UnknownMonitor

MB = 2 ** 20


def _schema(blob_type: str) -> tuple[str, ...]:
    return (
        """CREATE TABLE IF NOT EXISTS monitors (
            name TEXT PRIMARY KEY,
            id TEXT UNIQUE NOT NULL,
            spec TEXT NOT NULL,
            checksum TEXT NOT NULL,
            created DOUBLE PRECISION NOT NULL,
            opened DOUBLE PRECISION NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS monitor_versions (
            monitor TEXT NOT NULL,
            seq BIGINT NOT NULL,
            label TEXT NOT NULL,
            registered DOUBLE PRECISION NOT NULL,
            model_sha256 TEXT NOT NULL,
            origin TEXT NOT NULL,
            record TEXT NOT NULL,
            checksum TEXT NOT NULL,
            PRIMARY KEY (monitor, seq),
            UNIQUE (monitor, label))""",
        """CREATE TABLE IF NOT EXISTS monitor_runs (
            monitor TEXT NOT NULL,
            seq BIGINT NOT NULL,
            version_seq BIGINT NOT NULL,
            recorded DOUBLE PRECISION NOT NULL,
            record TEXT NOT NULL,
            checksum TEXT NOT NULL,
            PRIMARY KEY (monitor, seq))""",
        f"""CREATE TABLE IF NOT EXISTS monitor_blobs (
            digest TEXT PRIMARY KEY,
            size BIGINT NOT NULL,
            data {blob_type} NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS monitor_blob_refs (
            monitor TEXT NOT NULL,
            digest TEXT NOT NULL,
            PRIMARY KEY (monitor, digest))""",
        "CREATE INDEX IF NOT EXISTS monitor_blob_refs_digest ON monitor_blob_refs (digest)",
    )


def checksum(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record_text(record: dict) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False, default=str)


@dataclass(frozen=True)
class MonitorLimits:
    """Size budgets and retention of monitors (docs/monitor.md, "Storage")."""

    #: Blobs of one monitor (people, reference rows, model files, per-person results of every run), at most.
    monitor_bytes: int = 10 * 1024 * MB
    #: Blobs of all monitors of the store (bytes shared by several monitors count once), at most.
    total_bytes: int = 50 * 1024 * MB
    #: A monitor nobody ran or opened for this long is deleted by :meth:`MonitorRecords.expire` (None: never).
    expire_after_s: float | None = None

    @classmethod
    def from_env(cls, env=os.environ) -> "MonitorLimits":
        def number(name, default, scale):
            raw = env.get(name)
            if raw in (None, ""):
                return default
            try:
                value = float(raw)
            except ValueError:
                raise MonitorError(f"{name}={raw!r} is not a number") from None
            if value <= 0:
                return None if name.endswith("DAYS") else default
            return value * scale
        return cls(monitor_bytes=int(number("TCREX_MONITOR_MAX_MB", cls.monitor_bytes, MB)),
                   total_bytes=int(number("TCREX_MONITORS_MAX_MB", cls.total_bytes, MB)),
                   expire_after_s=number("TCREX_MONITOR_EXPIRE_DAYS", cls.expire_after_s, 86400.0))


@dataclass(frozen=True)
class StoredMonitor:
    name: str
    id: str
    spec: dict
    created: float
    opened: float


_READY: set = set()  # stores whose tables this process has created (by database identity)
_READY_LOCK = threading.Lock()


class MonitorRecords:
    """The monitor tables of one workspace store. ``clock``: seconds since the epoch (tests set it)."""

    def __init__(self, store, limits: MonitorLimits | None = None, clock=time.time):
        self.store = store
        self.limits = limits or MonitorLimits.from_env()
        self.clock = clock
        key = (store.kind, id(store))
        with _READY_LOCK:
            if key not in _READY:
                with store.transaction() as tx:
                    if store.kind == "postgresql":  # two processes starting at once: the lock orders them
                        tx.execute("SELECT pg_advisory_xact_lock(74138)")
                    for stmt in _schema("BYTEA" if store.kind == "postgresql" else "BLOB"):
                        tx.execute(stmt)
                _READY.add(key)

    # ------------------------------------------------------------------ reading
    def _monitor_row(self, tx, name_or_id: str):
        row = tx.execute("SELECT name, id, spec, checksum, created, opened FROM monitors WHERE name = ? OR id = ?",
                         (str(name_or_id), str(name_or_id))).fetchone()
        if row is None:
            raise UnknownMonitor(f"no monitor named {name_or_id!r} in this store; start one with `tcrex monitor init` "
                                 "(Monitor(store).init(...))")
        return row

    def monitor(self, name_or_id: str, touch: bool = False) -> StoredMonitor:
        with self.store.transaction() as tx:
            name, mid, spec, check, created, opened = self._monitor_row(tx, name_or_id)
            if touch:
                tx.execute("UPDATE monitors SET opened = ? WHERE name = ?", (self.clock(), name))
        return StoredMonitor(name, mid, _parse(spec, check, f"monitor {name!r}"), float(created), float(opened))

    def names(self) -> list[str]:
        with self.store.transaction() as tx:
            return [r[0] for r in tx.execute("SELECT name FROM monitors ORDER BY created").fetchall()]

    def versions(self, name: str) -> list[dict]:
        with self.store.transaction() as tx:
            rows = tx.execute("SELECT seq, record, checksum FROM monitor_versions WHERE monitor = ? ORDER BY seq",
                              (name,)).fetchall()
        return [_parse(text, check, f"version {seq} of monitor {name!r}") for seq, text, check in rows]

    def runs(self, name: str) -> list[dict]:
        with self.store.transaction() as tx:
            rows = tx.execute("SELECT seq, record, checksum FROM monitor_runs WHERE monitor = ? ORDER BY seq",
                              (name,)).fetchall()
        return [_parse(text, check, f"run {seq} of monitor {name!r}") for seq, text, check in rows]

    def blob(self, name: str, digest: str) -> bytes:
        """A blob the monitor holds, checked against its digest (knowing a digest alone is not enough)."""
        with self.store.transaction() as tx:
            held = tx.execute("SELECT 1 FROM monitor_blob_refs WHERE monitor = ? AND digest = ?",
                              (name, str(digest))).fetchone()
            row = tx.execute("SELECT data FROM monitor_blobs WHERE digest = ?", (str(digest),)).fetchone() \
                if held is not None else None
        if row is None:
            raise DamagedMonitor(f"monitor {name!r}: a stored file it needs ({str(digest)[:12]}…) is missing from the "
                                 "store")
        data = bytes(row[0])
        if digest_of(data) != digest:
            raise DamagedMonitor(f"monitor {name!r}: a stored file ({str(digest)[:12]}…) is damaged in the store")
        return data

    def size_of(self, name: str) -> int:
        with self.store.transaction() as tx:
            return int(tx.execute("SELECT COALESCE(SUM(b.size), 0) FROM monitor_blob_refs r JOIN monitor_blobs b "
                                  "ON b.digest = r.digest WHERE r.monitor = ?", (name,)).fetchone()[0])

    def run_sizes(self, name: str) -> dict:
        """Per run, the bytes of its record text (its blobs are counted by :meth:`size_of`)."""
        with self.store.transaction() as tx:
            return {int(seq): len(text) for seq, text in
                    tx.execute("SELECT seq, record FROM monitor_runs WHERE monitor = ?", (name,)).fetchall()}

    def blob_size(self, digest: str) -> int:
        with self.store.transaction() as tx:
            row = tx.execute("SELECT size FROM monitor_blobs WHERE digest = ?", (str(digest),)).fetchone()
        return 0 if row is None else int(row[0])

    # ------------------------------------------------------------------ writing
    def create(self, name: str, spec: dict, version: dict, run: dict, blobs: dict[str, bytes]) -> StoredMonitor:
        """A new monitor with its baseline version and run, in one transaction (all or nothing)."""
        text = record_text(spec)
        now = self.clock()
        mid = new_id()
        with self.store.transaction() as tx:
            if tx.execute("SELECT 1 FROM monitors WHERE name = ?", (name,)).fetchone() is not None:
                raise MonitorError(f"a monitor named {name!r} already exists in this store; give another --name, or "
                                   "register new versions with `tcrex monitor run`")
            tx.execute("INSERT INTO monitors (name, id, spec, checksum, created, opened) VALUES (?, ?, ?, ?, ?, ?)",
                       (name, mid, text, checksum(text), now, now))
            self._blobs(tx, name, blobs)
            self._append(tx, name, 0, version, run)
        return StoredMonitor(name, mid, json.loads(text), now, now)

    def append(self, name: str, previous_seq: int, version: dict, run: dict, blobs: dict[str, bytes]) -> int:
        """Record a run (and its version) after run ``previous_seq``, in one transaction; refused when another run
        was recorded meanwhile (:class:`ConcurrentRun`) or its label is taken. Returns the run's sequence number."""
        with self.store.transaction() as tx:
            self._monitor_row(tx, name)
            last = tx.execute("SELECT MAX(seq) FROM monitor_runs WHERE monitor = ?", (name,)).fetchone()[0]
            if last is None or int(last) != int(previous_seq):
                raise ConcurrentRun(f"monitor {name!r}: another run was recorded while this one was computed (it "
                                    f"started from run {previous_seq}, the last is now {last}); run it again")
            seq = int(last) + 1
            self._blobs(tx, name, blobs)
            self._append(tx, name, seq, version, run)
            tx.execute("UPDATE monitors SET opened = ? WHERE name = ?", (self.clock(), name))
        return seq

    def _append(self, tx, name, seq, version, run):
        label = str(version["label"])
        if tx.execute("SELECT 1 FROM monitor_versions WHERE monitor = ? AND label = ?", (name, label)).fetchone():
            raise MonitorError(f"monitor {name!r} already has a version labelled {label!r}; give the new version "
                               "another --version label")
        now = self.clock()
        if int(version.get("seq", seq)) != seq or int(run.get("seq", seq)) != seq:
            raise ConcurrentRun(f"monitor {name!r}: the run was computed as run {run.get('seq')}, but run {seq} is "
                                "next; run it again")
        version = {**version, "seq": seq, "registered": version.get("registered", now)}
        run = {**run, "seq": seq, "recorded": run.get("recorded", now)}
        vtext, rtext = record_text(version), record_text(run)
        tx.execute("INSERT INTO monitor_versions (monitor, seq, label, registered, model_sha256, origin, record, "
                   "checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (name, seq, label, float(version["registered"]), str(version["model_sha256"]),
                    str(version["origin"]), vtext, checksum(vtext)))
        tx.execute("INSERT INTO monitor_runs (monitor, seq, version_seq, recorded, record, checksum) "
                   "VALUES (?, ?, ?, ?, ?, ?)", (name, seq, seq, now, rtext, checksum(rtext)))

    def _blobs(self, tx, name, blobs: dict[str, bytes]) -> None:
        """Insert the blobs (by digest) and the monitor's references to them, within the budgets."""
        new = {}
        for data in blobs.values():
            d = digest_of(data)
            held = tx.execute("SELECT 1 FROM monitor_blob_refs WHERE monitor = ? AND digest = ?", (name, d)).fetchone()
            if held is None:
                new[d] = data
        if not new:
            return
        adding = sum(len(v) for v in new.values())
        used = int(tx.execute("SELECT COALESCE(SUM(b.size), 0) FROM monitor_blob_refs r JOIN monitor_blobs b ON "
                              "b.digest = r.digest WHERE r.monitor = ?", (name,)).fetchone()[0])
        if used + adding > self.limits.monitor_bytes:
            raise MonitorTooLarge(f"monitor {name!r} would hold {size_text(used + adding)}, over its budget of "
                                  f"{size_text(self.limits.monitor_bytes)}; raise TCREX_MONITOR_MAX_MB or start a "
                                  "new monitor")
        unknown = {d: v for d, v in new.items()
                   if tx.execute("SELECT 1 FROM monitor_blobs WHERE digest = ?", (d,)).fetchone() is None}
        if unknown:
            total = int(tx.execute("SELECT COALESCE(SUM(size), 0) FROM monitor_blobs").fetchone()[0])
            more = sum(len(v) for v in unknown.values())
            if total + more > self.limits.total_bytes:
                raise MonitorTooLarge(f"the store's monitors would hold {size_text(total + more)}, over the budget of "
                                      f"{size_text(self.limits.total_bytes)}; delete old monitors or raise "
                                      "TCREX_MONITORS_MAX_MB")
        for d, data in new.items():
            if d in unknown:
                tx.execute("INSERT INTO monitor_blobs (digest, size, data) VALUES (?, ?, ?)", (d, len(data), data))
            tx.execute("INSERT INTO monitor_blob_refs (monitor, digest) VALUES (?, ?)", (name, d))

    def delete(self, name: str) -> None:
        """Remove the monitor, its versions, runs and every blob no other monitor holds."""
        with self.store.transaction() as tx:
            name = self._monitor_row(tx, name)[0]
            digests = [d for (d,) in tx.execute("SELECT digest FROM monitor_blob_refs WHERE monitor = ?",
                                                (name,)).fetchall()]
            for table in ("monitor_blob_refs", "monitor_runs", "monitor_versions"):
                tx.execute(f"DELETE FROM {table} WHERE monitor = ?", (name,))  # noqa: S608 - fixed table names
            tx.execute("DELETE FROM monitors WHERE name = ?", (name,))
            for d in digests:
                if tx.execute("SELECT 1 FROM monitor_blob_refs WHERE digest = ? LIMIT 1", (d,)).fetchone() is None:
                    tx.execute("DELETE FROM monitor_blobs WHERE digest = ?", (d,))

    def expire(self, now: float | None = None) -> list[str]:
        """Delete the monitors nobody ran or opened within :attr:`MonitorLimits.expire_after_s`; their names."""
        if self.limits.expire_after_s is None:
            return []
        cutoff = (self.clock() if now is None else now) - self.limits.expire_after_s
        with self.store.transaction() as tx:
            old = [r[0] for r in tx.execute("SELECT name FROM monitors WHERE opened < ?", (cutoff,)).fetchall()]
        for name in old:
            try:
                self.delete(name)
            except UnknownMonitor:  # deleted meanwhile by another process
                pass
        return old


def _parse(text: str, check: str, what: str) -> dict:
    if checksum(text) != check:
        raise DamagedMonitor(f"{what} is damaged in the store (its checksum does not match); it is not used")
    try:
        return json.loads(text)
    except ValueError:
        raise DamagedMonitor(f"{what} is not readable in the store") from None
