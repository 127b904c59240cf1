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
click re-stores the same content and restarts its clock.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Callable

from . import st_compat

log = logging.getLogger(__name__)

TTL_ENV = "TCREX_DOWNLOAD_TTL_S"
_deadlines: dict[str, float] = {}
_lock = threading.Lock()


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
    from .memory import report  # noqa: PLC0415

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


def expiring(build: Callable[[], object], mime: str, file_name: str | None) -> Callable[[], bytes]:
    """``data=`` for ``st.download_button``: runs ``build`` on click and schedules the stored file's removal.

    Pass the same ``mime`` and ``file_name`` as to the button (Streamlit's file id depends on them)."""

    def data() -> bytes:
        payload = _as_bytes(build())
        fid = file_id(payload, mime, file_name)
        ttl = ttl_seconds()
        with _lock:
            first = fid not in _deadlines
            _deadlines[fid] = time.monotonic() + ttl
        if first:
            timer = threading.Timer(ttl, _expire, args=(fid,))
            timer.daemon = True
            timer.start()
        return payload

    return data
