"""Activity: who did what to this workspace and when (the store's append-only, hash-chained log), for its owner."""

import streamlit as st

from tcrex.ui.state import signin, workspace
from tcrex.ui.widgets import downloads
from tcrex.workspace import log_csv, log_frame, log_json

st.title("Activity")
bound = workspace.binding()
if not workspace.enabled() or bound is None or not bound.id:
    st.info("Workspaces are off on this server: nothing is saved, so nothing is logged.", icon=":material/cloud_off:")
    st.stop()
if not workspace.may_read_log():
    st.info("The activity log of a workspace is shown to its owner only.", icon=":material/lock:")
    st.stop()

st.caption("Every upload (with its SHA-256), change of parameters, constraints or dictionary, audit run, export, "
           "share, duplicate and delete of this workspace, with who and when — never the data itself. Each entry "
           "carries the hash of the one before, so a changed or removed entry breaks the chain.")
entries = workspace.store().activity(bound.id, user=signin.email())
check = workspace.store().check_log()
if check.ok:
    st.success(f"The log's chain is intact ({check.entries:,} entries in this store).", icon=":material/verified:")
else:
    st.error(f"The log's chain is broken: {check.problem}. Ask the operator to compare it with a copy "
             "(`tcrex workspace log-check`).", icon=":material/gpp_bad:")
frame = log_frame(entries)
st.dataframe(frame.drop(columns=["workspace", "prev_hash"]), hide_index=True, width="stretch")
left, right = st.columns(2)
with left:
    downloads.button("Download CSV", lambda: log_csv(entries), file_name="tcrex-activity.csv",
                     mime="text/csv", icon=":material/table:", key="log_csv")
with right:
    downloads.button("Download JSON", lambda: log_json(entries), file_name="tcrex-activity.json",
                     mime="application/json", icon=":material/data_object:", key="log_json")
