"""Downloads that stay private: built on click, and removed from Streamlit's media store soon after.

What Streamlit 1.67 does with ``st.download_button`` (read in ``streamlit/runtime/media_file_manager.py``,
``memory_media_file_storage.py``, ``web/server/starlette/starlette_routes.py``):

* ``data=<bytes/str>``: the bytes are stored in the in-memory media store on *every script run that draws the
  button* and served at ``/media/<id>.<ext>`` -- to any HTTP client, with no session or cookie check -- while the
  session's last run references it (the whole session lifetime if the page stays open), plus up to two orphan
  sweeps after.
* ``data=<callable>`` (what the dashboard uses): nothing is stored until the user clicks; the click runs the
  callable and stores its output as a DOWNLOADABLE file that is *not tied to any session*.  Streamlit deletes it
  at the second orphan sweep after that, and a sweep runs only when some session's script run finishes (or a
  session shuts down).  On a quiet server the export therefore stayed reachable by anyone holding the URL
  indefinitely.  The id is a 128-bit BLAKE2b of the content (for files > 1 MiB: of length, head, middle and
  tail), so the URL is not guessable, but it is a bearer URL: logs, proxies or browser history can leak it.

:func:`expiring` wraps a builder so that, after it ran, the stored file is deleted ``TCREX_DOWNLOAD_TTL_S``
seconds later (default 30; the browser fetches it right after the click), whatever other sessions do.  A repeat
click re-stores the same content and restarts its clock.  Until then the file is held
(:func:`tcrex.ui.state.st_compat.hold_media_file`): Streamlit's own sweeps, which run after every script run of every
session, removed it before the browser fetched it when a few sessions were busy.

**Never a hang.** Streamlit runs the builder on a worker thread and the browser waits up to 3 minutes with a
spinning button (a "Download JSON" span 2.5 minutes without a file). The build runs on this module's
own pool (:data:`BUILDERS` threads) and is waited for at most ``TCREX_DOWNLOAD_BUILD_S`` seconds (default 90); a
build that fails or runs longer gives the browser an error under the button at once, and the page says why next
to the button at its next run (:func:`button`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as BuildTimeout
from dataclasses import dataclass
from typing import Callable

import streamlit as st

from ..state import st_compat, workspace
from ..state.memory import report

log = logging.getLogger(__name__)

TTL_ENV = "TCREX_DOWNLOAD_TTL_S"
BUILD_ENV = "TCREX_DOWNLOAD_BUILD_S"
#: Downloads built at once by the whole server (more wait their turn, within their time limit).
BUILDERS = 4
_deadlines: dict[str, float] = {}
_lock = threading.Lock()
_pool = ThreadPoolExecutor(max_workers=BUILDERS, thread_name_prefix="tcrex-download")


class DownloadFailed(RuntimeError):
    """A download could not be built (in time); the message says so in words (Streamlit logs it and answers the
    browser with an error under the button)."""


@dataclass
class _Build:
    """The last build of one download button of one session: running, or how it ended (``problem``: None if
    it was served)."""

    file_name: str
    running: bool = True
    problem: str | None = None
    shown: bool = False


#: ``(session id, button key) -> _Build``: what :func:`button` tells the user; one entry per button and session,
#: dropped when it has been shown (entries of sessions gone are few and small).
_builds: dict[tuple[str, str], _Build] = {}


def build_seconds() -> float:
    """How long a download may take to build (``TCREX_DOWNLOAD_BUILD_S``, default 90; the browser gives up at
    180)."""
    try:
        return min(170.0, max(0.1, float(os.environ.get(BUILD_ENV, 90))))
    except ValueError:
        return 90.0


def ttl_seconds() -> float:
    try:
        return max(0.5, float(os.environ.get(TTL_ENV, 30)))
    except ValueError:
        return 30.0


def _as_bytes(data) -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    if hasattr(data, "read"):
        out = data.read()
        return out.encode("utf-8") if isinstance(out, str) else bytes(out)
    raise TypeError(f"a download builder returned {type(data).__name__}")


def file_id(data: bytes, mime: str, file_name: str | None) -> str:
    """The id under which Streamlit's in-memory media store keeps ``data``."""
    return st_compat.media_file_id(data, mime, file_name)


