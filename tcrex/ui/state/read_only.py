"""Read-only sessions: every input of every page is disabled, on the server.

A session opened through a workspace's read-only (view) link — or, with sign-in, by a user who is only a viewer of
the workspace — shows every page as saved and can change nothing. Hiding or greying buttons in the browser would
not be enough (a browser can send any widget value over the websocket), so every Streamlit input is created with
``disabled=True`` in such a session, and Streamlit itself discards any value the browser reports for a disabled
widget and skips its callbacks (``WidgetMetadata.disabled``, enforced in ``SessionState.register_widget`` since
Streamlit 1.5x). The store refuses every write through a view id on top of that (:class:`tcrex.workspace.
ReadOnlyWorkspace`), and :func:`tcrex.ui.state.workspace.save` never writes from such a session.

:func:`install` wraps Streamlit's input functions once per process (``st.button`` and the methods of every
container, ``st.sidebar``, columns, forms); the wrapper asks :func:`active` for the current session and passes the
call through untouched in every other session. The only inputs left enabled are those in :data:`ALLOWED_KEYS`
(the viewer's way out: Duplicate, a copy of their own).
"""
from __future__ import annotations

import functools

import streamlit
from streamlit.delta_generator import DeltaGenerator

from . import session

#: Every Streamlit input that takes ``disabled=`` (download and link buttons only read, and stay).
INPUTS = ("button", "checkbox", "toggle", "radio", "selectbox", "multiselect", "select_slider", "slider",
          "text_input", "text_area", "number_input", "date_input", "time_input", "color_picker", "file_uploader",
          "camera_input", "data_editor", "form_submit_button", "pills", "segmented_control", "feedback",
          "chat_input", "audio_input")
#: Widget keys a read-only session may still use: Duplicate (a copy with links of the viewer's own), and signing
#: in and out (tcrex.ui.state.signin).
ALLOWED_KEYS = frozenset({"ws_duplicate", "tcrex_sign_in", "tcrex_sign_out"})

_MARK = "_tcrex_read_only_wrapped"


def active(state=None) -> bool:
    """Whether this session is read-only (bound to a workspace through its view link, or a viewer's role)."""
    try:
        bound = session.workspace_binding(state)
    except Exception:  # noqa: BLE001 - outside a script run (no session state): nothing to disable
        return False
    return bool(bound is not None and bound.id and bound.read_only)


def _disabled_in_read_only(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if kwargs.get("key") not in ALLOWED_KEYS and active():
            kwargs["disabled"] = True
        return function(*args, **kwargs)

    setattr(wrapper, _MARK, True)
    return wrapper


def install() -> None:
    """Wrap every input of :data:`INPUTS` (idempotent: once per process)."""
    for name in INPUTS:
        method = getattr(DeltaGenerator, name, None)
        if method is not None and not getattr(method, _MARK, False):
            setattr(DeltaGenerator, name, _disabled_in_read_only(method))
        # ``st.button`` is a method bound to the main container when Streamlit was imported: wrap it too.
        top = getattr(streamlit, name, None)
        if top is not None and not getattr(top, _MARK, False):
            setattr(streamlit, name, _disabled_in_read_only(top))
