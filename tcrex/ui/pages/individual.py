"""The Individual page's widgets: choosing the individual (by row, search or edited values), the recourse headline
with the model's verdict, the side-by-side table, the rule and metarule, and where recourse would exist."""

from __future__ import annotations

import hashlib
from copy import copy as _copy
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd
import streamlit as st

from tcrex import conform_dtypes
from tcrex.errors import TCRExError
from tcrex.intake import special_codes_note
from tcrex.vocabulary import ALREADY_IN_RULE, ALREADY_IN_TARGET, NO_ACTIONABLE_RULE, OK, STATUS_PLAIN
from tcrex.figures import individual_table, metacounterfactual_figure, metacounterfactual_table
from tcrex.text import feature_text, framed_alternative, pluralise, RULES_ALONE, value_text

from ..widgets import search
from ..widgets.constraints import category_names, code_labels, special_codes_of
from ..state import session, shared
from ..widgets.components import (arrow_safe, build, chart, current_individual, display_value, shared_chart, show,
                                 static_table)
from ..state.active import FitResult, DataAndModel


@dataclass
class Individual:
    row: Any  # row label in ws.X, or None for an edited row
    values: pd.Series
    output: Any
    edited: bool = False

    @property
    def frame(self) -> pd.DataFrame:
        return self.values.to_frame().T.infer_objects()


def individual_picker(ws: DataAndModel, result: FitResult, key: str = session.INDIVIDUAL_WIDGETS,
                      allow_edit: bool = True) -> Individual | None:
    """Pick an individual by row, by search, or by editing its feature values. ``None`` when a search finds nobody
    or cannot be read: the page then shows no individual (the one chosen before stays chosen for other pages)."""
    current = current_individual(ws, result)
    modes = ["row", "search"] + (["edit"] if allow_edit else [])
    names = {"row": "By row", "search": "Search", "edit": "Edit values"}
    # no default once the key holds a value ("Try this advice" writes it): Streamlit warns about both at once
    mode = st.segmented_control("Choose an individual", modes,
                                                default=None if session.has_widget(f"{key}_mode") else "row",
                                format_func=names.get, key=f"{key}_mode", required=True)
    positions = ws.X.index
    if mode == "search":
        q = st.text_input("Search", key=f"{key}_query",
                          placeholder='e.g. Unemployed, or: income > 80 and age < 30, or: `model output` == "approved"',
                          help=SEARCH_HELP.format(label=search.LABEL, output=search.OUTPUT))
        try:
            hits = search.search_rows(ws, q)
        except search.SearchError as exc:
            st.error(f"**Search not understood:** {exc}.", icon=":material/search_off:")
            _stale_note(current)
            return None
        if len(hits) == 0:
            st.warning("No row matches this search; try another.", icon=":material/search_off:")
            _stale_note(current)
            return None
        else:
            pick = st.selectbox(f"{pluralise(len(hits), 'matching row')} (first 200)", list(hits), key=f"{key}_hit",
                                format_func=lambda r: f"row {r}: " + ", ".join(f"{v}" for v in ws.X.loc[r].tolist()[:5]))
            if pick is not None and pick != current:
                session.choose_individual(pick)
                current = pick
    elif mode == "row":
        lo, hi = int(positions.min()), int(positions.max())
        row = st.number_input(f"Row ({lo}–{hi})", lo, hi, value=int(current), step=1, key=f"{key}_row_{current}")
        if row != current and row in positions:
            session.choose_individual(row)
            current = row
    values = ws.X.loc[current]
    output = ws.y_pred[positions.get_loc(current)]
    if mode == "edit":
        edited = _edit_form(ws, values, key, result)
        if edited is not None:
            return edited
    return Individual(row=current, values=values, output=output)


SEARCH_HELP = ("Text (no = < > ! or backticks) finds rows containing it anywhere, label and model output "
               "included, and a labelled value by its label as well as its code. An expression selects rows: comparisons == != < <= > >=, `in [..]`, joined by and / or / "
               "not, e.g. `income > 80 and age < 30`. Besides the features: `{label}` (the label column, also under "
               "its own name) and `` `{output}` `` (backticks for names with spaces); classes by value or name, e.g. "
               "`{label} == 1`, `` `{output}` == \"approved\" ``. Quote text values.")


