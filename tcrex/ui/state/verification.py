"""Recourse checked on the model: every row's recommended point verified once per fit, summarised for any
population the pages show (the share of people needing recourse whose recourse works, per-rule effectiveness).

The engine does the work (:meth:`tcrex.TCREx.counterfactuals` with ``verify=True`` and
:meth:`tcrex.TCREx.effectiveness`); this module only decides which rows to verify, when the check runs, and draws
the headline. The check of a fit on a model is one :class:`tcrex.ui.state.checks.Check` in the server's registry
(its status, value, error and future); every row's effectiveness is computed once from it and kept with it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from tcrex.errors import TCRExError
from tcrex.report import summary_sentence

from . import checks, session, shared, st_compat
from .active import DataAndModel, FitResult, fit_key, try_data_and_model

#: Above this many rows the points of a uniform random sample of rows are verified (the shares are then
#: estimates, and say so); each verified row can cost a few model calls' worth of candidates.
MAX_VERIFY_ROWS = 20_000
#: What the check keeps computed from its value (:meth:`tcrex.ui.state.checks.Check.once`).
_EFFECTIVENESS = "effectiveness of every row"
#: What the check keeps of the one sentence (:func:`summary_text`), per wording.
_SUMMARY = "the one sentence "
#: How often a placeholder asks whether the check is done: a reader takes half a second as "at once", and a
#: finished check then shows within it (the machine's speed decides only how long the check itself takes).
POLL_SECONDS = 0.5
#: What stands in for the headline's figure, and for the Overview's sentence, while the points are checked in the
#: background; the page reruns by itself when the check ends (the browser tests do not call a page showing one of
#: these idle: ``tests/e2e/conftest.py``).
CHECKING_VALUE = "checking …"
CHECKING_SENTENCE = "Checking the recommended points on the model …"


@dataclass
class VerifiedRows:
    """``counterfactuals(verify=True)`` of the rows checked, and whether they are a sample."""

    frame: pd.DataFrame  # valid, source and the verified point, indexed like ws.X (a subset when sampled)
    sampled: bool
    n_rows: int  # rows of the workspace


def model_available(ws: DataAndModel) -> bool:
    """Whether there is a model to check points on (not for a column of precomputed outputs)."""
    return ws.model.predict is not None and ws.model.output_column is None


def checker(ws: DataAndModel):
    """The model to check recommended points on, or None (outputs from a column: nothing to check with)."""
    return ws.model.predict if model_available(ws) else None


def _verify(ws: DataAndModel, result: FitResult) -> VerifiedRows | str:
    """Every row's point (a uniform sample above :data:`MAX_VERIFY_ROWS` rows) checked on the model, or why not."""
    index = ws.X.index
    sampled = len(index) > MAX_VERIFY_ROWS
    if sampled:
        pos = np.sort(np.random.default_rng(0).choice(len(index), MAX_VERIFY_ROWS, replace=False))
    else:
        pos = np.arange(len(index))
    try:
        frame = result.explainer.counterfactuals(ws.X.iloc[pos], y_pred=ws.y_pred[pos], model=ws.model.predict,
                                                 verify=True, class_names=ws.class_names)
    except TCRExError as exc:
        return str(exc)  # the reason, in words (the page says what it is the reason for)
    return VerifiedRows(frame=frame, sampled=sampled, n_rows=len(index))


def check_key(ws: DataAndModel, result: FitResult) -> tuple:
    """The key of a fit's check on the active model: the fit result's key (a digest of its content) and the
    model's."""
    return result.key, ws.model.key


def the_check(ws: DataAndModel, result: FitResult) -> checks.Check | None:
    """The check of this fit on the active model, if it was asked for (and is still held)."""
    return checks.REGISTRY.get(check_key(ws, result))


