"""The workspace store: settings rows in SQLite or PostgreSQL, uploads in a content-addressed blob folder.

One module owns the store; the dashboard and the CLI call :class:`WorkspaceStore` and never write SQL.

* **SQLite** (the default, zero set-up): ``<state dir>/workspaces.sqlite`` in WAL mode with ``synchronous=FULL``, so
  a change is on disk when :meth:`~WorkspaceStore.save` returns and a process killed at any moment loses at most
  the change in flight. Several processes on one machine may share it (SQLite's own locking).
* **PostgreSQL** (``TCREX_STORE=postgresql://…``, psycopg): the same tables, so several dashboard processes behind
  a load balancer serve the same workspaces; blobs then belong on a shared fsspec URL (``TCREX_BLOBS``).

Every row keeps the SHA-256 of its settings text; a row whose text no longer matches is reported as damaged and
skipped (:meth:`~WorkspaceStore.check`, :meth:`~WorkspaceStore.open`), never loaded. An SQLite file that SQLite
itself cannot read (truncated mid-write, overwritten) is moved aside at start (``…damaged-<time>``, kept for
inspection) and a fresh store begins; :attr:`WorkspaceStore.notes` says so.

Each workspace has two ids: the editing id and a read-only *view* id. Both are 192-bit random tokens; the view id
opens the same workspace with every write refused (:class:`ReadOnlyWorkspace`). Nothing of a workspace's content is
logged by this module.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from ._activity import SCHEMA as _ACTIVITY_SCHEMA
from ._activity import append as _log_append
from ._activity import check_log as _check_log
from ._activity import entries as _log_entries
from ._activity import expire as _log_expire
from ._blobs import TMP_PREFIX, BlobFolder, digest_of
from ._errors import (DamagedWorkspace, ReadOnlyWorkspace, UnknownWorkspace, WorkspaceError, WorkspaceTooLarge,
                      redacted, store_problem)
from ._ids import is_digest, is_id, new_id

MB = 2 ** 20

#: The steps of :meth:`WorkspaceStore.save`, in order, as :attr:`WorkspaceStore.on_step` sees them: before the
#: transaction, the row changed but not committed, committed.
SAVE_STEPS = ("save:begin", "save:row-written", "save:committed")
#: The steps of :meth:`WorkspaceStore.put_blob`: before anything, half the file in its temporary name, the file
#: complete under its digest, its row written but not committed, committed.
UPLOAD_STEPS = ("upload:begin", "upload:file-partial", "upload:file-written", "upload:row-written",
                "upload:committed")

#: The settings of one workspace as JSON text, at most (they are choices, not data: uploads are blobs).
MAX_SETTINGS_BYTES = 2 * MB

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS workspaces (
        id TEXT PRIMARY KEY,
        view_id TEXT UNIQUE NOT NULL,
        settings TEXT NOT NULL,
        checksum TEXT NOT NULL,
        revision BIGINT NOT NULL,
        created DOUBLE PRECISION NOT NULL,
        updated DOUBLE PRECISION NOT NULL,
        opened DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS workspace_blobs (
        ws_id TEXT NOT NULL,
        digest TEXT NOT NULL,
        size BIGINT NOT NULL,
        name TEXT NOT NULL,
        PRIMARY KEY (ws_id, digest))""",
    "CREATE INDEX IF NOT EXISTS workspace_blobs_digest ON workspace_blobs (digest)",
    """CREATE TABLE IF NOT EXISTS workspace_roles (
        ws_id TEXT NOT NULL,
        principal TEXT NOT NULL,
        role TEXT NOT NULL,
        PRIMARY KEY (ws_id, principal))""",
    "CREATE INDEX IF NOT EXISTS workspace_roles_principal ON workspace_roles (principal)",
    *_ACTIVITY_SCHEMA,
)

#: Roles on a workspace, strongest first: the owner may change it, share it and delete it; an editor may change
#: it; a viewer may look.
ROLES = ("owner", "editor", "viewer")
#: The principal of a viewer role granted to "anyone signed in at this deployment".
ANYONE = "*"


def principal_of(user: str) -> str:
    """A user's principal: the e-mail address, trimmed and in lower case (``ANYONE`` as it is)."""
    text = str(user).strip()
    if text == ANYONE:
        return ANYONE
    text = text.lower()
    if "@" not in text or len(text) > 320 or any(c.isspace() for c in text) or text.startswith("@"):
        raise WorkspaceError(f"{user!r} is not an e-mail address")
    return text


def size_text(n: int) -> str:
    """A byte count for people: "600 MB", "1,000 bytes"."""
    return f"{n / MB:,.0f} MB" if n >= MB else f"{n:,} bytes"