def _code_meaning(ws: DataAndModel, result: FitResult | None, feature, value) -> str:
    """" (−7: no delinquency on record)" when the box starts at a labelled special code (the value stays a number)."""
    labels = code_labels(ws, feature, special_codes_of(result, feature))
    hit = next((c for c in labels if c == value), None)
    return "" if hit is None else f" ({str(hit).replace('-', '−')}: {labels[hit]})"


def _codes_help(ws: DataAndModel, result: FitResult | None, feature) -> str | None:
    """The box's help for a feature with special codes: each code with its codebook label, and what happens."""
    codes = special_codes_of(result, feature)
    if not codes:
        return None
    note = special_codes_note(codes, code_labels(ws, feature, codes))
    return f"Special codes of {feature}: {note[0].upper()}{note[1:]}."


def _stale_note(current) -> None:
    st.caption(f"No individual is shown. Row {current}, chosen before, stays selected for the other pages and the "
               "report until you pick another.")


def _edit_form(ws: DataAndModel, base: pd.Series, key: str, result: FitResult | None = None) -> Individual | None:
    if ws.model.predict is None:
        st.info("Edited values need a model to score them; with a column of outputs only existing rows can be "
                "explained.", icon=":material/info:")
        return None
    stored = session.edited_individual()
    start = pd.Series(stored) if stored else base
    with st.form(f"{key}_edit_form"):
        cols = st.columns(3)
        new = {}
        for i, f in enumerate(ws.features):
            box = cols[i % 3]
            if f in ws.data.categorical:
                values = sorted(ws.X[f].dropna().unique().tolist(), key=str)
                cur = start[f]
                # the codebook's names, as the sentences say them ("no checking account (A14)"); the value is the code
                new[f] = box.selectbox(ws.feature_name(f), values, index=values.index(cur) if cur in values else 0, key=f"{key}_e_{f}",
                                       format_func=category_names(ws, f, values))
            else:
                is_int = pd.api.types.is_integer_dtype(ws.X[f])
                v = start[f]
                new[f] = box.number_input(ws.feature_name(f) + _code_meaning(ws, result, f, v), value=int(v) if is_int else float(v),
                                          step=1 if is_int else None, key=f"{key}_e_{f}",
                                          format=None if is_int else "%.4g", help=_codes_help(ws, result, f))
        submitted = st.form_submit_button("Explain these values", type="primary")
    if submitted:
        session.set_edited_individual(new)
        stored = new
    if not stored:
        st.caption("Change values and press **Explain these values**.")
        return None
    row = pd.Series(stored)[ws.features]
    frame = row.to_frame().T.infer_objects()
    frame = conform_dtypes(frame, ws.X)  # the fit data's dtypes where they keep every value (3.9 stays 3.9)
    try:
        output = np.asarray(ws.model.predict(frame))[0]
    except Exception as exc:  # noqa: BLE001
        st.error(f"The model could not score these values ({exc}).")
        return None
    return Individual(row=None, values=frame.iloc[0], output=output, edited=True)


def row_view(ws: DataAndModel, ind: Individual, under_b: bool):
    """What one row's explanation depends on besides the fit when it is the same for every session (a row of the
    data as it is, under the active model), else None (an edited row, or model B)."""
    if under_b or ind.edited or ind.row is None:
        return None
    return ind.row, ws.model.key, repr(ws.class_names)


def explain(ws: DataAndModel, result: FitResult, ex, ind: Individual, model, under_b: bool = False):
    """``ex.explain_one`` of the chosen individual, with its own output under model A (B's own output under model B).
    For a row as it is under the active model of the fit every session shares, once per server
    (:func:`tcrex.ui.state.shared.view`): every session that opened Individual explained the same first row again,
    checking its points on the model."""
    output = None if under_b else [ind.output]

    def run():
        return ex.explain_one(ind.frame, y_pred=output, model=model, class_names=ws.class_names)

    view = row_view(ws, ind, under_b)
    return run() if view is None else shared.view(result, "explain_one", view, run)


def guard(fn: Callable[[], Any]) -> Any:
    """Run ``fn``; engine errors become a warning on the page."""
    try:
        return fn()
    except TCRExError as exc:
        st.warning(str(exc), icon=":material/warning:")
        return None


