"""Per-session memory: accounting, a budget with least-recently-used eviction, and release when a session ends.

**Budget.** :func:`track` runs at the start of every script run (one line in ``app.py``).  It adds up what this
session holds privately -- uploaded bytes, fits and their explanations, model outputs (objects shared by every
session, :mod:`tcrex.ui.state.shared`, are not counted) -- and, above ``TCREX_SESSION_MEMORY_MB`` (default 1024),
drops the least recently used fits first, then per-session outputs, keeping the active ones, and tells the user.

**Release.** Streamlit 1.67 has no public "session ended" hook.  What happens on its own when a browser tab
closes: the websocket disconnect clears the session's ``st.cache_resource(scope="session")`` entries at once,
but the session itself (its ``st.session_state``, and the bytes of its ``st.file_uploader`` files in the
uploaded-file manager) is kept for a reconnect in ``MemorySessionStorage`` (2-minute TTL) and, when that entry is
finally reaped (only by a later write to the storage), ``AppSession.shutdown()`` is *not* called, so uploaded
files of such sessions were never freed.  So a watcher thread (one per server process, started by the first
:func:`track`) polls the runtime every ``TCREX_RELEASE_POLL_S`` seconds (default 5): a session that has been
disconnected for ``TCREX_SESSION_GRACE_S`` seconds (default 60; a reconnect within that time keeps everything) is
closed through ``Runtime.close_session`` (which shuts it down: uploaded files, media references, session caches,
its state), its remaining session state is cleared, and the allocator is asked to give memory back
(:func:`trim`: ``gc.collect()`` then glibc's ``malloc_trim(0)``).  A ``weakref.finalize`` on the ``AppSession``
(its ``SessionState`` cannot be weak-referenced in 1.67) also trims when it is finally collected (a backstop for
sessions closed another way).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import logging
import os
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from . import active, session, st_compat
from .caching import LRU
from .shared import SharedTCREx

log = logging.getLogger(__name__)

BUDGET_ENV = "TCREX_SESSION_MEMORY_MB"
GRACE_ENV = "TCREX_SESSION_GRACE_S"
POLL_ENV = "TCREX_RELEASE_POLL_S"
MB = 1024 * 1024


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def budget_bytes() -> int:
    """The per-session budget (``TCREX_SESSION_MEMORY_MB``, default 1024 MB)."""
    return int(_env_float(BUDGET_ENV, 1024) * MB)


# ============================================================================================ accounting
def size_of(obj: Any, _seen: set | None = None, _depth: int = 0) -> int:
    """Approximate bytes held by ``obj``: arrays, frames, bytes and strings reachable from it (each counted once);
    objects every session shares (:class:`tcrex.ui.state.shared.SharedTCREx`) count 0."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen or _depth > 12 or isinstance(obj, SharedTCREx):
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes) if obj.base is None or id(obj.base) not in seen else 0
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        return int(obj.memory_usage(index=True, deep=False).sum() if isinstance(obj, pd.DataFrame)
                   else obj.memory_usage(index=True, deep=False))
    if isinstance(obj, (bytes, bytearray, str)):
        return len(obj)
    if isinstance(obj, dict):
        return sum(size_of(v, seen, _depth + 1) for v in snapshot(obj.values()))
    if isinstance(obj, (list, tuple, set, frozenset)):
        return sum(size_of(v, seen, _depth + 1) for v in snapshot(obj))
    if hasattr(obj, "__dict__") and type(obj).__module__.startswith("tcrex"):
        return sum(size_of(v, seen, _depth + 1) for v in snapshot(vars(obj).values()))
    return 0


def snapshot(items, attempts: int = 8) -> tuple:
    """``tuple(items)`` of a container another thread may be changing right now.

    The accounting walks a session's caches while other threads write to them: a download's builder (Streamlit
    runs it on a thread of its own, beside the rerun its click starts), the background check of recommended points
    (:mod:`tcrex.ui.state.verification`), another page run of the same session. Iterating a dict step by step then raised
    "dictionary changed size during iteration"; copying it in one C-level call does not give other
    threads a turn, and should a copy still meet a change it is simply taken again."""
    for _ in range(attempts - 1):
        try:
            return tuple(items)
        except RuntimeError:  # changed during the copy: take it again
            continue
    return tuple(items)


def session_usage(state: Any) -> dict[str, int]:
    """Bytes this session holds privately, by part (``uploads``, ``fits``, ``bases``, ``other caches``)."""
    seen: set = set()
    out = {"uploads": size_of(session.uploads(state, create=False), seen)}
    cache = dict(snapshot(session.caches(state, create=False).items()))
    out["fits"] = size_of(cache.get("results", {}), seen)
    out["bases"] = size_of(cache.get("bases", {}), seen)
    out["other caches"] = sum(size_of(v, seen) for k, v in cache.items() if k not in ("results", "bases"))
    return out


def enforce_budget(state: Any, budget: int | None = None) -> list[str]:
    """Drop least recently used fits, bases and cached outputs of this session until it fits ``budget``.

    The active fit (:func:`tcrex.ui.state.session.current_fit`) and uploads are kept.  Returns one line per dropped entry."""
    budget = budget_bytes() if budget is None else budget
    usage = sum(session_usage(state).values())
    dropped: list[str] = []
    if usage <= budget:
        return dropped
    cache = dict(snapshot(session.caches(state, create=False).items()))
    current = session.current_fit(state)
    keep = {getattr(current, "key", None), getattr(current, "fit_key", None)}
    for name in ("results", "bases", *[k for k in cache if k not in ("results", "bases")]):
        lru = cache.get(name)
        if not isinstance(lru, LRU):
            continue
        keys = lru.keys_oldest_first()
        newest = keys[-1] if keys else None
        for key in keys:
            if usage <= budget:
                break
            if key in keep or (name not in ("results", "bases") and key == newest):
                continue
            value = lru.discard(key)  # None when another thread dropped it meanwhile
            if value is None:
                continue
            freed = size_of(value)
            usage -= freed
            dropped.append(f"{'fit' if name == 'results' else 'surrogate' if name == 'bases' else name} "
                           f"({freed / MB:.1f} MB)")
    return dropped