def _checksum(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _settings_text(settings: dict) -> str:
    if not isinstance(settings, dict):
        raise TypeError("workspace settings must be a dict")
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"), allow_nan=False)
    if len(text.encode("utf-8")) > MAX_SETTINGS_BYTES:
        raise WorkspaceTooLarge(f"the workspace's settings exceed {size_text(MAX_SETTINGS_BYTES)}")
    return text


@dataclass(frozen=True)
class Limits:
    """Size budgets and retention (docs/deployment.md, "Workspaces")."""

    #: Uploaded files of one workspace, at most (data, model, comparison model, codebook).
    workspace_bytes: int = 600 * MB
    #: Uploaded files of all workspaces, at most (a file shared by several workspaces counts once).
    total_bytes: int = 20 * 1024 * MB
    #: A workspace nobody opened for this long is deleted by :meth:`WorkspaceStore.expire` (None: never).
    expire_after_s: float | None = 90 * 86400.0
    #: Activity-log entries older than this are removed by :meth:`WorkspaceStore.expire_log` (None: kept forever).
    log_retention_s: float | None = 183 * 86400.0

    @classmethod
    def from_env(cls, env=os.environ) -> "Limits":
        def number(name, default, scale):
            raw = env.get(name)
            if raw in (None, ""):
                return default
            value = float(raw)
            if value <= 0:
                return None if name.endswith("DAYS") else default
            return value * scale
        days = number("TCREX_WORKSPACE_EXPIRE_DAYS", cls.expire_after_s, 86400.0)
        log_days = number("TCREX_LOG_RETENTION_DAYS", cls.log_retention_s, 86400.0)
        return cls(workspace_bytes=int(number("TCREX_WORKSPACE_MAX_MB", cls.workspace_bytes, MB)),
                   total_bytes=int(number("TCREX_STORE_MAX_MB", cls.total_bytes, MB)),
                   expire_after_s=days, log_retention_s=log_days)


@dataclass(frozen=True)
class Workspace:
    """One workspace as opened: its ids, its settings and whether this opening may change it."""

    id: str
    view_id: str
    settings: dict
    revision: int
    created: float
    updated: float
    read_only: bool = False
    #: ``{digest: (name, size)}`` of its uploaded files.
    blobs: dict = field(default_factory=dict)
    #: What this opening may do (:data:`ROLES`): by link, "owner" through the editing id and "viewer" through the
    #: view id; with a signed-in user, the user's role.
    role: str = "owner"

    @property
    def link_id(self) -> str:
        """The id this opening came through (the view id for a read-only opening)."""
        return self.view_id if self.read_only else self.id


@dataclass(frozen=True)
class WorkspaceSummary:
    id: str
    view_id: str
    title: str
    updated: float
    size: int
    role: str = "owner"


@dataclass
class Health:
    """What :meth:`WorkspaceStore.check` found: damaged workspaces (skipped) and notes about the store."""

    damaged: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.damaged and not self.notes


class _SQLite:
    placeholder = "?"

    def __init__(self, path: str, notes: list[str]):
        self.path = path
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
        except OSError as exc:  # a full disk, a read-only file system, a file or a link loop where the folder goes
            raise store_problem(exc, path) from None
        self._local = threading.local()
        try:
            self._init()
        except sqlite3.OperationalError as exc:  # the file is sound but cannot be used: full, read-only, locked
            self._close_thread()
            raise store_problem(exc, path) from None
        except sqlite3.DatabaseError as exc:
            self._close_thread()
            aside = f"{path}.damaged-{time.strftime('%Y%m%d-%H%M%S')}"
            try:
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(path + suffix):
                        os.replace(path + suffix, aside + suffix)
            except OSError as err:
                raise store_problem(err, path) from None
            notes.append(f"The workspace store could not be read ({exc}); it was moved aside to {aside} and a new, "
                         "empty store was started.")
            self._init()

    def _init(self):
        con = self.connect()
        mode = con.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":  # pragma: no cover - a file system without shared memory
            raise sqlite3.DatabaseError(f"journal mode {mode}")
        answer = con.execute("PRAGMA quick_check(1)").fetchone()[0]  # SQLite answers "ok" or the first problem
        if str(answer).upper() != "OK":
            raise sqlite3.DatabaseError(answer)
        with con:
            for stmt in _SCHEMA:
                con.execute(stmt)

    def connect(self):
        con = getattr(self._local, "con", None)
        if con is None:
            # One connection per thread: Streamlit runs each session's script in its own thread.
            try:
                con = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=True)
                con.execute("PRAGMA synchronous=FULL")
                con.execute("PRAGMA busy_timeout=30000")
            except sqlite3.OperationalError as exc:
                raise store_problem(exc, self.path) from None
            self._local.con = con
        return con

    def _close_thread(self):
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

    def transaction(self):
        return _SQLiteTransaction(self.connect(), self.path)


