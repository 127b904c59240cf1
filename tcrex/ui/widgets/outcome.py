"""Which outcome is favourable, and what the classes are called: asked once per data and model.

After an upload (or a new model) the Data & model page asks, with a suggested default and the one-line reason for
it (:func:`tcrex.suggest_favourable`): a binary label -- which class; several classes -- one class, a set, or "this
class or better" for ordered labels (an ordinal score); regression -- higher or lower, and the threshold. The
classes can be given names ("0 = Good, 1 = Bad") that every page, figure, export and the report then use. Until the
answer is given the suggestion is in force and the sidebar says it is only suggested.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from tcrex import ordered_labels
from tcrex.vocabulary import REGRESSION
from tcrex.text import format_number

from ..state import active
from ..state.active import DataAndModel

#: Multi-class answers: one class, a set, an ordered run, or the paper's default.
MODES = {"one": "One class", "set": "A set of classes", "at_least": "This class or better (higher is better)",
         "at_most": "This class or lower (lower is better)", "any": "Any other class (paper; for exploring)"}
#: Regression answers.
SIDES = {"above": "Higher is better: outputs above the threshold", "below": "Lower is better: outputs at or below "
                                                                               "the threshold"}
#: Classes named one by one in the form (more classes: only the outcome is asked).
MAX_NAMED_CLASSES = 12


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _column(ws: DataAndModel) -> str:
    return ws.data.label_column or ws.model.output_column or "output"


def _option_text(ws: DataAndModel, c) -> str:
    """A class as a person reads it, with its label: "Good (RiskPerformance = 0)"."""
    name = ws.class_name(c)
    return f"{name} ({_column(ws)} = {c})" if name != str(c) else f"{_column(ws)} = {c}"


def _target_text(ws: DataAndModel, target) -> str:
    """A target spec in words, a single class with its label ("Good (RiskPerformance = 0)")."""
    if ws.task != REGRESSION and target is not None and not isinstance(target, (dict, list, tuple)):
        return _option_text(ws, target)
    return active.describe_target(target, ws.task, ws.class_name)


def _mode_of(target, classes: list) -> str:
    if isinstance(target, dict):
        return next(iter(target))
    if target is None:
        return "any"
    if isinstance(target, (list, tuple)):
        return "set" if len(target) > 1 else "one"
    return "one"


def question(ws: DataAndModel) -> None:
    """The question (a form), or the confirmed answer with a way to change it."""
    p = active.params()
    suggestion = ws.favourable_suggestion()
    confirmed = active.outcome_confirmed(ws)
    current = active.describe_target(p.target, ws.task, ws.class_name)
    with st.container(border=True):
        if confirmed:
            st.markdown(f"**Favourable outcome:** {current}")
            st.caption("Every page, figure, export, the report and the audit describe the individuals who do not "
                       "have it. Change it (or the class names) below.")
            with st.expander("Change the favourable outcome or the class names", icon=":material/edit:"):
                _form(ws, suggestion, p.target)
            return
        st.markdown("**Which outcome is favourable?** " + ("The outcome people want from the model (a loan "
                    "approved, a good risk): recourse is shown to those who do not have it." if ws.task != REGRESSION
                    else "Which direction of the model's output people want, and from where."))
        st.caption(f"Suggested: **{_target_text(ws, suggestion.target)}** — {suggestion.reason}.")
        _form(ws, suggestion, p.target)


def _form(ws: DataAndModel, suggestion, applied) -> None:
    key = f"outcome_{ws.key()[:10]}"
    start = applied if applied is not None else suggestion.target
    # plain widgets, not a form: the choices depend on each other (a set or "this class or better")
    if ws.task == REGRESSION:
        target = _regression(ws, start, key)
        names = None
    else:  # the names first: the choices below read them as they are typed
        names = _names(ws, key)
        target = _classes(ws, start, key, names)
    if st.button("Use this outcome", type="primary", key=f"{key}_use"):
        if isinstance(target, str):  # a sentence: what is missing
            st.warning(target, icon=":material/warning:")
            return
        active.confirm_outcome(ws, target, names)
        st.rerun()


def _regression(ws: DataAndModel, start, key: str) -> Any:
    y = ws.y_pred.astype(float)
    mean = float(f"{float(np.mean(y)):.4g}")
    if isinstance(start, (tuple, list)):
        side, thr = ("above", start[0]) if start[1] is None else ("below", start[1])
    else:
        side, thr = "above", (float(start) if start is not None else mean)
    c1, c2 = st.columns([3, 2])
    side = c1.radio("Favourable direction", list(SIDES), index=list(SIDES).index(side), format_func=SIDES.get,
                    key=f"{key}_side")
    thr = c2.number_input("Threshold", value=float(thr), format="%.4g", key=f"{key}_threshold",
                          help=f"The mean output is {format_number(mean)}; the median "
                               f"{format_number(float(np.median(y)))}.")
    return (float(thr), None) if side == "above" else (None, float(thr))


def _labeller(ws: DataAndModel, names: dict | None):
    """Class labels as the options show them, with the names typed above (before they are applied)."""
    def label(c) -> str:
        typed = str((names or {}).get(_plain(c)) or "").strip()
        return f"{typed} ({_column(ws)} = {c})" if typed else _option_text(ws, c)
    return label


def _classes(ws: DataAndModel, start, key: str, names: dict | None = None) -> Any:
    classes = ws.classes
    option = _labeller(ws, names)

    if len(classes) == 2:
        options = ["__default__", *range(2)]
        index = 0 if start is None else next((i + 1 for i, c in enumerate(classes) if str(c) == str(start)), 0)
        chosen = st.radio("Favourable outcome", options, index=index, key=f"{key}_binary",
                          format_func=lambda o: "Both directions (paper; for exploring the model)"
                          if o == "__default__" else option(classes[o]))
        return None if chosen == "__default__" else _plain(classes[chosen])
    modes = [m for m in MODES if m not in ("at_least", "at_most") or ordered_labels(classes)]
    mode = _mode_of(start, classes)
    mode = mode if mode in modes else "one"
    mode = st.radio("The favourable outcome is", modes, index=modes.index(mode), format_func=MODES.get,
                    key=f"{key}_mode", horizontal=True)
    order = sorted(classes, key=float) if ordered_labels(classes) else list(classes)
    if mode == "any":
        return None
    if mode == "set":
        default = [c for c in classes if isinstance(start, (list, tuple)) and any(str(c) == str(s) for s in start)]
        chosen = st.multiselect("Favourable classes", classes, default=default, format_func=lambda c:
                                option(c), key=f"{key}_set")
        if not chosen:
            return "Choose at least one favourable class."
        if len(chosen) == len(classes):
            return "Every class is chosen, so nobody would need recourse: leave at least one out."
        return [_plain(c) for c in chosen]
    bound = next(iter(start.values())) if isinstance(start, dict) else start
    pool = order if mode != "one" else classes
    index = next((i for i, c in enumerate(pool) if str(c) == str(bound)), len(pool) - 1 if mode == "at_least"
                 else 0)
    label = {"one": "Favourable class", "at_least": "This class or better", "at_most": "This class or lower"}[mode]
    chosen = st.selectbox(label, pool, index=index, format_func=option, key=f"{key}_{mode}")
    if mode == "one":
        return _plain(chosen)
    if (mode == "at_least" and str(chosen) == str(order[0])) or (mode == "at_most" and str(chosen) == str(order[-1])):
        return "That covers every class, so nobody would need recourse: choose another class."
    return {mode: _plain(chosen)}


def _names(ws: DataAndModel, key: str) -> dict | None:
    """A name per class (text inputs), or None when there are too many classes to name here."""
    classes = ws.classes
    if len(classes) > MAX_NAMED_CLASSES:
        st.caption(f"{len(classes)} classes: too many to name here; they are shown by their labels.")
        return None
    st.markdown("**Class names** (optional) — shown instead of the labels on every page, figure, export and the "
                "report")
    names = {}
    columns = st.columns(min(len(classes), 4))
    for i, c in enumerate(classes):
        current = ws.class_name(c)
        names[_plain(c)] = columns[i % len(columns)].text_input(
            f"{_column(ws)} = {c}", value=current if current != str(c) else "", key=f"{key}_name_{i}",
            # a hint that follows the data: a fixed "e.g. Good" for the first class told some data the reverse
            placeholder=f"a name for {c}", max_chars=60)
    return names


def sidebar_note(ws: DataAndModel) -> None:
    """While the outcome is only suggested: say so in the sidebar, with a link to the question."""
    if active.outcome_confirmed(ws):
        return
    st.info("**The favourable outcome is only suggested.** Confirm it (and name the classes) on the Data & model "
            "page.", icon=":material/help:")
    st.page_link("pages/views/data_model.py", label="Answer: which outcome is favourable?", icon=":material/flag:")
