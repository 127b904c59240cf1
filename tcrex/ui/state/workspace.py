"""The dashboard's workspace: the session's choices saved to the store as they change, restored from ``?ws=ID``.

A workspace holds what the user *chose* — the data and model choices with their uploaded files, the favourable
outcome and class names, the value labels and the data dictionary, the applied parameters and constraints, the chosen individual and its edited values, the
audit's settings and the page — never what is derived from them (fits and audits are recomputed, or found in the
caches). Which session keys those are is declared once, in :data:`PERSISTED` (the keys themselves are declared in
:mod:`tcrex.ui.state.session`).

Every run :func:`attach` binds the session to a workspace (the link's, else a new one) and saves what changed since
the last save before the page draws (callbacks and widget changes of the last interaction), and :func:`save` runs
again after the page (choices the page itself made); each save is committed when it returns. A read-only (view)
link restores the same workspace and saves nothing: a viewer can look at every page, and what they change stays in
their browser tab. The store is :class:`tcrex.workspace.WorkspaceStore` (SQLite under ``TCREX_STATE_DIR`` by
default, PostgreSQL with ``TCREX_STORE``); ``TCREX_WORKSPACES=0`` turns saving off (every session is then as
before: lost with its tab).
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import sys

import numpy as np
import streamlit as st

from tcrex.workspace import (DamagedWorkspace, ReadOnlyWorkspace, StoreUnavailable, UnknownWorkspace, WorkspaceError,
                             WorkspaceStore, WorkspaceTooLarge)
from . import caching, session, signin, sources, active

#: The session keys a workspace saves and restores, in the order they are restored (specs before uploads: an
#: upload is kept under the spec that points at it).
PERSISTED = (session.DATA_SPEC, session.MODEL_SPEC, session.PARAMS, session.CLASS_NAMES, session.VALUE_LABELS,
             session.DICTIONARY,
             session.OUTCOME_CONFIRMED,
             session.FAVOURABLE_FOR, session.CONSTRAINTS_CONFIRMED, session.INDIVIDUAL, session.EDITED_INDIVIDUAL,
             session.AUDIT_PREFS, session.SETUP_DATA_CHOICE, session.SETUP_MODEL_CHOICE, session.COMPARE_CHOICE,
             session.MONITOR_CHOICE)
#: Upload slots saved with the workspace (data, model, comparison model B).
SLOTS = ("data", "model", "model_b")
#: The version of the settings' JSON layout (a newer one is refused with a message, never half-read).
SETTINGS_VERSION = 1

_TYPES = {"DataSpec": sources.DataSpec, "ModelSpec": sources.ModelSpec, "Params": active.Params}


def enabled() -> bool:
    return os.environ.get("TCREX_WORKSPACES", "1") not in ("0", "false", "no")


#: The environment that names the store and its budgets (:meth:`WorkspaceStore.from_env`).
_STORE_ENV = ("TCREX_STORE", "TCREX_BLOBS", "TCREX_STATE_DIR", "TCREX_WORKSPACE_MAX_MB", "TCREX_STORE_MAX_MB",
              "TCREX_WORKSPACE_EXPIRE_DAYS", "TCREX_LOG_RETENTION_DAYS")


def store() -> WorkspaceStore:
    """The server's one store (thread-safe: one database connection per thread), checked when the server first
    opens it: damaged workspaces are counted on stderr (never their content) and skipped; workspaces unused for
    longer than ``TCREX_WORKSPACE_EXPIRE_DAYS`` are deleted. Kept per naming environment, so a process whose
    environment names another store (a test, an embedding program) never writes into the one opened first."""
    return _store(tuple(os.environ.get(name) or "" for name in _STORE_ENV))


@st.cache_resource(show_spinner=False, max_entries=4)
def _store(named_by: tuple) -> WorkspaceStore:  # hashed: Streamlit skips only _-prefixed arguments
    db = WorkspaceStore.from_env()
    health = db.check()
    for note in health.notes:
        print(f"tcrex workspaces: {note}", file=sys.stderr)
    if health.damaged:
        print(f"tcrex workspaces: {len(health.damaged)} damaged workspace(s) will not open (their links say so)",
              file=sys.stderr)
    expired = db.expire()
    if expired:
        print(f"tcrex workspaces: {len(expired)} workspace(s) unused for longer than the expiry were deleted",
              file=sys.stderr)
    removed = db.expire_log()
    if removed:
        print(f"tcrex workspaces: {removed} activity-log entries older than the retention were removed",
              file=sys.stderr)
    orphans = db.collect_orphans()
    if orphans:
        print(f"tcrex workspaces: {len(orphans)} upload file(s) no workspace holds were removed", file=sys.stderr)
    return db


store.clear = _store.clear  # st.cache_resource's own: forget every store opened


# ============================================================================================ encoding
def encode(value):
    """A session value as plain JSON: dataclasses by name (only those of :data:`_TYPES`), tuples, sets, dicts
    with non-string keys, numpy scalars and non-finite floats tagged so that :func:`decode` gives them back."""
    if dataclasses.is_dataclass(value) and type(value).__name__ in _TYPES:
        return {"__type__": type(value).__name__,
                "fields": {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return {"__float__": repr(value)}
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {"__set__": sorted((encode(v) for v in value), key=repr)}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": [[encode(k), encode(v)] for k, v in value.items()]}
    raise TypeError(f"cannot save a {type(value).__name__} in a workspace")


def decode(value):
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__type__" in value:
        cls = _TYPES.get(value["__type__"])
        if cls is None:
            raise WorkspaceError(f"unknown saved type {value['__type__']!r}")
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: decode(v) for k, v in value["fields"].items() if k in names})
    if "__float__" in value:
        return float(value["__float__"])
    if "__tuple__" in value:
        return tuple(decode(v) for v in value["__tuple__"])
    if "__set__" in value:
        return {decode(v) for v in value["__set__"]}
    if "__dict__" in value:
        return {_hashable(decode(k)): decode(v) for k, v in value["__dict__"]}
    raise WorkspaceError("the saved settings hold a value this version cannot read")


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def snapshot(ss=None) -> dict:
    """The session's saved choices as workspace settings (JSON-ready)."""
    values = {key: encode(value) for key, value in session.read_keys(PERSISTED, ss).items()}
    uploads = session.uploads(ss, create=False)
    files = {}
    for slot in SLOTS:
        latest = uploads.get(slot)
        kept = uploads.get(f"{slot}@") or {}
        entries = [(d, name) for d, (_, name, _) in kept.items()]
        if latest is not None and latest[0] not in {d for d, _ in entries}:
            entries.append((latest[0], latest[1]))
        if entries:
            files[slot] = {"latest": latest[0] if latest else None, "kept": [list(e) for e in entries]}
    title = _title(session.data_spec(ss))
    return {"version": SETTINGS_VERSION, "title": title, "session": values, "files": files,
            "page": session.workspace_page(ss)}


