"""Editors that apply on a button: the sidebar's parameters and the actionability constraints.

Both are fragments (``st.fragment``), so editing a widget reruns only the editor, and both say "Not applied yet" while
their widgets differ from what is applied. Their Apply callbacks ask for a full rerun (every page must see the
new values), which the fragment performs at its next run.
"""

from __future__ import annotations

import streamlit as st

from ..state import session, st_compat


def request_full_rerun(flag: str) -> None:
    """From an Apply callback inside a fragment: rerun the whole app, not only the fragment (``flag``: the
    editor's :data:`tcrex.ui.state.session.PARAMS_RERUN` or :data:`~tcrex.ui.state.session.CONSTRAINTS_RERUN`)."""
    session.raise_flag(flag)


def full_rerun_if_requested(flag: str) -> None:
    """At the top of the fragment: perform a requested full rerun (a no-op on a full run of the app)."""
    if session.take_flag(flag) and in_fragment_run():
        st.rerun()  # the whole app


def in_fragment_run() -> bool:
    return st_compat.in_fragment_run()


def not_applied_yet(pending: str, button: str) -> None:
    """The cue shown while an editor's widgets differ from what is applied."""
    st.warning(f"**Not applied yet.** Pending: {pending}. Press **{button}** to use it.", icon=":material/pending:")