class _SQLiteTransaction:
    """A transaction; SQLite's operational errors (a full disk, a read-only file, a lock held too long) become
    :class:`StoreUnavailable` naming the file (integrity errors stay what they are: the store's own logic)."""

    def __init__(self, con, path):
        self.con, self.path = con, path

    def _run(self, sql, args=()):
        try:
            return self.con.execute(sql, args)
        except sqlite3.OperationalError as exc:
            raise store_problem(exc, self.path) from None

    def __enter__(self):
        self._run("BEGIN IMMEDIATE")
        return self

    def execute(self, sql, args=()):
        return self._run(sql, args)

    def __exit__(self, kind, exc, tb):
        if kind is None:
            self._run("COMMIT")
        else:
            try:
                self.con.execute("ROLLBACK")
            except sqlite3.OperationalError:  # the error in flight says more than a failed rollback
                pass
        return False


class _Postgres:
    placeholder = "%s"

    def __init__(self, url: str):
        try:
            import psycopg  # noqa: PLC0415 - optional: only a PostgreSQL store needs it
        except ImportError:  # pragma: no cover - an optional dependency
            raise UnknownWorkspace("TCREX_STORE names PostgreSQL but psycopg is not installed "
                                   "(pip install 'psycopg[binary]')") from None
        self._psycopg = psycopg
        self.url = url
        self.where = redacted(url)
        self._local = threading.local()
        with self.transaction() as tx:
            # Two processes starting at once would race on CREATE TABLE IF NOT EXISTS; the advisory lock orders them.
            tx.execute("SELECT pg_advisory_xact_lock(74137)")
            for stmt in _SCHEMA:
                tx.execute(stmt)

    def connect(self):
        con = getattr(self._local, "con", None)
        if con is None or con.closed or con.broken:  # a dropped connection is opened again on the next action
            try:
                con = self._psycopg.connect(self.url, autocommit=False, connect_timeout=10)
            except self._psycopg.Error as exc:  # wrong password, no server, unknown host, database or user
                raise store_problem(exc, self.where) from None
            self._local.con = con
        return con

    def transaction(self):
        return _PostgresTransaction(self.connect(), self._psycopg, self.where)


class _PostgresTransaction:
    """A transaction; a lost connection and a value PostgreSQL refuses (a NUL byte in text) become
    :class:`StoreUnavailable`; integrity errors stay what they are (the store's own logic)."""

    def __init__(self, con, psycopg, where):
        self.con, self._psycopg, self.where = con, psycopg, where
        self._errors = (psycopg.OperationalError, psycopg.InterfaceError, psycopg.DataError)

    def __enter__(self):
        self.cur = self.con.cursor()
        return self

    def execute(self, sql, args=()):
        try:
            self.cur.execute(sql.replace("?", "%s"), args)
        except self._errors as exc:
            raise store_problem(exc, self.where) from None
        return self.cur

    def __exit__(self, kind, exc, tb):
        try:
            if kind is None:
                try:
                    self.con.commit()
                except self._errors as err:
                    raise store_problem(err, self.where) from None
            else:
                try:
                    self.con.rollback()
                except self._errors:  # the connection is gone: the error in flight says more
                    pass
        finally:
            try:
                self.cur.close()
            except self._errors:
                pass
        return False


def default_state_dir(env=os.environ) -> str:
    """``TCREX_STATE_DIR``, else ``$XDG_STATE_HOME/tcrex``, else ``~/.local/state/tcrex``."""
    if env.get("TCREX_STATE_DIR"):
        return env["TCREX_STATE_DIR"]
    base = env.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "tcrex")


