"""Monitor: recourse followed across model versions — who keeps, loses and gains verified recourse at every release."""

import streamlit as st

from tcrex.figures import monitor_group_shares, monitor_timeline
from tcrex.ui.pages import monitor
from tcrex.ui.widgets import downloads, page
from tcrex.ui.widgets import components as ui

st.title("Monitor")
st.caption("A model is retrained and replaced again and again. A monitor follows the same people across every model "
           "version: each person's advice re-checked on the new model, fresh verified recourse for whoever lost it, "
           "per group the verified-recourse share with its interval, and alerts when a group loses out.")
ws, result = page.require_result()
name = monitor.choose(ws, result)
if name is None:
    st.stop()
h = monitor.history(name)
if h is None:
    st.stop()

monitor.headline(h)
st.subheader("Alerts")
monitor.alerts(h)
st.subheader("Versions")
ui.chart(monitor_timeline, h, key="monitor_timeline")
st.dataframe(monitor.versions_table(h), hide_index=True, width="stretch",
             column_config=monitor.VERSIONS_CONFIG)
grouping = monitor.grouping_choice(h, key="monitor_grouping")
ui.chart(monitor_group_shares, h, grouping, key="monitor_groups")
st.subheader("People at the last release")
monitor.people_section(ws, result, name, h)
monitor.register_section(ws, name, h)
downloads.button("Download the history (JSON)", lambda: h.to_json(indent=1), file_name="tcrex-monitor-history.json",
                 mime="application/json", icon=":material/data_object:", key="monitor_dl_json")
if not monitor.read_only():
    st.button("Follow another monitor", key="monitor_forget", on_click=monitor.forget, icon=":material/swap_horiz:")
