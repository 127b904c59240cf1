"""Entry point of the T-CREx dashboard: ``streamlit run app.py`` (or ``make run``).

It only sets up the frame every page shares -- page config, logo, navigation
and the sidebar summary of the active data and model -- and runs the selected
page.  Pages live in ``pages/``; loading and caching live in
``tcrex/ui/state.py``.
"""

from pathlib import Path

import streamlit as st

from tcrex.ui import state

ROOT = Path(__file__).resolve().parent

st.set_page_config(page_title="T-CREx", page_icon=":material/rule:", layout="wide")
st.logo(str(ROOT / "assets" / "logo.svg"), size="large")

page = st.navigation(
    [
        st.Page(ROOT / "pages" / "home.py", title="Home", icon=":material/home:", default=True),
    ]
)
state.render_sidebar_summary()
page.run()