def _title(spec) -> str:
    return f"{spec.name}" if spec is not None else "Untitled workspace"


def stored_uploads(db: WorkspaceStore, link: str, blobs_of, user: str | None = None) -> tuple[dict[str, bytes],
                                                                                           list[str]]:
    """A workspace's kept files keyed as the session keys its uploads (:func:`tcrex.ui.state.sources.sha256`, the
    digest the settings name), not as the store keys them (its own content digest): the two differ, and keyed by
    the store's digest no saved upload matched its settings, so a reopened link fell back to the sample.

    ``blobs_of``: the opened workspace's ``{digest: (name, size)}``. Returns the files found and the names of those
    the store could not hand back (missing or damaged): the workspace opens with everything else."""
    blobs, missing = {}, []
    for digest in blobs_of:
        try:
            raw = db.get_blob(link, digest, user=user)
        except (DamagedWorkspace, UnknownWorkspace):
            entry = blobs_of[digest] if isinstance(blobs_of, dict) else None
            missing.append(str(entry[0]) if entry else digest[:12])
            continue
        blobs[sources.sha256(raw)] = raw
    return blobs, missing


def missing_text(names) -> str:
    """What a reopened workspace lacks, for its banner."""
    listed = ", ".join(f"*{n}*" for n in sorted(names))
    return (f"This workspace opened without the uploaded file(s) {listed}: the store no longer has them (missing or "
            "damaged). Every other choice is restored; upload the file(s) again on the Data & model page.")


