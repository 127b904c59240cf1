"""Page helpers: the fitted result or a message that says what to change, and the banners pages show."""

from __future__ import annotations

import streamlit as st

from tcrex.errors import CellLimitError, NoValidRuleError
from tcrex.text import pluralise

from ..state.active import (DataAndModel, FitResult, allow_pickle, constraints_summary, current, fit_error,
                            last_good_result)
from ..state.sources import NO_MODEL_YET


def require_result() -> tuple[DataAndModel, FitResult]:
    """The data and model (with outputs) and the fit result, or an explanation of what to change followed by
    ``st.stop()``.

    When the current parameters fail (cell limit, no valid rule) but an earlier fit on the same data and model
    succeeded, that result stays on the page under a banner naming the sidebar parameter to change."""
    ws, result, problem = current()
    if result is None and ws is not None:
        last = last_good_result(ws)
        if last is not None:
            failure_banner(problem, kept=True, last=last)
            constraints_banner(last)
            return ws, last
        failure_banner(problem, kept=False)
        st.stop()
    if result is None:
        show_problem(problem)
        st.stop()
    constraints_banner(result)
    return ws, result


def parameter_hint() -> str:
    """Which sidebar parameter fixes the last failed fit."""
    exc = fit_error()
    if isinstance(exc, CellLimitError):
        return ("raise **Grid cell limit**, raise **ρ** or lower **Surrogate trees** in the sidebar's "
                "*Parameters*")
    if isinstance(exc, NoValidRuleError):
        return "lower **τ** or **ρ** in the sidebar's *Parameters* (or choose another target there)"
    return "change the sidebar's *Parameters*"


def fit_parameters_text(result: FitResult) -> str:
    """The parameters a fit was made with, as the sidebar names them: "τ = 0.90, ρ = 0.020, 1 surrogate tree, grid
    cell limit 100,000"."""
    p = result.params
    return (f"τ = {p.tau:.2f}, ρ = {p.rho:.3f}, {pluralise(p.n_trees, 'surrogate tree')}, grid cell limit "
            f"{p.max_cells:,}")


def failure_banner(problem: str | None, kept: bool, last: FitResult | None = None) -> None:
    """The current parameters failed: say why and which sidebar parameter to change; with the ``last`` good fit
    kept on the page, name its parameters so the reader knows what is shown."""
    text = (problem or "the explainer could not be fitted").rstrip(".")
    text = text[0].upper() + text[1:]
    shown = ""
    if kept:
        shown = " **The last good result is shown below**"
        if last is not None:
            shown += (f": fitted with {fit_parameters_text(last)} ({pluralise(last.n_rules, 'rule')}, "
                      f"{pluralise(last.n_metarules, 'metarule')})")
        shown += "."
    st.error(f"**These parameters did not give rules.** {text}. To fix it, {parameter_hint()}.{shown}",
             icon=":material/tune:")


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
    if problem == NO_MODEL_YET:  # nothing is wrong yet: guidance, not an error
        st.info("**Choose a model to explain.** On the Data & model page, train one in the app, upload a model "
                "file or pick the column that holds the model's outputs.", icon=":material/model_training:")
        st.page_link("pages/views/data_model.py", label="Choose a model on the Data & model page",
                     icon=":material/dataset:")
        return
    st.error(f"**The explainer cannot run yet.** {text}", icon=":material/error:")
    st.page_link("pages/views/data_model.py", label="Fix it on the Data & model page", icon=":material/dataset:")