def _ask(ws: DataAndModel, result: FitResult, *, start: bool, asked_in: object = None) -> checks.Check:
    is_shared = shared.is_shared_result(result)

    def build():
        rows = _verify(ws, result)
        return shared.freeze(rows) if is_shared and not isinstance(rows, str) else rows  # read by every session

    return checks.REGISTRY.ask(check_key(ws, result), build, start=start, asked_in=asked_in)


def _start_if_drawn(ws: DataAndModel, result: FitResult) -> None:
    """Ask for the fit's check and start it, unless it is a shared fit's asked for in this very page run: that one
    waits for the browser's next request, which says the page is drawn (a fresh server's first view is not slowed
    by the check). A private fit's check starts at once."""
    is_shared = shared.is_shared_result(result)
    check = the_check(ws, result)
    if check is None:
        _ask(ws, result, start=not is_shared, asked_in=session.page_run())
    elif check.status == checks.WAITING and (not is_shared or check.asked_in is not session.page_run()):
        check.start()


def verified_rows(ws: DataAndModel, result: FitResult, wait: bool = True) -> VerifiedRows | None:
    """Every row's point checked on the model (once per fit and model for the whole server); None without a model
    or on failure (the page then says why, once per session).

    ``wait=False`` (the pages' headlines and tables) never blocks a page run: the check starts in the background
    and None is returned until it is done (:func:`pending` says so); Apply parameters then costs the fit, not the
    fit plus seconds of model calls. Exports wait."""
    check = _done(ws, result, wait)
    if check is None:
        return None
    rows = check.value
    if shared.is_shared_result(result):  # a session's view of the server's check: a shallow copy
        rows = VerifiedRows(frame=rows.frame.copy(deep=False), sampled=rows.sampled, n_rows=rows.n_rows)
    return rows


def _done(ws: DataAndModel, result: FitResult, wait: bool) -> checks.Check | None:
    """The fit's check, done (started, and with ``wait`` waited for); None without a model, while it runs
    (``wait=False``) or when it failed."""
    if not model_available(ws):
        return None
    check = _ask(ws, result, start=True)
    if not check.finished:
        if not wait:
            return None
        with st.spinner("Checking the recommended points on the model ..."):
            check.wait()
    if check.status == checks.FAILED:
        _warn_once(check)
        return None
    return check


def _warn_once(check: checks.Check) -> None:
    """The reason a check failed, shown once per session and check (not by a download's builder, which runs
    outside the page run: the export then says what it lacks)."""
    sid = st_compat.session_id_of_this_run()
    if sid is not None and sid not in check.told:
        check.told.add(sid)
        st.warning(f"The recommended points could not be checked on the model: {check.error}",
                   icon=":material/warning:")


def check_in_background() -> None:
    """At the end of a page run (``app.py``), ask for the current fit's check, so the pages that show it (Global
    rules, Change & keep, the report) find it done or under way. A private fit's check starts now; a shared fit's
    waits (:data:`tcrex.ui.state.checks.WAITING`) for the browser's next request, which says this page is drawn
    (the placeholder's first poll, or any later page run): a fresh server's first view is not slowed by it. A
    check under way or done is left alone."""
    try:
        result = session.current_fit()
        if result is None:
            return
        ws, _ = try_data_and_model()
        if ws is None or not model_available(ws) or fit_key(ws, result.params) != result.fit_key:
            return  # no model to check with, or the last fit belongs to other data or another model
        _start_if_drawn(ws, result)
    finally:
        session.page_run(renew=True)


def pending(ws: DataAndModel, result: FitResult) -> bool:
    """Whether the recommended points of this fit are still to be checked (waiting or running)."""
    if not model_available(ws):
        return False
    check = the_check(ws, result)
    return check is None or not check.finished


@st.fragment(run_every=POLL_SECONDS)
def _until_verified(ws: DataAndModel, result: FitResult) -> None:
    """A placeholder metric while the points are checked; when they are, the page reruns once with the figures."""
    if pending(ws, result):
        st.metric("Verified by a point that follows the advice", CHECKING_VALUE,
                  help="The recommended points are being checked on the model; the figure appears in a moment.")
        return
    st.rerun()


