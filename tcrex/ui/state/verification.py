"""Recourse checked on the model: every row's recommended point verified once per fit, summarised for any
population the pages show (the share of people needing recourse whose recourse works, per-rule effectiveness).

The engine does the work (:meth:`tcrex.TCREx.counterfactuals` with ``verify=True`` and
:meth:`tcrex.TCREx.effectiveness`); this module only decides which rows to verify, caches the result with the fit
and draws the headline.
"""

from __future__ import annotations

import html

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from tcrex.errors import TCRExError

from . import session, shared
from .active import DataAndModel, FitResult, fit_key, try_data_and_model

#: Above this many rows the points of a uniform random sample of rows are verified (the shares are then
#: estimates, and say so); each verified row can cost a few model calls' worth of candidates.
MAX_VERIFY_ROWS = 20_000
_CACHE = "verified"
_EFFECTIVENESS = "effectiveness of every row"
_PENDING = "verifying"
#: Checks of private fits run here, off the page's script run (two at a time for the whole server).
_BACKGROUND = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tcrex-verify")
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
        return f"The recommended points could not be checked on the model: {exc}"
    return VerifiedRows(frame=frame, sampled=sampled, n_rows=len(index))


def verified_rows(ws: DataAndModel, result: FitResult, wait: bool = True) -> VerifiedRows | None:
    """Every row's point checked on the model (computed once per fit, and once per server for the shared fit of
    the bundled sample); None without a model or on failure.

    ``wait=False`` (the pages' headlines and tables) never blocks a page run on a private fit: the check starts in
    a background thread and None is returned until it is done (:func:`pending` says so); Apply parameters then
    costs the fit, not the fit plus seconds of model calls. Exports wait."""
    if not model_available(ws):
        return None
    if _CACHE not in result.cache:
        if shared.is_shared_result(result):
            with st.spinner("Checking the recommended points on the model ..."):
                value = shared.once(result, "verified", ws.model.key, lambda: _verify(ws, result))
        else:
            future = result.cache.get(_PENDING)
            if future is None:
                future = result.cache[_PENDING] = _BACKGROUND.submit(_verify, ws, result)
            if not wait and not future.done():
                return None
            with st.spinner("Checking the recommended points on the model ..."):
                value = future.result()
            result.cache.pop(_PENDING, None)
        if isinstance(value, str):
            st.warning(value, icon=":material/warning:")
            value = None
        elif value is not None and shared.is_shared_result(result):  # a session's view: a shallow copy
            value = VerifiedRows(frame=value.frame.copy(deep=False), sampled=value.sampled, n_rows=value.n_rows)
        result.cache[_CACHE] = value
    return result.cache[_CACHE]


#: The background checks of shared fits, one per (fit, model) for the whole server, and since when a page has been
#: waiting for each.
_SHARED_CHECKS: dict = {}
_WAITING_SINCE: dict = {}
#: Per shared check: set once a browser has drawn the page that asked for it (its next request: the placeholder's
#: poll, or any later page run); the check waits for it, at most :data:`DRAW_WAIT` seconds.
_DRAWN: dict = {}
#: How long a shared check started at the end of a page run waits for the browser to draw that page. On a fresh
#: server the check (0.5-0.7 s of CPU) started while a 2-core machine's browser was still drawing the first view
#: and slowed it; a page that shows a placeholder polls within a second of being drawn and starts it then.
DRAW_WAIT = 5.0
#: The placeholder's polls that start a waiting check: the first comes while a 2-core machine's browser may still be
#: drawing the page's charts (its timer fires between them), the second once it has drawn them.
DRAW_POLLS = 2
_POLLS: dict = {}


def _after_draw(drawn, build):
    drawn.wait(DRAW_WAIT)
    return build()


def _check_shared(ws: DataAndModel, result: FitResult, *, drawn: bool = True):
    """Start (once per server) checking a shared fit's points in the background; the future of that check.

    ``drawn=False`` (the end of a page run): the check waits until that page is drawn (:func:`page_drawn`), at
    most :data:`DRAW_WAIT` seconds; ``drawn=True``: the page is drawn, the check runs now (or stops waiting)."""
    key = (result.key, ws.model.key)
    event = _DRAWN.setdefault(key, threading.Event())
    if drawn:
        event.set()
    future = _SHARED_CHECKS.get(key)
    if future is None:
        future = _SHARED_CHECKS.setdefault(key, _BACKGROUND.submit(
            _after_draw, event, lambda: shared.once(result, "verified", ws.model.key, lambda: _verify(ws, result))))
    return future


def check_in_background() -> None:
    """At the end of a page run (``app.py``), start checking the current fit's points on the model in the
    background, so the pages that show the check (Global rules, Change & keep, the report) find it done or under
    way: on a fresh server, Global rules of the bundled sample waited seconds for it. Shared fits are checked once
    per server, from when the browser has drawn the page (its next request, at most :data:`DRAW_WAIT` seconds
    later): the fresh server's first view is not slowed by it. A fit whose check is done or under way is left
    alone."""
    result = session.current_fit()
    if result is None or _CACHE in result.cache or _PENDING in result.cache:
        return
    ws, _ = try_data_and_model()
    if ws is None or not model_available(ws) or fit_key(ws, result.params) != result.fit_key:
        return  # no model to check with, or the last fit belongs to other data or another model
    if shared.is_shared_result(result):
        if not shared.has_value(result, "verified", ws.model.key):
            # a check asked for by an earlier run runs now (that page was drawn: this is a later request); one
            # asked for now waits for this page to be drawn
            _check_shared(ws, result, drawn=(result.key, ws.model.key) in _SHARED_CHECKS)
        return
    result.cache[_PENDING] = _BACKGROUND.submit(_verify, ws, result)


