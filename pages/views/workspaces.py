"""Workspaces: this analysis's links (editing and read-only), Duplicate and Delete, and recent workspaces."""

import datetime as dt

import streamlit as st

from tcrex.ui.state import signin, workspace
from tcrex.workspace import ANYONE, ROLES, WorkspaceError, size_text

st.title("Workspaces")
bound = workspace.binding()
if not workspace.enabled() or bound is None or not bound.id:
    st.info("Workspaces are off on this server: this session is not saved and is lost with its tab.",
            icon=":material/cloud_off:")
    st.stop()

st.caption("Everything you do — uploads, outcome, class names, parameters, constraints, the chosen person, the "
           "audit's settings — is saved as you go. A link reopens it in any browser, after a restart or on another "
           "server process of the same deployment. Whoever holds the editing link can change it; keep it private.")
if bound.read_only:
    st.subheader("Read-only link")
    st.code(workspace.link(bound.view_id), language=None)
    st.markdown(("You are a viewer of this analysis" if signin.email() else
                 "You opened this analysis through its read-only link")
                + ": every page shows it, every input is disabled, nothing is saved. Duplicate it to make a copy "
                  "you can change.")
else:
    left, right = st.columns(2)
    with left:
        st.subheader("Editing link")
        st.code(workspace.link(bound.id), language=None)
        st.caption("Reopens this workspace with every change allowed.")
    with right:
        st.subheader("Read-only link")
        st.code(workspace.link(bound.view_id), language=None)
        st.caption("For viewers (a board member): every page, no change saved.")

c1, c2, c3 = st.columns(3)
if c1.button("Duplicate", icon=":material/content_copy:", key="ws_duplicate",
             help="A new workspace with the same settings and uploads; this session moves to the copy."):
    workspace.duplicate()
    st.success("You now work on a copy; the original is unchanged. Its links are above.")
    st.rerun()
if not bound.read_only and bound.role == "owner":
    sure = c3.checkbox("I want to delete this workspace", key="ws_delete_sure")
    if c2.button("Delete", icon=":material/delete:", key="ws_delete", disabled=not sure,
                 help="Removes the saved settings and every upload no other workspace holds; links stop working."):
        workspace.delete_current()
        st.success("Deleted. Its links no longer open anything; this session continues in a new workspace.")
        st.rerun()

user = signin.email()
if user and bound.role == "owner":
    st.subheader("Shared with")
    st.caption("With sign-in, a link opens a workspace only for the people it is shared with, each with their role: "
               "an editor may change it, a viewer may look (every input disabled). Only the owner shares or deletes.")
    for who, role in workspace.shared_with().items():
        left, right = st.columns([4, 1])
        left.markdown(f"{'anyone signed in' if who == ANYONE else who} — {role}")
        if who != user.strip().lower() and right.button("Remove", key=f"ws_unshare_{who}"):
            workspace.unshare(who)
            st.rerun()
    with st.form("ws_share_form", clear_on_submit=True):
        who = st.text_input("E-mail address", key="ws_share_email",
                            help="Or tick 'anyone signed in' below for viewers.")
        role = st.selectbox("Role", ROLES[::-1], key="ws_share_role")  # viewer first: the least by default
        anyone = st.checkbox("Anyone signed in at this deployment may view", key="ws_share_anyone")
        if st.form_submit_button("Share", key="ws_share"):
            try:
                if anyone:
                    workspace.share(ANYONE, "viewer")
                if who.strip():
                    workspace.share(who, role)
                st.rerun()
            except WorkspaceError as exc:
                st.error(str(exc), icon=":material/error:")

spaces = workspace.recent()
if spaces:
    st.subheader("Workspaces shared with you" if user else "Recent workspaces on this server")
    for item in spaces:
        when = dt.datetime.fromtimestamp(item.updated).strftime("%Y-%m-%d %H:%M")
        mark = " (this one)" if item.id == bound.id else ""
        role = f" — {item.role}" if user else ""
        st.markdown(f"[{item.title}]({workspace.list_link(item)}){mark}{role} — saved {when}, uploads "
                    f"{size_text(item.size)}")
elif user:
    st.caption("No other workspace is shared with you.")
elif bound.read_only:
    st.caption("A read-only link opens only its own workspace; other workspaces are not listed here.")
else:
    st.caption("Other workspaces are not listed: each is reached only through its links. (On a single-user machine "
               "whose server listens on loopback only, the operator may list them with TCREX_LIST_WORKSPACES=1.)")