def delete_now(fid: str) -> bool:
    """Remove a stored download from Streamlit's media store; True if it was there (and no element shows it)."""
    if not st_compat.delete_media_file(fid):
        return False
    log.info("download %s removed from the media store", fid)
    report(f"download {fid} removed")
    return True


def _expire(fid: str) -> None:
    with _lock:
        deadline = _deadlines.get(fid)
        if deadline is None:
            return
        if time.monotonic() < deadline:  # clicked again meanwhile: wait for the new deadline
            threading.Timer(deadline - time.monotonic() + 0.05, _expire, args=(fid,)).start()
            return
        del _deadlines[fid]
    try:
        delete_now(fid)
    except Exception:  # noqa: BLE001 - Streamlit's own sweep still removes it later
        log.exception("could not remove download %s", fid)


def expiring(build: Callable[[], object], mime: str, file_name: str | None,
             owner: tuple[str, str] | None = None, done: Callable[[], None] | None = None) -> Callable[[], bytes]:
    """``data=`` for ``st.download_button``: runs ``build`` on click (at most :func:`build_seconds`, else
    :class:`DownloadFailed`) and schedules the stored file's removal.

    Pass the same ``mime`` and ``file_name`` as to the button (Streamlit's file id depends on them); ``owner``
    (``(session id, button key)``, set by :func:`button`) records how the build ended for the page to say;
    ``done`` is called once the file is built (the workspace's activity log records the export)."""

    def data() -> bytes:
        record = _start(owner, file_name)
        limit = build_seconds()
        try:
            payload = _as_bytes(_pool.submit(build).result(timeout=limit))
        except BuildTimeout:
            problem = (f"{file_name or 'The file'} could not be built within {limit:.0f} s (the server is busy or "
                       "the file is large), so nothing was downloaded. Try again in a moment.")
            _finish(record, problem)
            raise DownloadFailed(problem) from None
        except Exception as exc:  # noqa: BLE001 - said in words; the browser gets an error, never a hang
            log.exception("building download %s failed", file_name)
            problem = f"{file_name or 'The file'} could not be built: {exc}"
            _finish(record, problem)
            raise DownloadFailed(problem) from exc
        fid = file_id(payload, mime, file_name)
        ttl = ttl_seconds()
        with _lock:
            first = fid not in _deadlines
            _deadlines[fid] = time.monotonic() + ttl
        st_compat.hold_media_file(fid)  # until _expire: Streamlit's sweeps would remove it before the fetch
        if first:
            timer = threading.Timer(ttl, _expire, args=(fid,))
            timer.daemon = True
            timer.start()
        _finish(record, None)
        if done is not None:
            done()
        return payload

    return data


def _start(owner: tuple[str, str] | None, file_name: str | None) -> _Build | None:
    if owner is None:
        return None
    record = _Build(file_name=file_name or "file")
    with _lock:
        _builds[owner] = record
    return record


def _finish(record: _Build | None, problem: str | None) -> None:
    if record is not None:
        with _lock:
            record.running, record.problem = False, problem


def button(label: str, build: Callable[[], object], *, file_name: str, mime: str, key: str, **kwargs) -> None:
    """``st.download_button`` for an export built on click (:func:`expiring`), with what became of this session's
    last click on it: a failed or timed-out build is said in words next to the button at the page's next run (the
    browser shows an error under the button at once). ``kwargs`` go to the button (``icon``, ``help``, ...).

    The click does not rerun the page (``on_click="ignore"``): a rerun gives the button a new id in Streamlit's
    media store and drops the old one at the next sweep, and with the server busy the download's own request,
    still waiting for a thread, then found its callable gone ("Deferred file ... not found", no file)."""
    sid = st_compat.session_id_of_this_run()
    owner = None if sid is None else (sid, key)
    if owner is not None:
        with _lock:
            record = _builds.get(owner)
            if record is not None and not record.running:
                del _builds[owner]  # said once
        if record is not None and not record.running and record.problem:
            st.error(record.problem, icon=":material/error:")
    done = workspace.recorder("export", {"file": file_name, "mime": mime})
    st.download_button(label, data=expiring(build, mime, file_name, owner, done), file_name=file_name, mime=mime,
                       key=key, on_click="ignore", **kwargs)
