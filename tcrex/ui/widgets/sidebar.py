"""The sidebar: what is active (data, model, task, target, parameters, fit), the parameter form and the
actionability-constraints editor."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import streamlit as st

import json

from tcrex import SECONDS_PER_CELL, intake, ordered_labels
from tcrex.errors import TCRExError
from tcrex.vocabulary import NO_ACTIONABLE_RULE, REGRESSION
from tcrex.text import pluralise

from . import components, constraints, outcome
from ..state import session, sources
from .fragments import full_rerun_if_requested, not_applied_yet, request_full_rerun
from ..state.active import (allow_pickle, constraints_summary, current, DataAndModel, describe_target, grid_preview,
                            Params, params, set_params)

def _apply_params_from_form() -> None:
    """Apply-button callback: runs before the script, so the fit uses the new values; the whole app reruns
    afterwards (the button sits in a fragment)."""
    request_full_rerun(session.PARAMS_RERUN)
    new = _draft_params()
    errors = param_checks(new["rho"], new["tau"], new["n_trees"], new["max_cells"], session.n_fit_rows())[0]
    session.set_param_errors(errors)  # not applied when there are errors: the form says why
    if errors:
        return
    shown = session.sidebar_workspace()
    if shown and new["target"] != params().target:  # choosing it here answers the question too
        session.confirmed_outcomes()[shown] = new["target"]
    set_params(**new)


def _draft_params() -> dict:
    """The parameters the form's widgets describe right now (applied only by **Apply parameters**)."""
    value = session.widget_value
    return dict(rho=float(value(session.PARAM_RHO, 0.02)), tau=float(value(session.PARAM_TAU, 0.9)),
                n_trees=int(value(session.PARAM_TREES, 1)), max_cells=int(value(session.PARAM_MAX_CELLS, 100_000)),
                target=_target_from_widgets(), grower=str(value(session.PARAM_GROWER, "auto")))