def effectiveness(ws: DataAndModel, result: FitResult, index: pd.Index | None = None, wait: bool = True):
    """The engine's :class:`Effectiveness` of the rows in ``index`` (default: every row) that were verified
    (``wait=False``: None while they are being checked, see :func:`verified_rows`)."""
    check = _done(ws, result, wait)
    if check is None:
        return None
    rows = check.value
    if index is None or index.equals(ws.X.index):  # every row: the same for every page, computed once per check
        is_shared = shared.is_shared_result(result)

        def every_row(value: VerifiedRows):
            eff = result.explainer.effectiveness(explanations=result.explanations.loc[value.frame.index],
                                                 counterfactuals=value.frame)
            return shared.freeze(eff) if is_shared else eff  # read by every session

        return check.once(_EFFECTIVENESS, every_row)
    idx = rows.frame.index.intersection(index, sort=False)
    return result.explainer.effectiveness(explanations=result.explanations.loc[idx],
                                          counterfactuals=rows.frame.loc[idx])


def headline(ws: DataAndModel, result: FitResult, index: pd.Index | None = None, *, column=None) -> None:
    """A metric: "verified by a point that follows the advice N %", with the fall-backs counted apart, or why it
    cannot be said."""
    column = column if column is not None else st
    if not model_available(ws):
        column.metric("Verified on the model", "–",
                      help="The outputs come from a column of the data, so there is no model to check the "
                           "recommended points on.")
        return
    eff = effectiveness(ws, result, index, wait=False)
    if eff is None and pending(ws, result):  # shown as soon as the background check is done
        if column is st:
            _until_verified(ws, result)
        else:
            with column:
                _until_verified(ws, result)
        return
    if eff is None:
        column.metric("Verified on the model", "–")
        return
    rows = verified_rows(ws, result)
    share = eff.verified_share
    sample = (f" Estimated on a uniform sample of {len(rows.frame):,} of {rows.n_rows:,} rows."
              if rows.sampled else "")
    column.metric("Verified by a point that follows the advice", "–" if share != share else f"{share:.0%}",
                  help=f"{eff.headline()}. {eff.n_verified:,} of the {eff.n_needing:,} individuals who need "
                       "recourse get a point that changes exactly the features their advice names, to the values "
                       "it states, and that the model sends to the favourable outcome: "
                       f"{eff.n_optimal_rule:,} through their optimal rule, {eff.n_next_rule:,} through the next "
                       f"rule, {eff.n_minimal_change:,} by a minimal change beyond the rules. "
                       f"{eff.n_similar:,} have only a similar real case (not counted as verified), "
                       f"{eff.n_none:,} none." + sample)
    column.caption(eff.headline())


def sentence(ws: DataAndModel, result: FitResult, index: pd.Index | None = None, wait: bool = True) -> str | None:
    """The headline in words, for captions and reports: "verified by a point that follows the advice N % · a
    similar real case only M % · none K %" (``wait=False``: None while the points are being checked)."""
    if not model_available(ws):
        return None
    eff = effectiveness(ws, result, index, wait=wait)
    if eff is None or not eff.n_needing:
        return None
    return f"Of the {eff.n_needing:,} who need recourse: {eff.headline()}."


def recourse_note(ws: DataAndModel, result: FitResult) -> None:
    """The Overview's "Recourse checked on the model." sentence. The page never waits for the check: while it
    runs (a fresh server's first view spent ~3 of its ~4 s here) a placeholder stands in its place and the page
    reruns once with the sentence when the check is done."""
    if pending(ws, result):
        _sentence_when_verified(ws, result)
        return
    text = sentence(ws, result, wait=False)
    if text:
        st.markdown(f"**Recourse checked on the model.** {text}")


#: The Overview's and the report's first sentence when there is no model to check the advice on.
NO_MODEL_SUMMARY = ("The outputs come from a column of the data, so no change was checked on a model: the figures "
                    "below say what the rules alone say.")


