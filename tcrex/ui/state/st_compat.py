"""Every Streamlit internal the dashboard uses, in one module, behind a version gate.

Streamlit has no public API for four things the dashboard needs; this module is the only place that reaches into
Streamlit's private modules, so a Streamlit release that moves one of them fails here, at import, with a message
naming the internal and the supported versions, instead of silently changing the dashboard's behaviour:

* ``media_file_id`` / ``hold_media_file`` / ``delete_media_file``: the id of an ``st.download_button`` payload in
  Streamlit's in-memory media store, keeping it until the browser fetched it, and its removal once the download is
  served (``tcrex/ui/widgets/downloads.py``; Streamlit keeps deferred download payloads until the session ends);
* ``runtime``, ``session_id_of_this_run``, ``close_session``, ``remove_session_files``, ``app_session``,
  ``is_active_session``: releasing a disconnected session's memory (``tcrex/ui/state/memory.py``);
* ``in_fragment_run``: whether this script run is a fragment rerun (``tcrex/ui/widgets/fragments.py``);
* ``declare_navigation_app`` and ``run_cli``: starting ``app.py`` as an ``st.navigation`` app although a ``pages/``
  folder exists (``tcrex/ui/launch.py``; streamlit/streamlit#8860, #9992).

``SUPPORTED`` is the range of versions whose internals were checked (the ``streamlit`` bound of requirements.txt
and the ``app`` extra); :func:`check` is run at import and raises :class:`UnsupportedStreamlit` outside it or when
an internal is missing. ``tests/ui/test_st_compat.py`` runs the same check against the installed Streamlit.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import fields, is_dataclass

import streamlit

SUPPORTED = ((1, 50), (2, 0))  # [minimum, maximum): the versions whose internals below were checked


class UnsupportedStreamlit(RuntimeError):
    """The installed Streamlit is outside :data:`SUPPORTED` or lacks an internal the dashboard uses."""


def parse_version(text: str) -> tuple[int, int]:
    """``"1.67.0"`` -> ``(1, 67)`` (major, minor; pre-release tags ignored)."""
    found = re.match(r"(\d+)\.(\d+)", text)
    if not found:
        raise UnsupportedStreamlit(f"cannot read the Streamlit version {text!r}")
    return int(found.group(1)), int(found.group(2))


def check_version(text: str) -> None:
    """Raise :class:`UnsupportedStreamlit` unless version ``text`` is in :data:`SUPPORTED`."""
    low, high = SUPPORTED
    if not low <= parse_version(text) < high:
        raise UnsupportedStreamlit(
            f"Streamlit {text} is not supported by the T-CREx dashboard, which uses Streamlit internals checked on "
            f"{low[0]}.{low[1]} up to (not including) {high[0]}.{high[1]}: install "
            f"'streamlit>={low[0]}.{low[1]},<{high[0]}.{high[1]}' (pip install -r requirements.txt "
            "-c requirements.lock installs the tested version)")


def _resolve(module: str, *path: str):
    """``module.path[0].path[1]...``, or :class:`UnsupportedStreamlit` naming what is missing."""
    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        raise UnsupportedStreamlit(f"Streamlit {streamlit.__version__} has no module {module} ({exc}); the "
                                   f"dashboard supports {_range_text()}") from exc
    for i, name in enumerate(path):
        if not hasattr(obj, name):
            raise UnsupportedStreamlit(
                f"Streamlit {streamlit.__version__} has no {module}.{'.'.join(path[:i + 1])}, which the dashboard "
                f"uses; it supports {_range_text()}")
        obj = getattr(obj, name)
    return obj


def _range_text() -> str:
    (a, b), (c, d) = SUPPORTED
    return f"Streamlit {a}.{b} up to (not including) {c}.{d}"


def _require_attributes(what: str, obj, names) -> None:
    missing = [n for n in names if not hasattr(obj, n)]
    if missing:
        raise UnsupportedStreamlit(f"Streamlit {streamlit.__version__}'s {what} has no {', '.join(missing)}, which "
                                   f"the dashboard uses; it supports {_range_text()}")


def check() -> None:
    """The version gate and every internal below, resolved once (at import of this module)."""
    check_version(streamlit.__version__)
    global _calculate_file_id, _Runtime, _get_script_run_ctx, _PagesManager, _cli_main
    _calculate_file_id = _resolve("streamlit.runtime.memory_media_file_storage", "_calculate_file_id")
    _Runtime = _resolve("streamlit.runtime", "Runtime")
    _require_attributes("Runtime", _Runtime, ("exists", "instance", "media_file_mgr", "uploaded_file_mgr",
                                              "close_session", "get_app_session", "is_active_session"))
    manager_cls = _resolve("streamlit.runtime.media_file_manager", "MediaFileManager")
    storage_cls = _resolve("streamlit.runtime.memory_media_file_storage", "MemoryMediaFileStorage")
    _require_attributes("MediaFileManager", manager_cls(storage_cls("/media")),
                        ("_lock", "_file_metadata", "_files_by_session_and_coord", "_delete_file"))
    _require_attributes("AppSession", _resolve("streamlit.runtime.app_session", "AppSession"), ("session_state",))
    uploads_cls = _resolve("streamlit.runtime.uploaded_file_manager", "UploadedFileManager")
    _require_attributes("UploadedFileManager", uploads_cls, ("remove_session_files",))
    _get_script_run_ctx = _resolve("streamlit.runtime.scriptrunner", "get_script_run_ctx")
    context_cls = _resolve("streamlit.runtime.scriptrunner", "ScriptRunContext")
    if not is_dataclass(context_cls) or not {"session_id", "fragment_ids_this_run"} <= \
            {f.name for f in fields(context_cls)}:
        raise UnsupportedStreamlit(f"Streamlit {streamlit.__version__}'s ScriptRunContext has no session_id or "
                                   f"fragment_ids_this_run; the dashboard supports {_range_text()}")
    _PagesManager = _resolve("streamlit.runtime.pages_manager", "PagesManager")
    _require_attributes("PagesManager", _PagesManager, ("uses_pages_directory",))
    _cli_main = _resolve("streamlit.web.cli", "main")


_calculate_file_id = _Runtime = _get_script_run_ctx = _PagesManager = _cli_main = None
check()


# ---------------------------------------------------------------------------------------------- media store
def media_file_id(data: bytes, mime: str, file_name: str | None) -> str:
    """The id under which Streamlit's in-memory media store keeps ``data``."""
    return _calculate_file_id(data, mime, file_name)