def restore(settings: dict, blobs: dict[str, bytes], ss=None) -> None:
    """Put saved settings back into a (new) session: choices first, then the uploads they point at."""
    version = settings.get("version", 1)
    if not isinstance(version, int) or version > SETTINGS_VERSION:
        raise WorkspaceError("this workspace was saved by a newer version of the dashboard")
    saved = settings.get("session", {})
    # A choice that workspace never made takes its default, not this session's leftover.
    session.write_keys({key: decode(saved[key]) for key in PERSISTED if key in saved}, PERSISTED, ss)
    uploads = session.uploads(ss)
    for slot, info in (settings.get("files") or {}).items():
        if slot not in SLOTS:
            continue
        kept = caching.LRU(caching.KEPT_UPLOADS)
        for digest, name in info.get("kept", []):
            if digest in blobs:
                kept[digest] = (digest, name, blobs[digest])
        uploads[f"{slot}@"] = kept
        latest = info.get("latest")
        if latest in kept:
            uploads[slot] = kept[latest]
    if settings.get("page"):
        session.set_workspace_page(settings["page"], ss)


# ============================================================================================ activity log
def actor() -> str:
    """Who acts in this session, for the activity log: the signed-in user's e-mail when sign-in is on, else the
    kind of link the session came through (a deployment without sign-in knows no more)."""
    who = signin.email()
    if who:
        return who
    bound = binding()
    return "read-only link" if bound is not None and bound.read_only else "editing link"


def _params_fields(settings: dict) -> tuple[dict, dict]:
    """The applied parameters of saved settings as plain values (without constraints) and the constraints."""
    raw = ((settings or {}).get("session") or {}).get(session.PARAMS)
    if raw is None:
        return {}, {}
    try:
        p = decode(raw)
    except (WorkspaceError, TypeError):
        return {"unreadable": True}, {}
    plain = {"rho": p.rho, "tau": p.tau, "n_trees": p.n_trees, "max_cells": p.max_cells,
             "target": encode(p.target), "grower": p.grower}
    return plain, p.constraint_spec


def _dictionary_fields(settings: dict) -> dict:
    raw = ((settings or {}).get("session") or {}).get(session.VALUE_LABELS)
    if raw is None:
        return {}
    text = json.dumps(raw, sort_keys=True)
    return {"sha256": sources.sha256(text), "bytes": len(text.encode("utf-8"))}


def changes(old: dict, new: dict) -> list[tuple[str, dict]]:
    """The activity-log entries a save from ``old`` to ``new`` settings makes: applied parameters, constraints and
    the dictionary (value labels; its digest, never its labels)."""
    out = []
    (p_old, c_old), (p_new, c_new) = _params_fields(old), _params_fields(new)
    if p_new != p_old and p_new:
        out.append(("parameters", p_new))
    if c_new != c_old:
        out.append(("constraints", {"constraints": c_new}))
    d_new = _dictionary_fields(new)
    if d_new != _dictionary_fields(old):
        out.append(("dictionary", d_new or {"removed": True}))
    return out


def record(action: str, details: dict | None = None, once_key: str | None = None) -> None:
    """Record an action of this session's workspace in the activity log (an audit run, an export); with
    ``once_key`` only the first time this session does it (an audit page rerun shows the same audit)."""
    bound = binding()
    if bound is None or not bound.id:
        return
    if once_key is not None:
        if once_key in bound.recorded:
            return
        bound.recorded = bound.recorded | {once_key}
    try:
        store().log(bound.view_id if bound.read_only else bound.id, action, details, actor=actor(),
                    user=signin.email())
    except WorkspaceError as exc:  # the workspace was deleted elsewhere: say so, never fail the page
        bound.problem = str(exc)


def recorder(action: str, details: dict | None = None):
    """A callable recording ``action`` later, from any thread (a download is built outside the script run): who
    and which workspace are taken now."""
    bound = binding()
    if bound is None or not bound.id:
        return lambda: None
    link, who, user, db = (bound.view_id if bound.read_only else bound.id), actor(), signin.email(), store()

    def done() -> None:
        try:
            db.log(link, action, details, actor=who, user=user)
        except WorkspaceError:
            pass
    return done


def may_read_log() -> bool:
    """Whether this session may read its workspace's activity log: its owner only (without sign-in, whoever holds
    the editing link; a read-only session never)."""
    bound = binding()
    return bool(bound is not None and bound.id and not bound.read_only and bound.role == "owner")


