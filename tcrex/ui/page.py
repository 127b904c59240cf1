"""Page helpers: the fitted result or a message that says what to change, and the banners pages show."""

from __future__ import annotations

import streamlit as st

from .state import FitResult, Workspace, allow_pickle, constraints_summary, current


def require_result() -> tuple[Workspace, FitResult]:
    """Workspace and fit result, or an explanation of what to change followed by ``st.stop()``."""
    ws, result, problem = current()
    if result is None:
        show_problem(problem)
        st.stop()
    constraints_banner(result)
    return ws, result


def constraints_banner(result: FitResult) -> None:
    """A small banner on the explaining pages while actionability constraints are applied."""
    text = constraints_summary(result)
    if text != "none":
        st.info(f"**Constraints active:** {text}. Individuals for whom every rule needs a forbidden change have "
                "*no actionable rule*.", icon=":material/lock:")


def pickle_banner() -> None:
    """A persistent banner on every page while the operator has enabled pickle loading."""
    if allow_pickle():
        st.warning("**Pickle loading is enabled on this server** (operator setting `TCREX_ALLOW_PICKLE` or "
                   "`allow_pickle` in secrets). An uploaded pickle / joblib file can run any code when loaded; "
                   "only upload files you trust.", icon=":material/gpp_maybe:")


def show_problem(problem: str | None) -> None:
    text = problem or "something is missing"
    text = text[0].upper() + text[1:]
    st.error(f"**The explainer cannot run yet.** {text}", icon=":material/error:")
    st.page_link("pages/views/data_model.py", label="Fix it on the Data & model page", icon=":material/dataset:")