def recourse_headline(ws: DataAndModel, result: FitResult, ind: Individual, exp) -> None:
    """The model's output, the one-sentence recourse and the model's verdict on it, big enough for a projector."""
    who = "Edited individual" if ind.edited else f"Row {ind.row}"
    split = ""
    if not ind.edited:
        split = " (test split)" if ind.row in ws.data.test_index else " (fit row)"
    outcome = ws.outcome_name(exp.output)
    target = ""
    if exp.target is not None:
        targets = result.explainer.targets_
        name = ws.target_name(targets[exp.target].target) if exp.target < len(targets) else exp.target_description
        target = f" → favourable outcome: **{name}**"
    st.markdown(f"#### {who}{split}: model output **{outcome}**{target}")
    status = exp.status
    if exp.recourse == "verified" or (exp.recourse is None and status == OK):
        st.success(f"**{recourse_label(exp)}:** {exp.text}", icon=":material/alt_route:")
    elif status == ALREADY_IN_TARGET:
        st.info(exp.text, icon=":material/check_circle:")
    elif status == NO_ACTIONABLE_RULE:
        st.warning(exp.text, icon=":material/block:")
    else:
        st.warning(exp.text, icon=":material/warning:")
    verdict = model_verdict(ws, exp)
    if verdict:
        st.markdown(verdict)
    if exp.paper_text and exp.paper_text != exp.text and exp.status != ALREADY_IN_TARGET:
        st.caption(f"{RULES_ALONE[0].upper()}{RULES_ALONE[1:]}: {rules_alone_text(exp)}")
    if exp.recourse == "verified" and exp.counterfactual:
        st.button("Try this advice in Edit values", key=session.widget_key(session.INDIVIDUAL_WIDGETS, "try_advice"), icon=":material/edit:",
                  on_click=_follow_advice, args=(ws, dict(exp.counterfactual)),
                  help="Opens Edit values with exactly the changes the sentence states (every other feature as it "
                       "is), so the model's answer can be seen, and the next step if it fails.")


def _follow_advice(ws: DataAndModel, point: dict) -> None:
    """Fill Edit values with the verified point (a callback: widget keys may be written before the rerun)."""
    prefix = session.INDIVIDUAL_WIDGETS
    session.set_edited_individual({f: point[f] for f in ws.features})
    session.set_widget(session.widget_key(prefix, "mode"), "edit")
    # the form's widgets start from the stored values, not from what they showed before
    session.clear_widgets(session.widget_key(prefix, "e_"))


def rules_alone_text(exp) -> str:
    """The paper's optimal rule's own statement, for the secondary line under the advice: a person inside a rule
    the model rejects them in is said so (never "already inside", which reads as nothing to do)."""
    if exp.status == ALREADY_IN_RULE and exp.recourse is not None:
        return (f"this person is inside rule {exp.rule_id}, yet the model does not give them the outcome there "
                f"({STATUS_PLAIN[ALREADY_IN_RULE]}).")
    return exp.paper_text


def model_verdict(ws: DataAndModel, exp) -> str | None:
    """One honest line: does the model give the favourable outcome at the point the sentence states?"""
    if exp.recourse is None:
        if exp.rule is None:
            return None
        return ("*Not checked on a model: the outputs come from a column of the data. A rule holds for most "
                "individuals inside it, not necessarily for this one.*")
    if exp.recourse == "similar_case":
        return (f":orange[**No verified recourse.**] No point that follows a rule's advice, and no smaller change, "
                f"is confirmed by the model; the similar real case below gets "
                f"**{ws.outcome_name(exp.example_output)}** but is not advice to follow.")
    if exp.recourse != "verified":
        return (":red[**✗ No verified recourse:** no rule has a point the model confirms and no real case to "
                "start a smaller change from.]")
    out = ws.outcome_name(exp.counterfactual_output)
    check = f":green[**✓ Checked on the model:** making exactly the changes above gives **{out}**.]"
    if exp.counterfactual_source == "searched":
        return (check + f" At the rule's nearest values the model still gives {ws.outcome_name(exp.boundary_output)}, "
                "so the values stated lie further inside the rule.")
    if exp.counterfactual_source == "next_rule":
        return (check + f" The optimal rule {exp.rule_id} has no point the model confirms for this individual; "
                f"the recommendation follows the next rule in cost order, {exp.recommended_rule_id}.")
    if exp.counterfactual_source == "minimal_change":
        return (check + " No rule has a point the model confirms here: this is a minimal change found from the "
                "nearest real case with the favourable outcome, every other feature given back.")
    return check