# ============================================================================================ binding
@dataclasses.dataclass
class Binding:
    """The session's workspace: its link id, whether it is read-only, and what was saved last."""

    id: str
    view_id: str
    read_only: bool
    saved: str = ""  # the JSON text of the last saved settings
    files: frozenset = frozenset()  # digests already in the store
    problem: str | None = None  # shown once (a bad link, a full store)
    restored_page: str | None = None  # the saved page, until the app has switched to it
    recorded: frozenset = frozenset()  # once-only activity already logged by this session (audit keys)
    role: str = "owner"  # owner, editor or viewer (tcrex.workspace.ROLES): by link, or the signed-in user's role


def binding() -> Binding | None:
    return session.workspace_binding()


def restored_page() -> str | None:
    """The page a workspace opened from a link was on, once (the app switches there when the link named none)."""
    bound = binding()
    if bound is None or not bound.restored_page:
        return None
    path, bound.restored_page = bound.restored_page, None
    return path


def attach(page_path: str | None = None) -> Binding | None:
    """Bind this session to the workspace of its link (restoring it), or to a new one; then save what changed.

    Returns None when workspaces are off or the store cannot be opened (the dashboard then works as a plain
    session, and says so once)."""
    if not enabled():
        return None
    bound = binding()
    link = st.query_params.get("ws")
    if bound is not None and link in (bound.id, bound.view_id):
        save(page_path)
        return bound
    if bound is not None and link is None:  # a page switch dropped the query string: put it back
        st.query_params["ws"] = bound.view_id if bound.read_only else bound.id
        save(page_path)
        return bound
    try:
        db = store()
    except Exception as exc:  # noqa: BLE001 - any store failure leaves a working (unsaved) dashboard
        why = str(exc) if isinstance(exc, StoreUnavailable) else type(exc).__name__
        session.set_notice(f"Workspaces are unavailable on this server ({why}); this session will not be saved.")
        session.set_workspace_binding(Binding("", "", True, problem="unavailable"))
        return None
    problem = None
    user = signin.email()
    if link:
        try:
            ws = db.open(link, user=user)
            blobs, missing = stored_uploads(db, link, ws.blobs, user=user)
            restore(ws.settings, blobs)
            bound = Binding(ws.id, ws.view_id, ws.read_only, saved=json.dumps(ws.settings, sort_keys=True),
                            files=frozenset(blobs), restored_page=ws.settings.get("page"),
                            problem=missing_text(missing) if missing else None, role=ws.role)
            session.set_workspace_binding(bound)
            return bound
        except StoreUnavailable as exc:  # the store, not the workspace: nothing is started in its place
            session.set_notice(f"Workspaces are unavailable on this server ({exc}); this session will not be saved.")
            session.set_workspace_binding(Binding("", "", True, problem="unavailable"))
            return None
        except (UnknownWorkspace, DamagedWorkspace, WorkspaceError) as exc:
            problem = f"{exc} A new workspace was started."
    ws = db.create({"version": SETTINGS_VERSION, "title": "Untitled workspace"}, actor=actor(), user=user)
    bound = Binding(ws.id, ws.view_id, False, problem=problem)
    session.set_workspace_binding(bound)
    st.query_params["ws"] = ws.id
    save(page_path)
    return bound


def save(page_path: str | None = None) -> None:
    """Save the session's choices if they changed since the last save (committed when this returns)."""
    bound = binding()
    if bound is None or bound.read_only or not bound.id:
        return
    if page_path is not None:
        session.set_workspace_page(page_path)
    settings = snapshot()
    db = store()
    try:
        uploads = session.uploads(create=False)
        fresh = {d: (name, raw) for slot in SLOTS for d, (_, name, raw) in (uploads.get(f"{slot}@") or {}).items()
                 if d not in bound.files}
        for slot in SLOTS:
            latest = uploads.get(slot)
            if latest is not None and latest[0] not in bound.files:
                fresh[latest[0]] = (latest[1], latest[2])
        who, user = actor(), signin.email()
        for digest, (name, raw) in fresh.items():
            db.put_blob(bound.id, raw, name, actor=who, user=user)
        bound.files = bound.files | frozenset(fresh)
        text = json.dumps(settings, sort_keys=True)
        if text != bound.saved:
            db.save(bound.id, settings, user=user)
            for action, details in changes(json.loads(bound.saved) if bound.saved else {}, settings):
                db.log(bound.id, action, details, actor=who, user=user)
            bound.saved = text
    except WorkspaceTooLarge as exc:
        bound.problem = f"This workspace cannot save its uploads: {exc}."
    except StoreUnavailable as exc:  # a full disk, a lost database connection: said, and tried again next time
        bound.problem = f"This workspace could not be saved just now: {exc}."
    except (UnknownWorkspace, ReadOnlyWorkspace) as exc:  # deleted elsewhere, or a view id
        bound.problem = str(exc)
        bound.read_only = True


