"""What can go wrong when opening or changing a workspace, each with a message a user can read."""
from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

from ..errors import StoreError, TCRExError
from ..inputs import os_problem


class WorkspaceError(TCRExError):
    """Base class of the workspace store's errors."""


class UnknownWorkspace(WorkspaceError):
    """The id is malformed, was never issued, or its workspace was deleted or expired."""


class ReadOnlyWorkspace(WorkspaceError):
    """A change was asked through a read-only (view) link."""


class DamagedWorkspace(WorkspaceError):
    """The stored settings or an uploaded file fail their checksum, or the store itself is damaged."""


class WorkspaceTooLarge(WorkspaceError):
    """A workspace or the whole store would exceed its size budget."""


class StoreUnavailable(WorkspaceError, StoreError):
    """The store's database or state folder cannot be used (wrong password, no server, a lost connection, a full
    disk, a read-only or missing folder); the message names the store and what to do."""


def redacted(url: str) -> str:
    """A store URL fit for a message: the password is never shown (``postgresql://user:***@host:port/db``)."""
    try:
        parts = urlsplit(str(url))
    except ValueError:
        return "the store"
    if parts.password is None:
        return str(url)
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


#: Phrases of the databases' own messages (any of them; a tuple: all of its parts) -> (what happened, what to do);
#: the first match wins.
_DB_PROBLEMS = (
    (("password authentication failed", "no password supplied", "password is required"),
     "refused the password", "check the user name and password in TCREX_STORE"),
    ((("role", "does not exist"),), "does not know this user", "check the user name in TCREX_STORE"),
    ((("database", "does not exist"),), "has no such database", "create the database or correct its name in TCREX_STORE"),
    (("connection refused",), "is not reachable (no server answers at that address)",
     "start the PostgreSQL server or correct the host and port in TCREX_STORE"),
    (("could not translate host name", "name or service not known", "nodename nor servname"),
     "names a host that cannot be found", "correct the host name in TCREX_STORE"),
    (("timeout expired", "timed out"), "did not answer in time", "check that the server runs and is reachable"),
    (("server closed the connection", "terminating connection", "consuming input failed", "connection is lost",
      "the connection is closed", "ssl syscall error", "connection already closed", "eof detected"),
     "lost the connection (the server stopped or dropped it)", "try again; if it persists, check the server"),
    (("no such file or directory",), "is not reachable (no server listens on that socket)",
     "start the PostgreSQL server or correct TCREX_STORE"),
    (("disk is full", "disk or database is full", "database or disk is full", "no space left"),
     "cannot be written: the disk is full", "free some space on that disk"),
    (("readonly database", "read-only", "read only"), "cannot be written: it is read-only",
     "make the state folder writable or choose another (TCREX_STATE_DIR)"),
    (("unable to open database file",), "cannot be opened (its folder is missing, unreadable or not a folder)",
     "check the state folder (TCREX_STATE_DIR)"),
    (("database is locked",), "stayed locked by another process", "try again; if it persists, check what holds it"),
    (("nul (0x00)", "nul character", "0x00"), "refused a text holding a NUL byte", "rename the file"),
)


def store_problem(exc: BaseException, where: str) -> StoreUnavailable:
    """The database's or the file system's error ``exc`` as a :class:`StoreUnavailable` naming the store
    (``where``, already redacted) and what to do; messages of unknown errors are kept, shortened."""
    if isinstance(exc, OSError) and getattr(exc, "errno", None) is not None and not type(exc).__module__.startswith(
            ("psycopg", "sqlite3")):
        return StoreUnavailable(f"the workspace store cannot be used: {os_problem(exc)}" if exc.filename
                                else f"the workspace store cannot be used: {os_problem(exc, where)}")
    text = " ".join(str(exc).split())
    low = text.lower()
    if "unable to open" in low and _read_only_folder(where):  # SQLite in WAL mode cannot open a read-only copy
        low = "read-only"
    for phrases, happened, todo in _DB_PROBLEMS:
        if any(all(p in low for p in ((alt,) if isinstance(alt, str) else alt)) for alt in phrases):
            return StoreUnavailable(f"the workspace store {where} {happened}; {todo}")
    first = text.split(" DETAIL:")[0][:200] or type(exc).__name__
    return StoreUnavailable(f"the workspace store {where} cannot be used ({first}); check the store settings "
                            "(TCREX_STORE, TCREX_STATE_DIR)")


def _read_only_folder(path: str) -> bool:
    folder = os.path.dirname(os.path.abspath(path)) if path else ""
    try:
        return bool(folder) and bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False