def _same(a, b) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float, np.number)) and isinstance(b, (int, float, np.number)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        return bool(np.isclose(float(a), float(b), rtol=1e-6, atol=1e-12))
    return a == b


def pending_params(ws: DataAndModel | None, p: Params) -> list[str]:
    """What the form's widgets would change if applied, in words ("τ 0.90 → 0.85"); empty when the form shows the
    applied parameters."""
    draft = _draft_params()
    out = []
    if not _same(draft["tau"], p.tau):
        out.append(f"τ {p.tau:.2f} → {draft['tau']:.2f}")
    if not _same(draft["rho"], p.rho):
        out.append(f"ρ {p.rho:.3f} → {draft['rho']:.3f}")
    if draft["n_trees"] != p.n_trees:
        out.append(f"surrogate trees {p.n_trees} → {draft['n_trees']}")
    if draft["max_cells"] != p.max_cells:
        out.append(f"grid cell limit {p.max_cells:,} → {draft['max_cells']:,}")
    if draft["grower"] != p.grower:
        out.append(f"grower {p.grower} → {draft['grower']}")
    if ws is not None and not _same_target(ws, draft["target"], p.target):
        out.append(f"favourable outcome {p.describe_target(ws.task, ws.class_name)} → "
                   f"{describe_target(draft['target'], ws.task, ws.class_name)}")
    return out


def _numbers_edited(p: Params) -> bool:
    """Whether the form's τ, ρ, tree count, cell limit or grower (once drawn) differ from the applied ones: the
    summary above the form says so even when the form is folded away. (The favourable outcome is left to the form:
    before the form is drawn its widget may still be the previous data's.)"""
    value = session.widget_value
    drawn = [session.PARAM_TAU, session.PARAM_RHO, session.PARAM_TREES, session.PARAM_MAX_CELLS, session.PARAM_GROWER]
    if not all(session.has_widget(k) for k in drawn):
        return False
    return not (_same(float(value(session.PARAM_TAU)), p.tau) and _same(float(value(session.PARAM_RHO)), p.rho)
                and int(value(session.PARAM_TREES)) == p.n_trees and int(value(session.PARAM_MAX_CELLS)) == p.max_cells
                and str(value(session.PARAM_GROWER)) == p.grower)


def _same_target(ws: DataAndModel, draft, applied) -> bool:
    if applied is None and ws.task == REGRESSION and session.has_widget(session.TARGET_THRESHOLD):
        # the form shows the paper's default (both directions across the mean) as a threshold at the mean
        mean = round(float(np.mean(ws.y_pred.astype(float))), 4)
        return (session.widget_value(session.TARGET_SIDE, "both") == "both"
                and _same(float(session.widget_value(session.TARGET_THRESHOLD)), mean))
    return _same(draft, applied)


def param_checks(rho, tau, n_trees, max_cells, n_rows) -> tuple[list[str], list[str]]:
    """Errors and warnings about the parameters for ``n_rows`` fit rows (through :mod:`tcrex.intake`)."""
    rep = intake.validate_params(rho, tau, n_trees, max_cells, n_rows=n_rows)
    errors, warnings = list(rep.errors), list(rep.warnings)
    return list(dict.fromkeys(errors)), list(dict.fromkeys(warnings))


def render_params_form(ws: DataAndModel | None) -> None:
    """rho, tau, tree count and target, applied together by **Apply parameters**; until then a "Not applied yet"
    note lists what the widgets would change (the constraints editor's mechanism: a fragment whose widgets are
    compared with the applied values)."""
    _params_editor(ws)
    _param_messages(ws, params())


@st.fragment
def _params_editor(ws: DataAndModel | None) -> None:
    full_rerun_if_requested(session.PARAMS_RERUN)
    p = params()
    # Every parameter widget starts from the applied value as its own default (value=/index=), never by writing its
    # key: a value written to a widget's key reaches the browser only with the run's output, and a click in between
    # (e.g. on the navigation) could send back the browser's default instead (seen once as "rejected" in the
    # favourable-outcome box while "approved" was applied). Once a widget exists, its key holds the user's edits.
    st.slider("τ — minimum rule accuracy", 0.5, 1.0, value=p.tau, step=0.01, key=session.PARAM_TAU,
              help="Share of a rule's rows whose model output must be in the target (paper: 0.9). "
                   "Changing it re-derives rules from the grown surrogate (fast).")
    st.slider("ρ — minimum rule feasibility", 0.005, 0.2, value=p.rho, step=0.005, key=session.PARAM_RHO, format="%.3f",
              help="Share of fit rows a rule must cover (paper: 0.02). Changing it regrows the surrogate.")
    st.number_input("Surrogate trees", 1, 50, value=p.n_trees, step=1, key=session.PARAM_TREES,
                    help="1 = one decision tree (the paper's default); more = a random forest with more "
                         "candidate rules, which can make recourse sparser (on the Adult census data, 5 trees "
                         "roughly halve the features a person is asked to change) but grows the metarule grid "
                         "toward the cell limit. See docs/benchmarks.md, 'Verified counterfactuals against DiCE'.")
    if ws is not None:
        _target_widget(ws, p)
    st.number_input("Grid cell limit", 1_000, 5_000_000, value=p.max_cells, step=10_000, key=session.PARAM_MAX_CELLS,
                    help="Largest metarule grid allowed. Raise it (or raise ρ / lower the tree count) when the "
                         "limit is hit.")
    growers = ["auto", "exact", "hist"]
    st.radio("Advanced · surrogate grower", growers, index=growers.index(p.grower), key=session.PARAM_GROWER,
             horizontal=True,
             format_func={"auto": "auto", "exact": "exact (CART)", "hist": "hist (binned)"}.get,
             help="auto (default): the histogram grower wherever it considers exactly CART's splits, and on "
                  "columns that need binning exact below 2,000 rows, hist above. exact: scikit-learn's CART, "
                  "the paper's choice. hist: a histogram-based tree, faster on large data (thresholds fall "
                  "between binned values). Changing it regrows the surrogate.")
    pending = pending_params(ws, p)
    if pending:
        not_applied_yet("; ".join(pending), "Apply parameters")
        if ws is not None:
            _grid_preview_note(ws, p)
    st.button("Apply parameters", type="primary", key="param_apply", on_click=_apply_params_from_form,
              width="stretch")


#: A fit expected to take longer than this (seconds) gets a warning with what to change before anyone presses Apply.
SLOW_FIT_SECONDS = 3.0


def _seconds_per_cell() -> float:
    """The measured cost of a grid cell: this session's last fit when its grid was large enough to time (its fit
    seconds include the surrogate, so this errs long), else the engine's reference figure."""
    last = session.current_fit()
    if last is not None and last.n_cells >= 50_000:
        return max(last.fit_seconds / last.n_cells, SECONDS_PER_CELL / 10)
    return SECONDS_PER_CELL


def _grid_preview_note(ws: DataAndModel, p: Params) -> None:
    """Before Apply: how big the metarule grid of the form's parameters will be (per target, counted from the
    grown surrogate, nothing built per cell), how long the fit should take, and what to change when it is too
    big for the cell limit or slower than :data:`SLOW_FIT_SECONDS`."""
    draft = _draft_params()
    if param_checks(draft["rho"], draft["tau"], draft["n_trees"], draft["max_cells"], len(ws.data.fit_index))[0]:
        return  # the form's own messages say what is wrong with the numbers
    try:
        sizes = grid_preview(ws, replace(p, **draft))
    except TCRExError as exc:
        st.info(f"**Grid preview:** these parameters would fail: {exc}", icon=":material/grid_on:")
        return
    cells = sum(s.n_cells for s in sizes)
    per_cell = _seconds_per_cell()
    seconds = cells * per_cell
    parts = " + ".join(f"{s.n_cells:,} ({s.target})" for s in sizes if s.n_rules) if len(sizes) > 1 else ""
    size = f"{pluralise(cells, 'grid cell')}" + (f" = {parts}" if parts else "")
    over = next((s.limit_message(draft["max_cells"]) for s in sizes if s.limit_message(draft["max_cells"])), None)
    if over:
        st.error(f"**Grid preview:** {size}. Apply would be refused: {over}", icon=":material/grid_on:")
    elif seconds > SLOW_FIT_SECONDS:
        st.warning(f"**Grid preview:** {size}; Apply will take about {seconds:.0f} s (measured "
                   f"{per_cell * 1e6:.0f} µs per cell). To make it faster, raise **ρ** or lower **Surrogate "
                   "trees** (fewer, larger rules; fewer cells), or lower **τ**.", icon=":material/grid_on:")
    else:
        st.caption(f"Grid preview: {size}, about {max(seconds, 0.1):.1f} s to fit.")


def _param_messages(ws: DataAndModel | None, p: Params) -> None:
    """What the intake checks say about the parameters, next to the form."""
    rejected = session.param_errors()
    if rejected:
        st.error("**Not applied:** " + " ".join(_sentence(e) for e in rejected), icon=":material/error:")
    if ws is None:
        return
    n_fit = len(ws.data.fit_index)
    session.set_n_fit_rows(n_fit)
    errors, warnings = param_checks(p.rho, p.tau, p.n_trees, p.max_cells, n_fit)
    for e in errors:
        st.error(_sentence(e), icon=":material/error:")
    for w in warnings:
        st.warning(_sentence(w), icon=":material/warning:")


def _sentence(text: str) -> str:
    text = str(text).strip()
    return (text[0].upper() + text[1:]) if text else text


#: Regression: which side of the threshold is favourable ("both" = the paper's two directions).
_SIDES = {"above": "above the threshold", "below": "at or below it", "both": "both directions (paper)"}


def _target_from_widgets() -> Any:
    """The engine's target spec from the favourable-outcome widgets (None: both directions / any other class)."""
    target = session.widget_value(session.target_widget())
    if target == "__default__":
        return None
    lookup = session.class_lookup()
    if isinstance(target, str) and target in lookup:
        return lookup[target]
    if (session.has_widget(session.TARGET_THRESHOLD)
            and session.widget_value(session.TARGET_MODE) == "threshold"):
        thr = float(session.widget_value(session.TARGET_THRESHOLD))
        side = session.widget_value(session.TARGET_SIDE, "both")
        return (thr, None) if side == "above" else (None, thr) if side == "below" else thr
    return params().target


def _target_widget(ws: DataAndModel, p: Params) -> None:
    """The favourable outcome, chosen once for every page, export, report and audit."""
    session.set_sidebar_workspace(ws.key())
    if ws.task == REGRESSION:
        mean = float(np.mean(ws.y_pred.astype(float)))
        t = p.target
        thr = (t[0] if t[0] is not None else t[1]) if isinstance(t, (tuple, list)) else t
        side = ("above" if t[1] is None else "below") if isinstance(t, (tuple, list)) else "both"
        session.default_widget(session.TARGET_MODE, "threshold")  # not a widget: says the threshold widgets are in use
        st.number_input("Favourable outcome: model output threshold", value=round(float(thr) if thr is not None
                                                                                  else mean, 4),
                        key=session.TARGET_THRESHOLD, format="%.4g", help=f"The mean output is {mean:.4g}.")
        st.radio("Favourable side", list(_SIDES), index=list(_SIDES).index(side), key=session.TARGET_SIDE,
                 horizontal=True, format_func=_SIDES.get,
                 help="Above: recourse toward outputs above the threshold for everyone at or below it. Both "
                      "directions (the paper's default): everyone is shown how to cross the threshold.")
        return
    classes = ws.classes
    lookup = {f"class:{c}": c for c in classes}
    if ordered_labels(classes):  # an ordinal score: "7 or better" as well as a single class
        order = sorted(classes, key=float)
        lookup.update({f"at_least:{c}": {"at_least": c} for c in order[1:]})
    applied = p.target
    if applied is not None and _option_of(applied) not in lookup:  # a set chosen on Data & model
        lookup[_option_of(applied)] = applied
    session.set_class_lookup(lookup)
    options = [*lookup, "__default__"]
    current_value = "__default__" if applied is None else _option_of(applied)
    texts = {o: _target_option_text(ws, lookup[o]) for o in lookup}
    # the selectbox's key carries the workspace and the class names, so other data (or renamed classes) get a new
    # widget: the browser never keeps showing an option of the old data ("approved (approved = 1)" after an upload
    # whose options are "target = 0 / target = 1")
    key = session.TARGET_SELECT + sources.sha256(ws.key(), sorted(texts.items()))[:12]
    session.set_target_widget(key)
    session.clear_widgets(session.TARGET_SELECT, keep=key)  # the widget of other data or other class names
    index = options.index(current_value) if current_value in options else len(options) - 1
    both = "Both directions (paper)" if len(classes) == 2 else "Any other class (paper)"
    st.selectbox("Favourable outcome", options, index=index, key=key,
                 format_func=lambda o: both if o == "__default__" else texts[o],
                 help="The outcome people want. Rules, recourse, counts, exports, the report and the audit all "
                      "describe the individuals who do not have it. The paper's default explains every individual "
                      "toward the other class (or any other class), which tells those who already have the "
                      "favourable outcome how to lose it: use it for exploring the model.")


def _option_of(target) -> str:
    """The selectbox option of an applied target spec."""
    if isinstance(target, dict):
        (kind, bound), = target.items()
        return f"{kind}:{bound}"
    if isinstance(target, (list, tuple)):
        return "set:" + json.dumps([str(t) for t in target])
    return f"class:{target}"


def _target_option_text(ws: DataAndModel, target) -> str:
    if isinstance(target, (dict, list, tuple)):
        return describe_target(target, ws.task, ws.class_name)
    return _class_option(ws, target)


def _class_option(ws: DataAndModel, c) -> str:
    name = ws.class_name(c)
    column = ws.data.label_column or "output"
    return f"{name} ({column} = {c})" if name != str(c) else f"{column} = {c}"


def render_sidebar(setup_page: bool = False) -> None:
    """The always-visible summary (data, model, task, target, parameters, fit) and the parameter form. A note
    about state the app reset on its own (:func:`tcrex.ui.state.active.note_for_user`) is shown here once, except on
    the Data & model page, which shows it in place."""
    ws, result, problem = current()
    if ws is None and session.notice():  # the app just reset the data (see the note): show the new
        ws, result, problem = current()
    p = params()
    with st.sidebar:
        notice = None if setup_page else session.take_notice()
        if notice:
            st.info(notice, icon=":material/restart_alt:")
        if allow_pickle():
            st.warning("**Pickle loading is ON** (set by the operator). Uploaded pickle files can run code; only "
                       "load files you trust.", icon=":material/warning:")
        st.markdown("##### Active data and model")
        if ws is None:
            st.caption(f"Not ready: {sources.problem_summary(problem)}")
        else:
            d, m = ws.data, ws.model
            # the Overview's figure, on the same rows (one owner: components.model_score)
            said = components.model_score_text(ws)
            score = f" · {said}" if said else ""
            unapplied = " · :orange[**changes not applied yet**]"  # the editors below may be folded away
            st.caption(
                f"**Data:** {d.label} — {d.n_rows:,} rows × {len(ws.features)} features"
                + (f", label `{d.label_column}`" if d.label_column else "")
                + f"  \n**Model:** {m.label}{score}"
                + f"  \n**Task:** {ws.task} · **Favourable outcome:** {p.describe_target(ws.task, ws.class_name)}"
                + f"  \n**Parameters:** τ = {p.tau:.2f} · ρ = {p.rho:.3f} · trees = {p.n_trees}"
                + f" · grower {_grower_text(p, result)}" + (unapplied if _numbers_edited(p) else "")
                + f"  \n**Constraints:** {constraints_summary(result)}"
                + (unapplied if constraints.edited_not_applied(ws, result) else "")
            )
            if result is not None:
                upd = "" if result.update_seconds is None else f", updated in {result.update_seconds:.2f} s"
                st.caption(f":green[**{pluralise(result.n_rules, 'rule')} · "
                           f"{pluralise(result.n_metarules, 'metarule')} · "
                           f"{pluralise(result.n_cells, 'grid cell')}**] (fitted in {result.fit_seconds:.2f} s{upd})")
                n_blocked = int((result.explanations["status"].astype(str) == NO_ACTIONABLE_RULE).sum())
                if n_blocked:
                    st.caption(f":orange[**{n_blocked:,} of {len(result.explanations):,} rows have no actionable "
                               "rule** under the constraints]")
            elif problem:
                st.caption(f":red[**No explainer:** {problem}]")
            outcome.sidebar_note(ws)
        with st.expander("Parameters", expanded=True, icon=":material/tune:"):
            render_params_form(ws)
        if ws is not None:
            with st.expander("Actionability constraints", expanded=False, icon=":material/lock:"):
                if constraints.uses_table(ws):  # many features: a summary here, the table on Data & model
                    constraints.sidebar_summary(ws, result)
                else:
                    constraints.editor(ws, result)


def _grower_text(p, result) -> str:
    """The grower asked for, and for "auto" the one the fit used (the explainer's ``grower_``)."""
    used = getattr(result.explainer, "grower_", None) if result is not None else None
    return f"{p.grower} → {used}" if p.grower == "auto" and used else p.grower