def pending(ws: DataAndModel, result: FitResult) -> bool:
    """Whether the recommended points of this fit are being checked in the background right now."""
    if not model_available(ws) or _CACHE in result.cache:
        return False
    if shared.is_shared_result(result):
        future = _SHARED_CHECKS.get((result.key, ws.model.key))
        return future is not None and not future.done()
    future = result.cache.get(_PENDING)
    return future is not None and not future.done()


@st.fragment(run_every=0.5)
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
    rows = verified_rows(ws, result, wait=wait)
    if rows is None:
        return None
    if index is None or index.equals(ws.X.index):  # every row: the same for every page, computed once per fit
        if _EFFECTIVENESS not in result.cache:
            result.cache[_EFFECTIVENESS] = shared.once(
                result, "effectiveness", ws.model.key,
                lambda: result.explainer.effectiveness(explanations=result.explanations.loc[rows.frame.index],
                                                       counterfactuals=rows.frame))
        return result.cache[_EFFECTIVENESS]
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
    if _shared_unchecked(ws, result) or pending(ws, result):
        _sentence_when_verified(ws, result)
        return
    text = sentence(ws, result, wait=False)
    if text:
        st.markdown(f"**Recourse checked on the model.** {text}")
    elif pending(ws, result):
        _sentence_when_verified(ws, result)


#: The Overview's and the report's first sentence when there is no model to check the advice on.
NO_MODEL_SUMMARY = ("The outputs come from a column of the data, so no change was checked on a model: the figures "
                    "below say what the rules alone say.")


def summary_text(ws: DataAndModel, result: FitResult, wait: bool = True) -> str | None:
    """The one sentence (:func:`tcrex.report.summary_sentence`) of this fit from the verified frame, in the
    data's titles and labels, once per fit (``wait=False``: None while the points are being checked). The
    Overview's first line and the report's first paragraph both print it."""
    if not model_available(ws):
        return NO_MODEL_SUMMARY
    rows = verified_rows(ws, result, wait=wait)
    if rows is None:
        return None
    key = ("summary", repr(ws.class_names))
    if key not in result.cache:
        from tcrex.report import summary_sentence  # noqa: PLC0415 - the report package only once a sentence is due

        ex = result.explainer
        outcome = ws.target_name(ex.targets_[0].target) if len(ex.targets_) == 1 else "the favourable outcome"
        result.cache[key] = summary_sentence(rows.frame, ws.X.loc[rows.frame.index], outcome=outcome,
                                             titles=getattr(ws.data, "titles", None) or None,
                                             labels=ws.data.value_labels or None,
                                             total_rows=rows.n_rows if rows.sampled else None)
    return result.cache[key]


def summary_note(ws: DataAndModel, result: FitResult) -> None:
    """The Overview's first line: the one sentence, in bold; nothing while the points are being checked (the
    page's recourse note holds the placeholder and reruns the page when the check is done)."""
    if model_available(ws) and (_shared_unchecked(ws, result) or pending(ws, result)):
        return
    text = summary_text(ws, result, wait=False)
    if text:
        st.markdown(f'<p id="summary"><b>{html.escape(text)}</b></p>', unsafe_allow_html=True)


def _shared_unchecked(ws: DataAndModel, result: FitResult) -> bool:
    """A shared fit whose check has not finished: on a fresh server's first view it has not even started, and it
    starts only once the page is drawn (:func:`check_in_background`: when the placeholder first polls), so it
    competes neither with the page's run nor with the browser drawing it."""
    if not (shared.is_shared_result(result) and model_available(ws)) or _CACHE in result.cache \
            or shared.has_value(result, "verified", ws.model.key):
        return False
    future = _SHARED_CHECKS.get((result.key, ws.model.key))
    return future is None or not future.done()


@st.fragment(run_every=0.5)
def _sentence_when_verified(ws: DataAndModel, result: FitResult) -> None:
    if _shared_unchecked(ws, result) or pending(ws, result):
        if shared.is_shared_result(result):
            key = (result.key, ws.model.key)
            if key in _SHARED_CHECKS:  # asked for at the end of an earlier run: these polls say the page is drawn
                _POLLS[key] = _POLLS.get(key, 0) + 1
                if _POLLS[key] >= DRAW_POLLS:
                    _check_shared(ws, result)
            else:  # normally asked for by check_in_background() at the end of the page run; a later poll starts
                # it itself should that not have happened (e.g. the page shows a kept result, not the current fit)
                seen = _WAITING_SINCE.setdefault(key, time.monotonic())
                if time.monotonic() - seen > 1.0:
                    _check_shared(ws, result)
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
    (issue #34: a rule whose own advice is verified for 0 % may leave everyone it serves verified elsewhere)."""
    eff = effectiveness(ws, result, wait=False)  # while the points are checked: the table without these columns
    if eff is None:
        return rules
    table = eff.rules.drop(columns=["n_this_rule"]).rename(columns={
        "n_served": "serves", "boundary_effectiveness": "works at nearest point",
        "effectiveness": OWN_ADVICE, "n_next_rule": "verified via next rule",
        "n_minimal_change": "verified by minimal change", "n_not_verified": "not verified"})
    return rules.merge(table, on=["target", "rule"], how="left")