def alternatives_section(ws: DataAndModel, exp, result: FitResult | None = None, share=None) -> None:
    """The metacounterfactuals: the figure, the table with the model's verdict per alternative (✓/✗), and for
    an alternative the model confirms, a button that loads its point into Edit values. ``share``: the row's
    :func:`row_view` (the figure is then built once per server for the shared ``result``)."""
    checked = any(a.get("verified") is not None for a in exp.alternatives)
    st.caption("The nearest other metarules: if this individual's features were slightly different, which "
               "recourse would the rules recommend instead?"
               + (" ✓: the model confirms a point of the alternative (the \"if\" features at values the data "
                  "holds inside that metarule, the advice applied there); ✗: the model confirms none, so the "
                  "alternative is what the rules say, not recourse that works." if checked else
                  " Not checked on a model (the outputs come from a column of the data)."))
    if result is not None:  # its height follows its number of alternatives
        shared_chart(result, share, metacounterfactual_figure, exp)
    else:
        chart(metacounterfactual_figure, exp)
    # the figure above draws the counts; the table says what would differ, the advice there and the verdict
    static_table(metacounterfactual_table, exp, index="alternative",
                 drop=["text", "features that would differ", "difference from now"]
                 + (["checked on the model"] if not checked else []))
    confirmed = [(k, a) for k, a in enumerate(exp.alternatives, start=1) if a.get("verified") and a.get("point")]
    if not confirmed:
        return
    labels = {k: f"{k}. {a['text']}" for k, a in confirmed}
    # a key of these alternatives: another individual gets a fresh choice, never a label left from the last one
    digest = hashlib.sha1("\n".join(labels.values()).encode("utf-8")).hexdigest()[:12]
    key = session.widget_key(session.INDIVIDUAL_WIDGETS, f"alternative_{digest}")
    choice = st.selectbox("Alternative the model confirms", list(labels), format_func=labels.get, key=key)
    point = dict(confirmed)[choice]["point"] if choice in labels else confirmed[0][1]["point"]
    st.button("Try this alternative in Edit values", key=session.widget_key(session.INDIVIDUAL_WIDGETS,
                                                                            "try_alternative"),
              icon=":material/edit:", on_click=_follow_advice, args=(ws, dict(point)),
              help="Opens Edit values at the alternative's point: the \"if\" features and the changes it names, "
                   "every other feature as it is, so the model's answer can be seen.")


def recourse_alternatives(exp) -> list[dict]:
    """Metacounterfactuals whose metarule has a rule the constraints allow (where recourse WOULD exist)."""
    return [a for a in (exp.alternatives or []) if a.get("rule", -1) is not None and a.get("rule", -1) >= 0]


def no_actionable_alternatives(exp) -> None:
    """For an individual without an actionable rule: the nearby metarules where there would be recourse."""
    alts = recourse_alternatives(exp)
    st.subheader("Where there would be recourse")
    if not alts:
        st.info("No nearby metarule offers an actionable rule under these constraints; relax a constraint (for "
                "example make a feature free, or lower its weight) to find recourse.", icon=":material/info:")
        return
    st.caption("The nearest metarules with a rule the constraints allow: if this individual's features were "
               "different in these ways, the rules would recommend this recourse.")
    for k, a in enumerate(alts, start=1):
        st.markdown(f"{k}. {framed_alternative(a['text'])}")

    shown = _copy(exp)
    shown.alternatives = alts
    show(metacounterfactual_table(shown).drop(columns=["difference from now"], errors="ignore"))


def side_by_side(ws: DataAndModel, exp, values: pd.Series, constraints=None, value_labels=None) -> None:
    """Current values, the recommended (verified) point, the rule's nearest point and a real example, changes
    first and highlighted, with the model's output at each point in the first row (``constraints``: the
    explainer's, so an immutable feature reads "immutable", not "free")."""
    table = build(individual_table, exp, values, changes_first=True, outcome_name=ws.outcome_name,
                  constraints=constraints, value_labels=value_labels)
    if table is None:
        return
    table = table.rename(columns={"counterfactual value": "recommended point"})
    if "feature" in table.columns and ws.data.titles:  # the dictionary's titles ("⟨model output⟩" stays)
        features = set(map(str, ws.features))
        table["feature"] = [ws.feature_name(f) if str(f) in features else f for f in table["feature"]]
    table = arrow_safe(table)
    styled = table.style.apply(_highlight_row, axis=1)
    st.dataframe(styled, hide_index=True, width="stretch")
    st.caption("Highlighted: the features to change. First row: the model's output at each point (✓ = the "
               "favourable outcome).")


