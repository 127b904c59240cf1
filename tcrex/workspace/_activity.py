"""The activity log: who did what to which workspace, when — append-only, hash-chained, never the data.

One table in the workspace store (SQLite or PostgreSQL, as the store): each entry has a sequence number, the time,
the actor (a signed-in user's e-mail, else who the dashboard says it was), the workspace (its read-only id: the log
never carries an editing link), the action (:data:`ACTIONS`) and its details as JSON — names, sizes, SHA-256
digests, parameter values, feature names of constraints — never a row of data. Each entry carries the SHA-256 of
the previous entry (``prev_hash``) and its own hash over every field and that link, so changing, inserting or
removing an entry in the middle breaks the chain, which :func:`check_log` (``tcrex workspace log-check``) finds.

Retention (:attr:`tcrex.workspace.Limits.log_retention_s`, ``TCREX_LOG_RETENTION_DAYS``, default 183 days) removes
whole prefixes only: the last removed entry's sequence number and hash become the *anchor* the oldest kept entry
must link to. Removing the newest entries cannot be seen from inside the store; keep the head hash
(:attr:`LogCheck.head`) elsewhere (a daily ``log-check`` into the operator's own log) to see that too.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass

#: What an entry may record.
ACTIONS = ("create", "upload", "parameters", "constraints", "dictionary", "audit", "export", "share", "duplicate",
           "delete", "roles")
#: The ``prev_hash`` of the first entry ever written.
GENESIS = "0" * 64
#: Serialises appends on PostgreSQL (SQLite's ``BEGIN IMMEDIATE`` already does).
_LOCK = 74139

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS activity_log (
        seq BIGINT PRIMARY KEY,
        at DOUBLE PRECISION NOT NULL,
        actor TEXT NOT NULL,
        workspace TEXT NOT NULL,
        action TEXT NOT NULL,
        details TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS activity_log_workspace ON activity_log (workspace, seq)",
    """CREATE TABLE IF NOT EXISTS activity_anchor (
        id INTEGER PRIMARY KEY,
        seq BIGINT NOT NULL,
        hash TEXT NOT NULL)""",
)


@dataclass(frozen=True)
class Entry:
    seq: int
    at: float
    actor: str
    workspace: str
    action: str
    details: dict
    prev_hash: str
    hash: str

    def as_dict(self) -> dict:
        return {"seq": self.seq, "at": self.at, "actor": self.actor, "workspace": self.workspace,
                "action": self.action, "details": self.details, "prev_hash": self.prev_hash, "hash": self.hash}


@dataclass(frozen=True)
class LogCheck:
    """What :func:`check_log` found: ``ok`` when every entry links to the one before and hashes to itself."""

    ok: bool
    entries: int
    head: str  # the hash of the newest entry (keep it elsewhere to detect a removed tail)
    problem: str = ""


def entry_hash(seq: int, at: float, actor: str, workspace: str, action: str, details_text: str,
               prev_hash: str) -> str:
    text = json.dumps([int(seq), float(at), actor, workspace, action, details_text, prev_hash],
                      separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def details_text(details: dict | None) -> str:
    return json.dumps(details or {}, sort_keys=True, separators=(",", ":"), allow_nan=False, default=str)


def append(tx, kind: str, at: float, actor: str | None, workspace: str, action: str, details: dict | None) -> Entry:
    """Add one entry inside the caller's transaction (committed with the change it records)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown activity {action!r}")
    if kind == "postgresql":
        tx.execute(f"SELECT pg_advisory_xact_lock({_LOCK})")
    last = tx.execute("SELECT seq, hash FROM activity_log ORDER BY seq DESC LIMIT 1").fetchone()
    if last is None:
        anchor = tx.execute("SELECT seq, hash FROM activity_anchor WHERE id = 1").fetchone()
        last = anchor if anchor is not None else (0, GENESIS)
    seq, prev = int(last[0]) + 1, str(last[1])
    who = str(actor or "anonymous")[:320]
    text = details_text(details)
    digest = entry_hash(seq, at, who, workspace, action, text, prev)
    tx.execute("INSERT INTO activity_log (seq, at, actor, workspace, action, details, prev_hash, hash) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (seq, float(at), who, workspace, action, text, prev, digest))
    return Entry(seq, float(at), who, workspace, action, json.loads(text), prev, digest)


def _entry(row) -> Entry:
    seq, at, actor, workspace, action, text, prev, digest = row
    try:
        details = json.loads(text)
    except ValueError:
        details = {"unreadable": True}
    return Entry(int(seq), float(at), actor, workspace, action, details, prev, digest)


def entries(tx, workspace: str | None = None, limit: int | None = None) -> list[Entry]:
    """Entries oldest first (of one workspace, by its read-only id, or all)."""
    sql = "SELECT seq, at, actor, workspace, action, details, prev_hash, hash FROM activity_log"
    args: tuple = ()
    if workspace is not None:
        sql += " WHERE workspace = ?"
        args = (workspace,)
    sql += " ORDER BY seq"
    if limit is not None:
        sql += " LIMIT ?"
        args = (*args, int(limit))
    return [_entry(r) for r in tx.execute(sql, args).fetchall()]


def check_log(tx) -> LogCheck:
    """Walk the whole chain from the anchor: every sequence number follows the one before, every ``prev_hash``
    is the previous entry's hash and every hash is recomputed from the entry's fields."""
    anchor = tx.execute("SELECT seq, hash FROM activity_anchor WHERE id = 1").fetchone()
    seq, prev = (int(anchor[0]), str(anchor[1])) if anchor is not None else (0, GENESIS)
    count = 0
    for row in tx.execute("SELECT seq, at, actor, workspace, action, details, prev_hash, hash FROM activity_log "
                          "ORDER BY seq").fetchall():
        e_seq, at, actor, workspace, action, text, e_prev, digest = row
        e_seq = int(e_seq)
        if e_seq != seq + 1:
            return LogCheck(False, count, prev, f"entry {seq + 1} is missing (the next entry is {e_seq})")
        if e_prev != prev:
            return LogCheck(False, count, prev, f"entry {e_seq} does not link to the entry before it")
        if entry_hash(e_seq, at, actor, workspace, action, text, e_prev) != digest:
            return LogCheck(False, count, prev, f"entry {e_seq} was changed after it was written")
        seq, prev, count = e_seq, digest, count + 1
    return LogCheck(True, count, prev)


def expire(tx, kind: str, cutoff: float) -> int:
    """Remove the entries older than ``cutoff`` (a prefix of the chain) and move the anchor; returns how many."""
    if kind == "postgresql":
        tx.execute(f"SELECT pg_advisory_xact_lock({_LOCK})")
    last_old = tx.execute("SELECT seq, hash FROM activity_log WHERE seq = (SELECT MAX(seq) FROM activity_log "
                          "WHERE at < ?)", (float(cutoff),)).fetchone()
    if last_old is None:
        return 0
    seq, digest = int(last_old[0]), str(last_old[1])
    removed = tx.execute("SELECT COUNT(*) FROM activity_log WHERE seq <= ?", (seq,)).fetchone()[0]
    tx.execute("DELETE FROM activity_log WHERE seq <= ?", (seq,))
    tx.execute("DELETE FROM activity_anchor WHERE id = 1")
    tx.execute("INSERT INTO activity_anchor (id, seq, hash) VALUES (1, ?, ?)", (seq, digest))
    return int(removed)


def log_frame(entries):
    """Activity-log entries as a table (oldest first): time (UTC), who, what, details as JSON text, hashes."""
    import pandas as pd  # noqa: PLC0415 - only an export needs pandas

    rows = [{"seq": e.seq, "time (UTC)": dt.datetime.fromtimestamp(e.at, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
             "who": e.actor, "workspace": e.workspace, "action": e.action,
             "details": json.dumps(e.details, sort_keys=True), "prev_hash": e.prev_hash, "hash": e.hash}
            for e in entries]
    return pd.DataFrame(rows, columns=["seq", "time (UTC)", "who", "workspace", "action", "details", "prev_hash",
                                       "hash"])


def log_csv(entries) -> bytes:
    """The entries as CSV whose text cells cannot run as spreadsheet formulas (:func:`tcrex.spreadsheet.to_csv`):
    a file name or an e-mail typed as ``=HYPERLINK(…)`` stays text."""
    from ..spreadsheet import to_csv  # noqa: PLC0415 - only an export needs pandas

    return to_csv(log_frame(entries)).encode("utf-8")


def log_json(entries) -> bytes:
    """The entries as JSON (``{"format": "tcrex-activity", "version": 1, "entries": [...]}``), every field as
    stored, so the chain can be checked again from the file."""
    return json.dumps({"format": "tcrex-activity", "version": 1, "entries": [e.as_dict() for e in entries]},
                      indent=1, sort_keys=True).encode("utf-8")