#: The pseudo session under which :func:`hold_media_file` references a download: Streamlit deletes a file no session
#: references at its second orphan sweep, and a sweep runs after every script run of every session, so with a few
#: sessions busy a just-built export was gone before the browser fetched it (a "canceled" download).
_HOLDER = "tcrex.downloads"


def hold_media_file(file_id: str) -> None:
    """Keep ``file_id`` through Streamlit's orphan sweeps until :func:`delete_media_file` (call it before the file
    is stored: the reference is what the sweeps look at)."""
    rt = runtime()
    if rt is None:
        return
    mgr = rt.media_file_mgr
    with mgr._lock:  # noqa: SLF001
        mgr._files_by_session_and_coord.setdefault(_HOLDER, {})[file_id] = file_id  # noqa: SLF001


def delete_media_file(file_id: str) -> bool:
    """Drop :func:`hold_media_file`'s reference and remove the stored file from the media store; True if it was
    there and no element still shows it (a static ``st.download_button`` or ``st.image`` keeps it, and Streamlit
    then owns its lifetime). Streamlit has no public "delete this file"."""
    rt = runtime()
    if rt is None:
        return False
    mgr = rt.media_file_mgr
    with mgr._lock:  # noqa: SLF001 - the media store's own lock, as its methods take it
        held = mgr._files_by_session_and_coord.get(_HOLDER)  # noqa: SLF001
        if held is not None:
            held.pop(file_id, None)
            if not held:
                del mgr._files_by_session_and_coord[_HOLDER]  # noqa: SLF001
        if file_id not in mgr._file_metadata:  # noqa: SLF001
            return False
        if any(file_id in refs.values() for refs in mgr._files_by_session_and_coord.values()):  # noqa: SLF001
            return False
        mgr._delete_file(file_id)  # noqa: SLF001
    return True


# ---------------------------------------------------------------------------------------------- sessions
def runtime():
    """The running server's Runtime, None outside a server (AppTest, scripts)."""
    return _Runtime.instance() if _Runtime.exists() else None


def session_id_of_this_run() -> str | None:
    """The session id of the script run on this thread (None outside a script run)."""
    ctx = _get_script_run_ctx()
    return None if ctx is None else ctx.session_id


def app_session(rt, session_id: str):
    """The AppSession of ``session_id`` (None once it is gone)."""
    return rt.get_app_session(session_id)


def session_state_of(app_session):
    """The session state of another session (``AppSession.session_state``: a mapping with ``clear()``), for the
    memory release that runs outside any script run."""
    return app_session.session_state


def is_active_session(rt, session_id: str) -> bool:
    return rt.is_active_session(session_id)


def close_session(rt, session_id: str) -> None:
    """Shut a session down: its uploaded files, media references and session caches."""
    rt.close_session(session_id)


def remove_session_files(rt, session_id: str) -> None:
    """Drop a session's uploaded files (also for sessions reaped without a shutdown)."""
    rt.uploaded_file_mgr.remove_session_files(session_id)


# ---------------------------------------------------------------------------------------------- fragments
def in_fragment_run() -> bool:
    """Whether this script run reruns only fragments (False outside a script run)."""
    ctx = _get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


# ---------------------------------------------------------------------------------------------- launching
def declare_navigation_app() -> None:
    """Tell Streamlit, before the first script run, that the app is an ``st.navigation`` app (what
    ``st.navigation`` sets on that run anyway), so a ``pages/`` folder is not read as a legacy pages directory."""
    _PagesManager.uses_pages_directory = False


def run_cli(args: list[str]) -> None:
    """``streamlit <args>`` in this process, through Streamlit's own command line."""
    _cli_main(args=args, prog_name="streamlit")