def _highlight_row(row: pd.Series) -> list[str]:
    if row.get("action") == "change":
        return ["background-color: #fde7d9; font-weight: 600"] * len(row)
    if str(row.get("feature")).startswith("⟨"):
        return ["background-color: #eef3f8; font-weight: 600"] * len(row)
    return [""] * len(row)


def recourse_label(exp) -> str:
    """The headline's lead: how many changes, and the rule they follow (the heading of the changes shown below),
    so a reader of the headline alone knows which rule the sentence is ("Recourse by rule R2 (2 changes)")."""
    count = f"{exp.n_changes} change{'s' if exp.n_changes != 1 else ''}"
    if exp.recourse != "verified" and exp.recourse is not None:
        return f"Recourse ({count})"
    heading = rule_heading(exp)
    if heading.startswith("Rule "):
        return f"Recourse by rule {heading[len('Rule '):]} ({count})"
    return f"Recourse beyond the rules ({count})"


def rule_heading(exp) -> str:
    """The heading over the changes shown: the rule they follow (the recommended rule when the model confirmed
    another rule's point; the paper's optimal rule otherwise)."""
    if getattr(exp, "counterfactual_source", None) == "minimal_change":
        return "A change beyond the rules"
    rid = getattr(exp, "recommended_rule_id", None) or getattr(exp, "rule_id", None) or exp.rule
    return f"Rule {rid}"


def paper_rule_note(exp) -> str | None:
    """The secondary line naming the paper's optimal rule when the changes shown follow another rule."""
    recommended = getattr(exp, "recommended_rule_id", None)
    if exp.recourse is None or exp.rule is None:
        return None
    if recommended and recommended != exp.rule_id:
        return f"The paper's optimal rule {exp.rule_id} is not confirmed by the model here."
    if exp.recourse != "verified" or exp.counterfactual_source == "minimal_change":
        return f"The paper's optimal rule {exp.rule_id} is not confirmed by the model here, nor is any other rule."
    return None


def _named(feature, titles: dict | None) -> str:
    """A feature in the condition lists: its dictionary title with the name (:func:`tcrex.text.feature_text`),
    else the name as code."""
    text = feature_text(feature, (titles or {}).get(feature))
    return f"`{feature}`" if text == str(feature) else text


def _cond_lines(conds: dict, titles: dict | None = None) -> str:
    return "\n".join(f"- {_named(f, titles)} {c['text']}" for f, c in conds.items()) or "- *(no condition)*"


def rule_and_metarule(exp, value_labels=None, titles=None) -> None:
    """The rule and the metarule side by side (two columns of condition lists); ``value_labels`` (the
    explainer's codebook) names labelled values as the sentences do, ``titles`` (the data dictionary's) names
    the features."""

    def said(feature, value):
        labels = (value_labels or {}).get(feature)
        return value_text(value, labels) if labels else display_value(value)
    if exp.rule is None:
        return
    left, right = st.columns(2)
    with left:
        st.subheader(rule_heading(exp))
        paper = paper_rule_note(exp)
        if paper:
            st.caption(paper)
        if getattr(exp, "counterfactual_source", None) != "minimal_change":  # no rule's conditions apply
            st.markdown(_cond_lines(getattr(exp, "recommended_rule_conditions", None) or exp.rule_conditions, titles))
        if exp.changes:
            st.markdown("**Change:** " + ", ".join(
                f"{_named(c['feature'], titles)} from {said(c['feature'], c['current'])} to "
                + (f"{said(c['feature'], c['value'])}" + (f" (the rule asks {c['condition']})" if c.get("condition") else "")
                   if "value" in c else str(c["condition"]))
                for c in exp.changes))
        if exp.keeps:
            st.markdown("**Keep:** " + ", ".join(f"{_named(k['feature'], titles)} {k['condition']}"
                                                 for k in exp.keeps))
    with right:
        st.subheader(f"Metarule {exp.metarule_id or exp.metarule}")
        st.caption(f"The region of inputs for which the rules' optimum is {exp.rule_id or 'this rule'} (the "
                   "paper's optimal rule):")
        st.markdown(_cond_lines(exp.metarule_conditions, titles))

