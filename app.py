"""Entry point of the T-CREx dashboard: ``make run`` / ``python -m tcrex.ui.launch`` (or ``streamlit run app.py``).

It only sets up the frame every page shares -- page config, logo, navigation, and the sidebar with the active
data, model, task, target and parameters (plus the parameter form) -- and runs the selected page.  Pages live in
``pages/``; loading, caching and fitting live in ``tcrex/ui/``.
"""

from pathlib import Path

import streamlit as st

from tcrex.ui.state import memory, read_only, signin, verification, workspace
from tcrex.ui.widgets import sidebar
from tcrex.ui.widgets.page import pickle_banner

ROOT = Path(__file__).resolve().parent
PAGES = ROOT / "pages" / "views"

read_only.install()  # a read-only session gets every input disabled, on the server (tcrex/ui/state/read_only.py)
st.set_page_config(page_title="T-CREx", page_icon=str(ROOT / "assets" / "favicon.png"), layout="wide")
st.logo(str(ROOT / "assets" / "logo.svg"), size="large")
# With [auth] in secrets.toml every page needs a signed-in user with an unexpired token (tcrex/ui/state/signin.py);
# without it (make run) nothing changes.
signin.gate()

PAGE_GROUPS = {
    "Start": [
        st.Page(PAGES / "home.py", title="Overview", icon=":material/home:", default=True),
        st.Page(PAGES / "data_model.py", title="Data & model", icon=":material/dataset:"),
    ],
    "Explain": [
        st.Page(PAGES / "global_rules.py", title="Global rules", icon=":material/account_tree:"),
        st.Page(PAGES / "rule_plot.py", title="Rule map (2-D)", icon=":material/scatter_plot:"),
        st.Page(PAGES / "change_keep.py", title="Change & keep", icon=":material/bar_chart:"),
        st.Page(PAGES / "individual.py", title="Individual", icon=":material/person_search:"),
    ],
    "Audit": [
        st.Page(PAGES / "audit.py", title="Subgroup audit", icon=":material/balance:"),
        st.Page(PAGES / "compare.py", title="Compare models", icon=":material/compare_arrows:"),
        st.Page(PAGES / "monitor.py", title="Monitor", icon=":material/monitor_heart:"),
    ],
    "Share": [
        st.Page(PAGES / "export.py", title="Export", icon=":material/download:"),
        st.Page(PAGES / "workspaces.py", title="Workspaces", icon=":material/folder_shared:"),
        st.Page(PAGES / "activity.py", title="Activity", icon=":material/history:"),
    ],
}
page = st.navigation(PAGE_GROUPS)
# The session's workspace: restored from the link (?ws=ID), else a new one; what changed is saved before the page
# draws and again after it (tcrex/ui/state/workspace.py).
workspace.attach(page.url_path)
saved_page = workspace.restored_page()
by_path = {p.url_path: p for group in PAGE_GROUPS.values() for p in group}
if saved_page in by_path and page.url_path == "" and saved_page != "":  # a link without a page opens where the work was
    st.switch_page(by_path[saved_page])
with memory.timed_run(page.title):  # the server's share of a page time, logged for load tests
    memory.track()  # per-session budget, and release of the session's objects when it ends (tcrex/ui/state/memory.py)
    sidebar.render_sidebar(setup_page=page.url_path == "data_model")
    signin.sidebar()
    pickle_banner()
    workspace.banner()
    page.run()
workspace.save(page.url_path)
verification.check_in_background()  # the page run is over: the model check later pages show starts (once drawn)