def summary_text(ws: DataAndModel, result: FitResult, wait: bool = True) -> str | None:
    """The one sentence (:func:`tcrex.report.summary_sentence`) of this fit from the verified frame, in the
    data's titles and labels, once per fit (``wait=False``: None while the points are being checked). The
    Overview's first line and the report's first paragraph both print it."""
    if not model_available(ws):
        return NO_MODEL_SUMMARY
    check = _done(ws, result, wait)
    if check is None:
        return None
    ex = result.explainer
    outcome = ws.target_name(ex.targets_[0].target) if len(ex.targets_) == 1 else "the favourable outcome"
    titles = getattr(ws.data, "titles", None) or None
    labels = ws.data.value_labels or None

    def sentence_of(rows: VerifiedRows) -> str:
        return summary_sentence(rows.frame, ws.X.loc[rows.frame.index], outcome=outcome, titles=titles,
                                labels=labels, total_rows=rows.n_rows if rows.sampled else None)
    # kept with the check per wording (a session's class names or titles make another sentence of the same check)
    return check.once(_SUMMARY + repr((outcome, titles, labels)), sentence_of)


def summary_note(ws: DataAndModel, result: FitResult) -> None:
    """The Overview's first line: the one sentence, in bold; nothing while the points are being checked (the
    page's recourse note holds the placeholder and reruns the page when the check is done)."""
    if model_available(ws) and pending(ws, result):
        return
    text = summary_text(ws, result, wait=False)
    if text:
        st.markdown(f'<p id="summary"><b>{html.escape(text)}</b></p>', unsafe_allow_html=True)


@st.fragment(run_every=POLL_SECONDS)
def _sentence_when_verified(ws: DataAndModel, result: FitResult) -> None:
    """The placeholder of the Overview's sentence. Its polls are the browser's requests after the page is drawn:
    one starts a shared fit's waiting check (normally asked for by :func:`check_in_background` at the end of the
    page run; asked for here should that not have happened, e.g. the page shows a kept result)."""
    if pending(ws, result):
        _start_if_drawn(ws, result)
        st.caption(f"**Recourse checked on the model.** {CHECKING_SENTENCE}")
        return
    st.rerun()


def with_sources(ws: DataAndModel, result: FitResult, population: pd.DataFrame) -> pd.DataFrame:
    """``population`` (rows of ``explain()``) with the ``source`` of each row's verified point, when every row
    was checked (the tree, outline and icicle then say what verifies the people each metarule serves); as it is
    while the check runs, without a model, or when only a sample was checked (counts would not add up)."""
    rows = verified_rows(ws, result, wait=False)
    if rows is None or rows.sampled or not population.index.isin(rows.frame.index).all():
        return population
    return population.assign(source=rows.frame["source"].reindex(population.index).astype(object))


#: The rules table's column of the share whose verified point follows the rule's own advice.
OWN_ADVICE = "own advice verified"


def rules_with_effectiveness(ws: DataAndModel, result: FitResult, rules: pd.DataFrame) -> pd.DataFrame:
    """``rules`` (rows of ``rules_frame`` with target and rule) with each rule's effectiveness on every row it
    serves: ``works at nearest point`` and ``own advice verified`` (shares; empty where it serves no one), then
    what verifies the others, counted: ``verified via next rule``, ``verified by minimal change``, ``not verified``
    (a rule whose own advice is verified for 0 % may leave everyone it serves verified elsewhere)."""
    eff = effectiveness(ws, result, wait=False)  # while the points are checked: the table without these columns
    if eff is None:
        return rules
    table = eff.rules.drop(columns=["n_this_rule"]).rename(columns={
        "n_served": "serves", "boundary_effectiveness": "works at nearest point",
        "effectiveness": OWN_ADVICE, "n_next_rule": "verified via next rule",
        "n_minimal_change": "verified by minimal change", "n_not_verified": "not verified"})
    return rules.merge(table, on=["target", "rule"], how="left")
