"""Sign-in with OpenID Connect through Streamlit's own ``st.login`` (Authlib), when the operator configures it.

Off unless ``.streamlit/secrets.toml`` has an ``[auth]`` section (``make run`` has none: one local user, as
without sign-in). When on, every page requires a signed-in user (:func:`gate` runs before the navigation), the
sidebar shows the user's name and e-mail with *Sign out*, and workspaces are reached by role
(:mod:`tcrex.workspace`: owner, editor, viewer by e-mail) instead of by capability link.

Streamlit keeps the identity provider's ID-token claims in a signed cookie (30 days) and does not look at the
token's ``exp`` itself; :func:`gate` does, on every page run, and signs the user out once the provider's expiry has
passed, so a session lasts as long as the provider says. docs/deployment.md, "Sign-in", has a worked example.
"""
from __future__ import annotations

import time

import streamlit as st

#: Widget keys of the sign-in and sign-out buttons (left enabled in a read-only session: tcrex.ui.state.read_only).
SIGN_IN_KEY, SIGN_OUT_KEY = "tcrex_sign_in", "tcrex_sign_out"


def configured() -> bool:
    """Whether sign-in is on: ``[auth]`` in the server's secrets."""
    try:
        return "auth" in st.secrets
    except Exception:  # noqa: BLE001 - no secrets.toml at all (FileNotFoundError or Streamlit's own error)
        return False


def _claims() -> dict:
    try:
        return st.user.to_dict() if st.user.is_logged_in else {}
    except Exception:  # noqa: BLE001 - outside a script run
        return {}


def expired(claims: dict, now: float | None = None) -> bool:
    """Whether the ID token behind ``claims`` has expired (its ``exp``, seconds since the epoch, has passed); a
    token without ``exp`` is treated as expired (the OpenID Connect core spec requires it)."""
    exp = claims.get("exp")
    if isinstance(exp, bool) or not isinstance(exp, (int, float)):
        return True
    return float(exp) <= (time.time() if now is None else now)


def email() -> str | None:
    """The signed-in user's e-mail address (None when sign-in is off or nobody is signed in)."""
    if not configured():
        return None
    claims = _claims()
    value = claims.get("email")
    return str(value) if value and not expired(claims) else None


def gate() -> str | None:
    """Before the pages: with sign-in on, a user who is not signed in (or whose token has expired) sees only the
    sign-in screen; returns the signed-in user's e-mail, or None when sign-in is off."""
    if not configured():
        return None
    claims = _claims()
    if claims and expired(claims):
        st.logout()  # clears Streamlit's cookie; the next run shows the sign-in screen
        st.stop()
    if claims and claims.get("email"):
        return str(claims["email"])
    st.title("Sign in")
    if claims:
        st.error("The identity provider did not give an e-mail address for this account; this deployment names "
                 "people by e-mail. Ask the operator to request the `email` scope.", icon=":material/error:")
        if st.button("Sign out", key=SIGN_OUT_KEY):
            st.logout()
        st.stop()
    st.markdown("This deployment of the T-CREx dashboard is for signed-in users: the workspaces you open are those "
                "shared with your e-mail address.")
    if st.button("Sign in", key=SIGN_IN_KEY, type="primary", icon=":material/login:"):
        st.login()
    st.stop()


def sidebar() -> None:
    """Who is signed in, until when, and Sign out (nothing when sign-in is off)."""
    claims = _claims() if configured() else {}
    if not claims:
        return
    with st.sidebar:
        name = claims.get("name") or claims.get("email")
        until = time.strftime("%H:%M:%S UTC", time.gmtime(float(claims["exp"]))) if "exp" in claims else "?"
        st.caption(f"Signed in as **{name}** ({claims.get('email')}), until {until}.")
        if st.button("Sign out", key=SIGN_OUT_KEY, icon=":material/logout:"):
            st.logout()