class WorkspaceStore:
    """Workspaces: create, open (by editing or view id), save settings, keep uploads, duplicate, delete, expire.

    ``url``: ``None`` or a path for SQLite (a folder: ``workspaces.sqlite`` inside it), or ``postgresql://…``.
    ``blobs``: a folder or fsspec URL for uploads (default: ``blobs/`` beside the SQLite file; required for
    PostgreSQL unless ``TCREX_BLOBS`` is set). ``clock``: seconds since the epoch (tests set it to check expiry).
    """

    def __init__(self, url: str | None = None, blobs: str | None = None, limits: Limits | None = None,
                 clock: Callable[[], float] = time.time):
        self.notes: list[str] = []
        self.limits = limits or Limits()
        self.clock = clock
        if url and str(url).startswith(("postgresql://", "postgres://")):
            self.kind = "postgresql"
            self._db = _Postgres(str(url))
            if not blobs:
                raise ValueError("a PostgreSQL store needs a shared blob location (TCREX_BLOBS or blobs=)")
        else:
            self.kind = "sqlite"
            folder = str(url) if url else default_state_dir()
            path = folder if folder.endswith((".sqlite", ".db")) else os.path.join(folder, "workspaces.sqlite")
            self._db = _SQLite(path, self.notes)
            blobs = blobs or os.path.join(os.path.dirname(os.path.abspath(path)), "blobs")
        self.blobs = BlobFolder(blobs, max_bytes=self.limits.workspace_bytes)
        #: Called with each step's name (:data:`SAVE_STEPS`, :data:`UPLOAD_STEPS`) as a write passes it; None in
        #: normal use. The fault-injection test pauses a writer process there and kills it with SIGKILL.
        self.on_step: Callable[[str], None] | None = None

    def _step(self, name: str) -> None:
        if self.on_step is not None:
            self.on_step(name)

    @classmethod
    def from_env(cls, env=os.environ) -> "WorkspaceStore":
        """The store the environment names: ``TCREX_STORE`` (PostgreSQL URL or SQLite path), ``TCREX_BLOBS``,
        ``TCREX_STATE_DIR`` and the budgets of :meth:`Limits.from_env`."""
        url = env.get("TCREX_STORE") or default_state_dir(env)
        return cls(url, blobs=env.get("TCREX_BLOBS") or None, limits=Limits.from_env(env))

    def transaction(self):
        """A transaction on the store's database (``with store.transaction() as tx: tx.execute(sql, args)``, ``?``
        placeholders on both databases; committed when the block ends, rolled back on an error): what packages
        keeping tables of their own in the same store (:mod:`tcrex.monitor`) write through, so they reach SQLite
        or PostgreSQL exactly as the workspaces do. :attr:`kind` says which database it is."""
        return self._db.transaction()

    # ------------------------------------------------------------------ reading
    def _row(self, tx, any_id: str):
        if not is_id(any_id):
            raise UnknownWorkspace("This link does not name a workspace (it is not a workspace id).")
        row = tx.execute("SELECT id, view_id, settings, checksum, revision, created, updated FROM workspaces "
                         "WHERE id = ? OR view_id = ?", (any_id, any_id)).fetchone()
        if row is None:
            raise UnknownWorkspace("No workspace has this link: it was deleted, it expired, or the link is "
                                   "mistyped.")
        return row

    def _role(self, tx, row, any_id: str, user: str | None) -> str:
        """What ``user`` may do on the workspace of ``row``: by link without a user (the view id gives "viewer"),
        else by the roles granted to the user's e-mail or to anyone signed in. A workspace nobody was granted a
        role on (made before sign-in was turned on) is reached by its links as before. A stranger gets
        :class:`UnknownWorkspace`."""
        ws_id, view_id = row[0], row[1]
        by_link = "viewer" if any_id == view_id and any_id != ws_id else "owner"
        if user is None:
            return by_link
        granted = tx.execute("SELECT principal, role FROM workspace_roles WHERE ws_id = ?", (ws_id,)).fetchall()
        if not granted:
            return by_link
        mine = {role for who, role in granted if who in (principal_of(user), ANYONE)}
        for role in ROLES:
            if role in mine:
                return role
        raise UnknownWorkspace("This workspace is not shared with you; ask its owner to add your e-mail address.")

    def _build(self, tx, row, any_id: str, role: str = "owner") -> Workspace:
        ws_id, view_id, text, checksum, revision, created, updated = row
        if _checksum(text) != checksum:
            raise DamagedWorkspace("This workspace's saved settings are damaged in the store; it cannot be "
                                   "opened.")
        try:
            settings = json.loads(text)
        except ValueError:
            raise DamagedWorkspace("This workspace's saved settings are not readable.") from None
        blobs = {d: (n, int(s)) for d, n, s in
                 tx.execute("SELECT digest, name, size FROM workspace_blobs WHERE ws_id = ?", (ws_id,)).fetchall()}
        return Workspace(ws_id, view_id, settings, int(revision), float(created), float(updated),
                         read_only=role == "viewer", blobs=blobs, role=role)

    def open(self, any_id: str, touch: bool = True, user: str | None = None) -> Workspace:
        """The workspace of an editing or view id (read-only through the view id, or for a user who is only a
        viewer). Raises :class:`UnknownWorkspace` for a malformed, unknown or deleted id (or a signed-in user it
        is not shared with) and :class:`DamagedWorkspace` for one whose stored settings fail their checksum."""
        with self._db.transaction() as tx:
            row = self._row(tx, any_id)
            ws = self._build(tx, row, any_id, self._role(tx, row, any_id, user))
            if touch:
                tx.execute("UPDATE workspaces SET opened = ? WHERE id = ?", (self.clock(), ws.id))
        return ws

    def exists(self, any_id: str, user: str | None = None) -> bool:
        try:
            self.open(any_id, touch=False, user=user)
        except UnknownWorkspace:
            return False
        except DamagedWorkspace:
            return True
        return True

    def get_blob(self, any_id: str, digest: str, user: str | None = None) -> bytes:
        """An uploaded file of the workspace (checked against its digest). Only a file the workspace holds is
        handed out: knowing a digest is not enough."""
        if not is_digest(digest):
            raise UnknownWorkspace("not an uploaded file of this workspace")
        with self._db.transaction() as tx:
            row = self._row(tx, any_id)
            self._role(tx, row, any_id, user)
            ws_id = row[0]
            held = tx.execute("SELECT size FROM workspace_blobs WHERE ws_id = ? AND digest = ?",
                              (ws_id, digest)).fetchone()
        if held is None:
            raise UnknownWorkspace("not an uploaded file of this workspace")
        return self.blobs.get(digest, size=int(held[0]))

    def recent(self, limit: int = 20) -> list[WorkspaceSummary]:
        """The most recently changed workspaces (for a local single-user server's Workspaces page only: a shared
        server must not list other people's links)."""
        out = []
        with self._db.transaction() as tx:
            rows = tx.execute("SELECT w.id, w.view_id, w.settings, w.checksum, w.updated, "
                              "(SELECT COALESCE(SUM(size), 0) FROM workspace_blobs b WHERE b.ws_id = w.id) "
                              "FROM workspaces w ORDER BY w.updated DESC LIMIT ?", (int(limit),)).fetchall()
        for ws_id, view_id, text, checksum, updated, size in rows:
            if _checksum(text) != checksum:
                continue
            try:
                title = str(json.loads(text).get("title") or "Untitled workspace")
            except (ValueError, AttributeError):
                continue
            out.append(WorkspaceSummary(ws_id, view_id, title, float(updated), int(size)))
        return out

    # ------------------------------------------------------------------ writing
    def _editable(self, tx, any_id: str, user: str | None = None, owner: bool = False) -> str:
        """The workspace's id when this link (or this user) may change it (``owner``: may share or delete it)."""
        row = self._row(tx, any_id)
        role = self._role(tx, row, any_id, user)
        if role == "viewer":
            if user is None:
                raise ReadOnlyWorkspace("This is a read-only link: the workspace cannot be changed through it. "
                                        "Duplicate it to make changes of your own.")
            raise ReadOnlyWorkspace("You are a viewer of this workspace: it cannot be changed by you. Duplicate it "
                                    "to make changes of your own.")
        if owner and role != "owner":
            raise ReadOnlyWorkspace("Only the workspace's owner may share or delete it.")
        return row[0]

    def create(self, settings: dict | None = None, actor: str | None = None, user: str | None = None) -> Workspace:
        """A new workspace; with ``user`` (signed in), that user is its owner."""
        text = _settings_text(settings or {})
        now = self.clock()
        ws_id, view_id = new_id(), new_id()
        with self._db.transaction() as tx:
            tx.execute("INSERT INTO workspaces (id, view_id, settings, checksum, revision, created, updated, opened) "
                       "VALUES (?, ?, ?, ?, 0, ?, ?, ?)", (ws_id, view_id, text, _checksum(text), now, now, now))
            if user is not None:
                tx.execute("INSERT INTO workspace_roles (ws_id, principal, role) VALUES (?, ?, 'owner')",
                           (ws_id, principal_of(user)))
            _log_append(tx, self.kind, now, actor or user, view_id, "create", {})
        return Workspace(ws_id, view_id, json.loads(text), 0, now, now)

    def save(self, ws_id: str, settings: dict, base_revision: int | None = None, user: str | None = None) -> int:
        """Replace the workspace's settings; committed (on disk) when this returns. Returns the new revision.

        ``base_revision``: refuse (``False`` is never returned; :class:`WorkspaceError` is raised) when another
        writer saved since that revision. Without it the last writer wins (two tabs of one workspace)."""
        text = _settings_text(settings)
        self._step("save:begin")
        with self._db.transaction() as tx:
            real = self._editable(tx, ws_id, user)
            if base_revision is None:
                tx.execute("UPDATE workspaces SET settings = ?, checksum = ?, revision = revision + 1, updated = ?, "
                           "opened = ? WHERE id = ?", (text, _checksum(text), self.clock(), self.clock(), real))
            else:
                cur = tx.execute("UPDATE workspaces SET settings = ?, checksum = ?, revision = revision + 1, "
                                 "updated = ?, opened = ? WHERE id = ? AND revision = ?",
                                 (text, _checksum(text), self.clock(), self.clock(), real, int(base_revision)))
                if cur.rowcount == 0:
                    raise WorkspaceError("The workspace was changed elsewhere since it was opened; reload it.")
            revision = tx.execute("SELECT revision FROM workspaces WHERE id = ?", (real,)).fetchone()[0]
            self._step("save:row-written")
        self._step("save:committed")
        return int(revision)

    def put_blob(self, ws_id: str, data: bytes, name: str, actor: str | None = None,
                 user: str | None = None) -> str:
        """Keep an uploaded file in the workspace; returns its digest. Refused over the workspace's or the store's
        budget (:class:`WorkspaceTooLarge`).

        The content first, then the row: the file is written (atomically) before the row naming it is committed,
        so a process killed at any instant leaves either the old workspace (perhaps with an orphan file, harmless
        and removed by :meth:`collect_orphans`) or the workspace holding a complete file, never a row pointing at
        nothing. The steps are :data:`UPLOAD_STEPS`."""
        data = bytes(data)
        name = str(name)[:255]
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
            raise WorkspaceError(f"the file name {name!r} holds a NUL byte or another control character; rename "
                                 "the file and upload it again")
        digest = digest_of(data)
        self._step("upload:begin")
        with self._db.transaction() as tx:  # refuse early, before a large file is written
            held = self._check_budget(tx, self._editable(tx, ws_id, user), digest, len(data))
        if not held:
            self.blobs.put(data, step=lambda s: self._step(f"upload:{s}"))
            self._step("upload:file-written")
        with self._db.transaction() as tx:
            real = self._editable(tx, ws_id, user)
            if not self._check_budget(tx, real, digest, len(data)):
                tx.execute("INSERT INTO workspace_blobs (ws_id, digest, size, name) VALUES (?, ?, ?, ?)",
                           (real, digest, len(data), name))
                _log_append(tx, self.kind, self.clock(), actor or user, self._view_of(tx, real), "upload",
                                 {"name": name, "sha256": digest, "bytes": len(data)})
                self._step("upload:row-written")
        self._step("upload:committed")
        if not self.blobs.exists(digest):
            # Another process deleted the last workspace holding the same content between our write and our
            # commit (its clean-up saw no row yet): write it again, now that the row keeps it.
            self.blobs.put(data)
        return digest

    def _check_budget(self, tx, real: str, digest: str, size: int) -> bool:
        """Whether the workspace already holds that content; raises :class:`WorkspaceTooLarge` when adding it
        would exceed a budget."""
        held = tx.execute("SELECT 1 FROM workspace_blobs WHERE ws_id = ? AND digest = ?", (real, digest)).fetchone()
        if held is not None:
            return True
        used = tx.execute("SELECT COALESCE(SUM(size), 0) FROM workspace_blobs WHERE ws_id = ?", (real,)).fetchone()[0]
        if int(used) + size > self.limits.workspace_bytes:
            raise WorkspaceTooLarge(
                f"this workspace's uploads would exceed {size_text(self.limits.workspace_bytes)}; delete or "
                "duplicate-and-trim the workspace, or raise TCREX_WORKSPACE_MAX_MB")
        known = tx.execute("SELECT 1 FROM workspace_blobs WHERE digest = ? LIMIT 1", (digest,)).fetchone()
        if known is None:
            total = tx.execute("SELECT COALESCE(SUM(size), 0) FROM (SELECT digest, MAX(size) AS size "
                               "FROM workspace_blobs GROUP BY digest) AS d").fetchone()[0]
            if int(total) + size > self.limits.total_bytes:
                raise WorkspaceTooLarge("the workspace store is full; ask the operator to free space or "
                                        "raise TCREX_STORE_MAX_MB")
        return False

    def drop_blob(self, ws_id: str, digest: str, user: str | None = None) -> None:
        """Let the workspace forget an uploaded file (deleted from disk when no workspace holds it)."""
        with self._db.transaction() as tx:
            real = self._editable(tx, ws_id, user)
            tx.execute("DELETE FROM workspace_blobs WHERE ws_id = ? AND digest = ?", (real, digest))
        self._collect([digest])

    def duplicate(self, any_id: str, settings: dict | None = None, actor: str | None = None,
                  user: str | None = None) -> Workspace:
        """A new workspace (new ids) with the same settings and uploads; works from a view link too, so a viewer
        can make a copy of their own."""
        source = self.open(any_id, touch=False, user=user)
        text = _settings_text(source.settings if settings is None else settings)
        now = self.clock()
        ws_id, view_id = new_id(), new_id()
        with self._db.transaction() as tx:
            tx.execute("INSERT INTO workspaces (id, view_id, settings, checksum, revision, created, updated, opened) "
                       "VALUES (?, ?, ?, ?, 0, ?, ?, ?)", (ws_id, view_id, text, _checksum(text), now, now, now))
            tx.execute("INSERT INTO workspace_blobs (ws_id, digest, size, name) SELECT ?, digest, size, name "
                       "FROM workspace_blobs WHERE ws_id = ?", (ws_id, source.id))
            if user is not None:  # the copy is the user's alone: no role of the original is carried over
                tx.execute("INSERT INTO workspace_roles (ws_id, principal, role) VALUES (?, ?, 'owner')",
                           (ws_id, principal_of(user)))
            _log_append(tx, self.kind, now, actor or user, view_id, "duplicate", {"from": source.view_id})
        return self.open(ws_id, touch=False, user=user)

    def delete(self, ws_id: str, actor: str | None = None, user: str | None = None) -> None:
        """Remove the workspace, its settings and every uploaded file no other workspace holds (its activity-log
        entries stay, until the log's retention removes them)."""
        with self._db.transaction() as tx:
            real = self._editable(tx, ws_id, user, owner=True)
            _log_append(tx, self.kind, self.clock(), actor or user, self._view_of(tx, real), "delete", {})
            tx.execute("DELETE FROM workspace_roles WHERE ws_id = ?", (real,))
            digests = [d for (d,) in tx.execute("SELECT digest FROM workspace_blobs WHERE ws_id = ?",
                                                (real,)).fetchall()]
            tx.execute("DELETE FROM workspace_blobs WHERE ws_id = ?", (real,))
            tx.execute("DELETE FROM workspaces WHERE id = ?", (real,))
        self._collect(digests)

    def _collect(self, digests) -> None:
        for digest in digests:
            with self._db.transaction() as tx:
                still = tx.execute("SELECT 1 FROM workspace_blobs WHERE digest = ? LIMIT 1", (digest,)).fetchone()
            if still is None:
                self.blobs.delete(digest)

    def expire(self, now: float | None = None) -> list[str]:
        """Delete the workspaces nobody opened within :attr:`Limits.expire_after_s`; returns their ids."""
        if self.limits.expire_after_s is None:
            return []
        cutoff = (self.clock() if now is None else now) - self.limits.expire_after_s
        with self._db.transaction() as tx:
            old = [r[0] for r in tx.execute("SELECT id FROM workspaces WHERE opened < ?", (cutoff,)).fetchall()]
        for ws_id in old:
            try:
                self.delete(ws_id, actor="retention")
            except UnknownWorkspace:  # deleted meanwhile by another process
                pass
        return old

    def collect_orphans(self, grace_s: float = 3600.0) -> list[str]:
        """Remove upload files no workspace holds (left by a process killed between writing a file and committing
        its row, or by a refused upload) and temporary files of unfinished writes, once older than ``grace_s``
        seconds (a younger one may be an upload in flight in another process). Returns the names removed."""
        cutoff = self.clock() - grace_s
        with self._db.transaction() as tx:
            held = {d for (d,) in tx.execute("SELECT DISTINCT digest FROM workspace_blobs").fetchall()}
        removed = []
        for name, modified in self.blobs.listing():
            if modified > cutoff:
                continue
            if name.startswith(TMP_PREFIX):
                self.blobs.delete_temporary(name)
                removed.append(name)
            elif is_digest(name) and name not in held:
                self._collect([name])  # checks the rows again, in case a workspace took it meanwhile
                if not self.blobs.exists(name):
                    removed.append(name)
        return removed

    # ------------------------------------------------------------------ activity log
    def _view_of(self, tx, real: str) -> str:
        return tx.execute("SELECT view_id FROM workspaces WHERE id = ?", (real,)).fetchone()[0]

    def log(self, any_id: str, action: str, details: dict | None = None, actor: str | None = None,
            user: str | None = None):
        """Record an action on the workspace (:data:`tcrex.workspace.ACTIONS`) in the activity log; names, sizes,
        digests and choices only, never data. Recorded through the view id too (a viewer's export)."""
        with self._db.transaction() as tx:
            row = self._row(tx, any_id)
            self._role(tx, row, any_id, user)
            return _log_append(tx, self.kind, self.clock(), actor or user, row[1], action, details)

    def activity(self, any_id: str | None = None, limit: int | None = None, user: str | None = None) -> list:
        """Activity-log entries oldest first: of one workspace (an editing or view id; its entries are kept under
        its view id; with ``user``, its owner only) or, with None, of the whole store (the operator)."""
        with self._db.transaction() as tx:
            if any_id is None:
                return _log_entries(tx, None, limit)
            row = self._row(tx, any_id)
            if self._role(tx, row, any_id, user) != "owner":
                raise ReadOnlyWorkspace("The activity log of a workspace is shown to its owner only.")
            return _log_entries(tx, row[1], limit)

    # ------------------------------------------------------------------ roles
    def grant(self, any_id: str, who: str, role: str, user: str | None = None, actor: str | None = None) -> None:
        """Give ``who`` (an e-mail address, or :data:`ANYONE` for a viewer role to anyone signed in) a role on the
        workspace; the owner only. Replaces the principal's earlier role; logged as ``share``."""
        if role not in ROLES:
            raise WorkspaceError(f"unknown role {role!r} (one of {', '.join(ROLES)})")
        target = principal_of(who)
        if target == ANYONE and role != "viewer":
            raise WorkspaceError("anyone signed in may be a viewer only")
        with self._db.transaction() as tx:
            real = self._editable(tx, any_id, user, owner=True)
            if user is not None and principal_of(user) == target and role != "owner":
                self._keep_an_owner(tx, real, target)
            tx.execute("DELETE FROM workspace_roles WHERE ws_id = ? AND principal = ?", (real, target))
            tx.execute("INSERT INTO workspace_roles (ws_id, principal, role) VALUES (?, ?, ?)", (real, target, role))
            _log_append(tx, self.kind, self.clock(), actor or user, self._view_of(tx, real), "share",
                             {"principal": target, "role": role})

    def revoke(self, any_id: str, who: str, user: str | None = None, actor: str | None = None) -> None:
        """Take ``who``'s role away (the owner only; the last owner stays); logged as ``share`` with role None."""
        target = principal_of(who)
        with self._db.transaction() as tx:
            real = self._editable(tx, any_id, user, owner=True)
            self._keep_an_owner(tx, real, target)
            tx.execute("DELETE FROM workspace_roles WHERE ws_id = ? AND principal = ?", (real, target))
            _log_append(tx, self.kind, self.clock(), actor or user, self._view_of(tx, real), "share",
                             {"principal": target, "role": None})

    def _keep_an_owner(self, tx, real: str, leaving: str) -> None:
        owners = {p for (p,) in tx.execute("SELECT principal FROM workspace_roles WHERE ws_id = ? AND role = 'owner'",
                                           (real,)).fetchall()}
        if owners and owners <= {leaving}:
            raise WorkspaceError("a workspace keeps at least one owner: make someone else owner first")

    def roles(self, any_id: str, user: str | None = None) -> dict[str, str]:
        """``{principal: role}`` of the workspace (who it is shared with); the owner only."""
        with self._db.transaction() as tx:
            real = self._editable(tx, any_id, user, owner=True)
            return {p: r for p, r in tx.execute("SELECT principal, role FROM workspace_roles WHERE ws_id = ? "
                                                "ORDER BY principal", (real,)).fetchall()}

    def visible(self, user: str, limit: int = 100) -> list[WorkspaceSummary]:
        """The workspaces ``user`` may open (a role for their e-mail, or a viewer role for anyone signed in), most
        recently changed first, each with the user's role: what a signed-in user's Workspaces page lists."""
        me = principal_of(user)
        with self._db.transaction() as tx:
            rows = tx.execute("SELECT w.id, w.view_id, w.settings, w.checksum, w.updated, r.role, "
                              "(SELECT COALESCE(SUM(size), 0) FROM workspace_blobs b WHERE b.ws_id = w.id) "
                              "FROM workspaces w JOIN workspace_roles r ON r.ws_id = w.id "
                              "WHERE r.principal = ? OR r.principal = ? ORDER BY w.updated DESC",
                              (me, ANYONE)).fetchall()
        best: dict[str, tuple] = {}
        for row in rows:
            held = best.get(row[0])
            if held is None or ROLES.index(row[5]) < ROLES.index(held[5]):
                best[row[0]] = row
        out = []
        for ws_id, view_id, text, checksum, updated, role, size in sorted(best.values(), key=lambda r: -r[4]):
            if _checksum(text) != checksum:
                continue
            try:
                title = str(json.loads(text).get("title") or "Untitled workspace")
            except (ValueError, AttributeError):
                continue
            out.append(WorkspaceSummary(ws_id, view_id, title, float(updated), int(size), role))
        return out[:limit]

    def check_log(self):
        """Whether the activity log's chain is intact (:class:`tcrex.workspace.LogCheck`)."""
        with self._db.transaction() as tx:
            return _check_log(tx)

    def expire_log(self, now: float | None = None) -> int:
        """Remove activity-log entries older than :attr:`Limits.log_retention_s`; returns how many."""
        if self.limits.log_retention_s is None:
            return 0
        cutoff = (self.clock() if now is None else now) - self.limits.log_retention_s
        with self._db.transaction() as tx:
            return _log_expire(tx, self.kind, cutoff)

    # ------------------------------------------------------------------ health
    def check(self) -> Health:
        """Every workspace's settings against its checksum and every upload's file (there, a regular file of the
        recorded size; its content is checked against its digest whenever it is read); damaged ones are listed
        (and skipped by :meth:`recent`), never deleted."""
        health = Health(notes=list(self.notes))
        with self._db.transaction() as tx:
            rows = tx.execute("SELECT id, settings, checksum FROM workspaces").fetchall()
            blob_rows = tx.execute("SELECT ws_id, digest, size FROM workspace_blobs").fetchall()
        for ws_id, text, checksum in rows:
            if _checksum(text) != checksum:
                health.damaged.append(ws_id)
        missing = {d for _, d, size in blob_rows if not self.blobs.looks_intact(d, size)}
        for ws_id, digest, _ in blob_rows:
            if digest in missing and ws_id not in health.damaged:
                health.damaged.append(ws_id)
        return health

    def size_of(self, any_id: str) -> int:
        """Bytes of the workspace's uploads plus its settings text."""
        ws = self.open(any_id, touch=False)
        return sum(size for _, size in ws.blobs.values()) + len(_settings_text(ws.settings))