def banner() -> None:
    """What the reader must know about this workspace: a read-only link, a bad link, a store problem."""
    bound = binding()
    if bound is not None and bound.read_only and bound.id:
        st.info("**Read-only link.** You can look at every page as it was saved; every input is disabled and nothing "
                "is saved. To work on this analysis, use *Duplicate* on the Workspaces page: the copy and its links "
                "are yours alone.", icon=":material/visibility:")
    problem = take_problem()
    if problem:
        st.warning(problem, icon=":material/warning:")


def take_problem() -> str | None:
    bound = binding()
    if bound is None or not bound.problem:
        return None
    problem, bound.problem = bound.problem, None
    return problem


# ============================================================================================ Workspaces page
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def loopback_only() -> bool:
    """Whether this server listens on loopback only (``server.address``; Streamlit's default, unset, is every
    interface)."""
    return str(st.get_option("server.address") or "") in LOOPBACK


def listing_allowed() -> bool:
    """Whether the Workspaces page lists recent workspaces with their editing links: never by default. The
    operator opts in for a single-user machine with ``TCREX_LIST_WORKSPACES=1``, honoured only while the server
    listens on loopback alone and is not declared shared (``TCREX_SHARED_SERVER=1``): a listed editing link is
    edit access for whoever sees the page."""
    def on(name):
        return os.environ.get(name, "0").strip().lower() in ("1", "true", "yes")
    return on("TCREX_LIST_WORKSPACES") and not on("TCREX_SHARED_SERVER") and loopback_only()


def base_url() -> str:
    """The dashboard's address as this browser reached it (scheme, host and port), for links to copy."""
    url = st.context.url or ""
    if "://" not in url:
        return ""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


def link(ws_id: str, page_path: str = "") -> str:
    return f"{base_url()}/{page_path}?ws={ws_id}"


def _switch_to(bound: Binding) -> None:
    session.set_workspace_binding(bound)
    st.query_params["ws"] = bound.view_id if bound.read_only else bound.id


def duplicate() -> Binding:
    """A copy of this workspace (settings and uploads) that this session now edits; the original is untouched."""
    bound = binding()
    save()
    copy = store().duplicate(bound.view_id if bound.read_only else bound.id, actor=actor(), user=signin.email())
    new = Binding(copy.id, copy.view_id, False, saved=json.dumps(copy.settings, sort_keys=True), role="owner",
                  files=frozenset(copy.blobs))
    _switch_to(new)
    return new


def delete_current() -> None:
    """Delete this workspace for good (its settings and every upload no other workspace holds), then start a new
    one; the session keeps what it shows until the next change."""
    bound = binding()
    user = signin.email()
    store().delete(bound.id, actor=actor(), user=user)
    ws = store().create({"version": SETTINGS_VERSION, "title": "Untitled workspace"}, actor=actor(), user=user)
    _switch_to(Binding(ws.id, ws.view_id, False))
    save()


def recent(limit: int = 20):
    """Workspaces for the Workspaces page's list: with sign-in, those shared with the signed-in user (each with
    their role); without, recent workspaces only where the operator opted in (:func:`listing_allowed`), and never
    for a read-only session (a listed editing link is edit access)."""
    user = signin.email()
    if user:
        return store().visible(user, limit)
    bound = binding()
    if bound is not None and bound.read_only:
        return []
    return store().recent(limit) if listing_allowed() else []


def list_link(item) -> str:
    """The link a listed workspace is opened with: its read-only id for a viewer, never more than the role."""
    return link(item.view_id if item.role == "viewer" else item.id)


def shared_with() -> dict[str, str]:
    """Who this workspace is shared with (the owner's view, with sign-in)."""
    bound = binding()
    return store().roles(bound.id, user=signin.email())


def share(who: str, role: str) -> None:
    bound = binding()
    store().grant(bound.id, who, role, user=signin.email(), actor=actor())


def unshare(who: str) -> None:
    bound = binding()
    store().revoke(bound.id, who, user=signin.email(), actor=actor())