# ============================================================================================ release
def trim() -> int:
    """``gc.collect()`` and glibc's ``malloc_trim(0)`` (returns what ``malloc_trim`` returned; -1 if absent)."""
    gc.collect()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return int(libc.malloc_trim(0))
    except (OSError, AttributeError):
        return -1


@dataclass
class _Session:
    first_seen: float
    disconnected_since: float | None = None
    finalizer: Any = field(default=None, repr=False)


_sessions: dict[str, _Session] = {}
_lock = threading.Lock()
_watcher: threading.Thread | None = None
released: list[tuple[str, float]] = []  # (session id, time) of every release, for tests and benchmarks


def _runtime():
    return st_compat.runtime()


def release_session(session_id: str) -> None:
    """Close a session for good and give its memory back (uploads, fits, models, explainers, state)."""
    with _lock:
        rec = _sessions.get(session_id)
    if rec is not None and rec.finalizer is not None:
        # this release trims once at its end: the backstop's trim when the closed session is collected would
        # be a second full gc.collect() right before it, holding the interpreter lock while other sessions run
        rec.finalizer.detach()
    rt = _runtime()
    if rt is not None:
        app_session = st_compat.app_session(rt, session_id)
        try:
            st_compat.close_session(rt, session_id)  # shutdown(): uploaded files, media refs, session caches
        except Exception:  # noqa: BLE001 - never let the watcher die
            log.exception("closing session %s failed", session_id)
        try:
            st_compat.remove_session_files(rt, session_id)  # also for sessions reaped without shutdown
        except Exception:  # noqa: BLE001
            pass
        had_uploads = False
        if app_session is not None:
            try:
                its_state = st_compat.session_state_of(app_session)
                had_uploads = session.holds_uploads(its_state)
                its_state.clear()
            except Exception:  # noqa: BLE001
                pass
        if had_uploads:
            _clear_upload_caches()
    with _lock:
        _sessions.pop(session_id, None)
        released.append((session_id, time.time()))
    trim()
    report(f"released session {session_id}")


def report(message: str) -> None:
    """One line on stderr when ``TCREX_MEMORY_LOG=1`` (tests and benchmarks read the server log)."""
    if os.environ.get("TCREX_MEMORY_LOG", "") in ("1", "true", "yes"):
        print(f"tcrex.memory: {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def timed_run(page_title: str):
    """Around a whole script run (``app.py``): with ``TCREX_MEMORY_LOG=1`` one line with the page and the seconds
    the server spent on it, so a load test can read the server's share of a page time apart from the browser's."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        report(f"script run {page_title!r} {time.perf_counter() - t0:.3f} s")


def _clear_upload_caches() -> None:
    """Drop the server-wide caches of parsed uploads (``st.cache_data`` in :mod:`tcrex.ui.state.active`, keyed on the
    upload's digest) when a session that uploaded ends: other sessions re-parse their own upload once."""
    for name in ("parse_upload", "_prepared"):  # [h16] names in tcrex/ui/state/active.py
        fn = getattr(active, name, None)
        if hasattr(fn, "clear"):
            fn.clear()


def sweep(now: float | None = None) -> list[str]:
    """One pass of the watcher: release sessions disconnected for longer than the grace period."""
    rt = _runtime()
    if rt is None:
        return []
    now = time.time() if now is None else now
    grace = _env_float(GRACE_ENV, 60)
    gone = []
    with _lock:
        items = list(_sessions.items())
    for sid, rec in items:
        if st_compat.is_active_session(rt, sid):
            rec.disconnected_since = None
            continue
        if rec.disconnected_since is None:
            rec.disconnected_since = now
        if now - rec.disconnected_since >= grace:
            gone.append(sid)
    for sid in gone:
        release_session(sid)
    return gone


def _watch() -> None:
    while True:
        time.sleep(max(0.5, _env_float(POLL_ENV, 5)))
        try:
            sweep()
        except Exception:  # noqa: BLE001 - keep watching
            log.exception("session release sweep failed")


def _ensure_watcher() -> None:
    global _watcher
    with _lock:
        if _watcher is None or not _watcher.is_alive():
            _watcher = threading.Thread(target=_watch, name="tcrex-session-release", daemon=True)
            _watcher.start()


def track() -> None:
    """Start of every script run (``app.py``): register this session for release, keep it within its budget and
    show what was dropped."""
    sid = st_compat.session_id_of_this_run()
    if sid is None:
        return
    with _lock:
        rec = _sessions.get(sid)
        if rec is None:
            rec = _sessions[sid] = _Session(first_seen=time.time())
            rt = _runtime()
            app_session = st_compat.app_session(rt, sid) if rt is not None else None
            try:  # backstop: trim when the session object is collected (sessions closed another way)
                rec.finalizer = weakref.finalize(app_session, trim) if app_session is not None else None
            except TypeError:  # not weak-referenceable in this Streamlit version: the watcher still releases
                rec.finalizer = None
        rec.disconnected_since = None
    if _runtime() is not None:
        _ensure_watcher()
    dropped = enforce_budget(None)
    if dropped:
        session.set_memory_note(dropped)
        trim()
    note = session.take_memory_note()
    if note:
        st.toast(f"Memory budget of this session ({budget_bytes() // MB} MB) reached: dropped the least recently "
                 f"used {', '.join(note)}. They are recomputed if you come back to them.", icon=":material/memory:")
