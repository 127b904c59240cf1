"""The actionability constraints editor in the sidebar, under the parameter form.

Per feature: free, immutable, increase only or decrease only (numeric features), a weight (a change costs that
much instead of 1), and for categorical features the allowed category moves (a multiselect of allowed targets per
source category, hidden until "Limit category moves" is ticked).  Suggestions from
:func:`tcrex.constraints.suggest_constraints` (age-like columns increase only, sex/race-like columns immutable)
are pre-filled and marked as suggestions: nothing reaches the explainer until **Apply constraints** is pressed.
Applying sets :attr:`tcrex.ui.state.active.Params.constraints`; :func:`tcrex.ui.state.active.explainer_result` then calls
``TCREx.update(constraints=...)`` on a copy of the cached explainer (the surrogate is never regrown).

The editor is a fragment: changing a widget reruns only the editor, not the page.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tcrex.codebook import match_feature
from tcrex.errors import TCRExError
from tcrex.constraints import (CATEGORICAL_KINDS, FREE, IMMUTABLE, INCREASE, KIND_LABELS, KINDS, Constraints,
                               constraint_parts, constraint_spec, constraints_from_suggestions, describe_constraint,
                               describe_constraints, kinds_for, suggest_constraints)
from tcrex.text import value_text
from tcrex.vocabulary import CATEGORICAL, NUMERIC

from ..state import session, active
from .fragments import full_rerun_if_requested, not_applied_yet, request_full_rerun
from ..state.active import FitResult, DataAndModel
from ..state.sources import InputProblem

MAX_CATEGORIES = 20  # categorical features with more categories get no transition editor


def scope_of(ws: DataAndModel) -> str:
    return ws.key()[:10]


def widget_key(scope: str, what: str, feature: str, extra: str = "") -> str:
    return f"{session.CONSTRAINT_WIDGETS}{what}_{scope}_{feature}{extra}"


def suggestions(result: FitResult | None) -> dict:
    """The suggested constraints dict (``{feature: spec}``) for the fitted features."""
    return constraints_from_suggestions(suggestion_details(result))


def suggestion_details(result: FitResult | None) -> dict:
    """:func:`tcrex.constraints.suggest_constraints` for the fitted features: ``{feature: {"constraint", "reason"}}``
    (the labels and the data dictionary's titles speak too; a feature whose actionability the dictionary declares
    gets no suggestion: the dictionary's word is applied with it)."""
    if result is None:
        return {}
    try:
        dictionary = active.active_data().dictionary
    except InputProblem:
        dictionary = None
    found = suggest_constraints(result.explainer.schema_, result.explainer.value_labels or None,
                                dictionary.titles if dictionary is not None else None)
    settled = dictionary.declared if dictionary is not None else set()
    return {f: s for f, s in found.items() if f not in settled}


def _categories(ws: DataAndModel, result: FitResult | None, feature: str) -> list:
    if result is not None:
        schema = result.explainer.schema_
        if feature in schema.names:
            return list(schema.features[schema.index(feature)].categories)
    return sorted(ws.X[feature].dropna().unique().tolist(), key=str)


def draft_spec(scope: str, ws: DataAndModel, categorical: set, categories: dict) -> dict:
    """The constraints the editor's widgets describe right now (not necessarily applied)."""
    value = session.widget_value
    spec = {}
    for f in ws.features:
        kind = value(widget_key(scope, "kind", f), FREE)
        weight = value(widget_key(scope, "w", f), 1.0) or 1.0
        transitions = {}
        if f in categorical and kind != IMMUTABLE and value(widget_key(scope, "limit", f), False):
            cats = categories.get(f, [])
            for i, c in enumerate(cats):
                others = [x for x in cats if x != c]
                chosen = value(widget_key(scope, "to", f, f"_{i}"), others)
                if set(map(str, chosen)) != set(map(str, others)):
                    transitions[str(c)] = [x.item() if hasattr(x, "item") else x for x in chosen]
        packed = constraint_spec(kind, weight, transitions)
        if packed is not None:
            spec[f] = packed
    return spec


def edited_not_applied(ws: DataAndModel, result: FitResult | None) -> bool:
    """Whether the sidebar editor's widgets (once drawn) describe other constraints than the applied ones: the
    sidebar's summary says so even while the editor is folded away."""
    scope = scope_of(ws)
    if uses_table(ws):
        return _table_edited(ws, result)
    if not all(session.has_widget(widget_key(scope, "kind", f)) for f in ws.features):
        return False
    categorical = set(ws.categorical)
    categories = {f: _categories(ws, result, f) for f in ws.features if f in categorical}
    start = {f: constraint_spec(*constraint_parts(v)) for f, v in editor_start(scope, ws, result).items()}
    return draft_spec(scope, ws, categorical, categories) != {f: v for f, v in start.items() if v is not None}


def editor_start(scope: str, ws: DataAndModel, result: FitResult | None) -> dict:
    """The constraints the editor's widgets start from (nothing edited yet): the applied ones, and until the user
    confirms, the suggestions for the other features (pre-filled and said as "suggested", never as an edit)."""
    applied = active.params().constraint_spec
    suggested = {} if session.constraints_confirmed(scope) else suggestions(result)
    return {f: applied[f] if f in applied else suggested[f] for f in ws.features
            if f in applied or suggested.get(f) is not None}


def _apply(scope: str, ws: DataAndModel, categorical: set, categories: dict, schema) -> None:
    """Apply-button callback (runs before the rerun, so every page sees the new constraints)."""
    spec = draft_spec(scope, ws, categorical, categories)
    if schema is not None:
        try:
            Constraints(schema, spec)
        except TCRExError as exc:
            session.set_constraints_message("error", f"Not applied: {exc}")
            return
    active.set_params(constraints=spec)
    session.confirm_constraints(scope)
    session.set_constraints_message("success", f"Applied: {describe_constraints(spec)}")
    request_full_rerun(session.CONSTRAINTS_RERUN)


def _reset(scope: str, ws: DataAndModel, categorical: set, categories: dict) -> None:
    """Reset-button callback: every feature free, applied at once."""
    for f in ws.features:
        session.set_widget(widget_key(scope, "kind", f), FREE)
        session.set_widget(widget_key(scope, "w", f), 1.0)
        if f in categorical:
            session.set_widget(widget_key(scope, "limit", f), False)
            for i in range(len(categories.get(f, []))):
                session.clear_widget(widget_key(scope, "to", f, f"_{i}"))
    active.set_params(constraints={})
    session.confirm_constraints(scope)
    session.set_constraints_message("success", "Constraints removed: every feature is free")
    request_full_rerun(session.CONSTRAINTS_RERUN)


@st.fragment
def editor(ws: DataAndModel, result: FitResult | None) -> None:
    """Per-feature constraints; suggestions pre-filled but applied only on "Apply constraints"."""
    full_rerun_if_requested(session.CONSTRAINTS_RERUN)  # after Apply / Reset: every page must see the new constraints
    scope = scope_of(ws)
    categorical = set(ws.categorical)
    categories = {f: _categories(ws, result, f) for f in ws.features if f in categorical}
    applied = active.params().constraint_spec
    suggested = suggestions(result)
    confirmed = session.constraints_confirmed(scope)
    starts = editor_start(scope, ws, result)
    for f in ws.features:  # first sight of this data and model: applied values, else the suggestions
        kind, weight, transitions = constraint_parts(starts.get(f))
        session.default_widget(widget_key(scope, "kind", f), kind)
        session.default_widget(widget_key(scope, "w", f), weight)
        if f in categorical:
            session.default_widget(widget_key(scope, "limit", f), bool(transitions))
            cats = categories[f]
            for i, c in enumerate(cats):
                if str(c) in {str(k) for k in transitions}:
                    allowed = next(v for k, v in transitions.items() if str(k) == str(c))
                    session.default_widget(widget_key(scope, "to", f, f"_{i}"),
                                           [x for x in cats if str(x) in {str(a) for a in allowed}])

    st.caption("What a person can actually change. **Immutable**: rules needing a change to it are not offered; "
               "**increase / decrease only**: only moves in that direction; the number is the **weight**: a change "
               "costs that much (1 = default). Applying re-derives the rules from the grown surrogate (fast).")
    pending_suggestions = {f: v for f, v in suggested.items() if f not in applied} if not confirmed else {}
    if pending_suggestions:
        st.info("**Suggested from the column names — please confirm:** " + describe_constraints(pending_suggestions)
                + ". They are pre-filled below but **not applied** until you press **Apply constraints**.",
                icon=":material/lightbulb:")
    for f in ws.features:
        is_cat = f in categorical
        c1, c2 = st.columns([2, 1], vertical_alignment="bottom", gap="small")
        kinds = KINDS if allows_direction(ws, result, f) else CATEGORICAL_KINDS
        c1.selectbox(ws.feature_name(f), list(kinds), key=widget_key(scope, "kind", f), format_func=KIND_LABELS.get)
        c2.number_input(f"weight of {f}", min_value=0.1, max_value=100.0, step=0.5, format="%.1f",
                        key=widget_key(scope, "w", f), label_visibility="collapsed",
                        help=f"Weight: the cost of changing {f} (1 = default)")
        if (f in pending_suggestions
                and session.widget_value(widget_key(scope, "kind", f)) == constraint_parts(suggested[f])[0]):
            st.caption(f":orange[**suggested:** {describe_constraint(suggested[f])} — confirm with Apply]")
        if is_cat:
            cats = categories[f]
            if len(cats) > MAX_CATEGORIES:
                st.caption(f"{len(cats)} categories: too many to edit moves here.")
                continue
            names = category_names(ws, f, cats)
            limit = st.checkbox(f"Limit {f}'s category moves", key=widget_key(scope, "limit", f),
                                disabled=session.widget_value(widget_key(scope, "kind", f)) == IMMUTABLE,
                                help="Choose, for each current category, which categories it may move to.")
            if limit and session.widget_value(widget_key(scope, "kind", f)) != IMMUTABLE:
                for i, c in enumerate(cats):
                    others = [x for x in cats if x != c]
                    session.default_widget(widget_key(scope, "to", f, f"_{i}"), others)
                    st.multiselect(f"From {names(c)} to", others, key=widget_key(scope, "to", f, f"_{i}"),
                                   format_func=names)
    draft = draft_spec(scope, ws, categorical, categories)
    message = session.take_constraints_message()
    if message:
        (st.error if message[0] == "error" else st.success)(message[1])
    if draft != applied:
        not_applied_yet(describe_constraints(draft), "Apply constraints")
    elif not message:
        st.caption(f"Applied: **{describe_constraints(applied)}**")
    schema = result.explainer.schema_ if result is not None else None
    st.button("Apply constraints", type="primary", key="con_apply", width="stretch", on_click=_apply,
              args=(scope, ws, categorical, categories, schema))
    st.button("Reset to none (every feature free)", key="con_reset", width="stretch", on_click=_reset,
              args=(scope, ws, categorical, categories), disabled=not applied and not draft)


# ============================================================================================ one-click suggestions
def apply_spec(ws: DataAndModel, spec: dict, message: str) -> None:
    """Apply ``spec`` as the constraints from a button callback (outside the editor), and make the sidebar editor
    and the table show it: their widgets are set to the new values, so nothing reads as "not applied yet"."""
    scope = scope_of(ws)
    categorical = set(ws.categorical)
    for f in ws.features:
        kind, weight, transitions = constraint_parts(spec.get(f))
        session.set_widget(widget_key(scope, "kind", f), kind)
        session.set_widget(widget_key(scope, "w", f), weight)
        if f in categorical:
            session.set_widget(widget_key(scope, "limit", f), bool(transitions))
    active.set_params(constraints=spec)
    session.confirm_constraints(scope)
    session.bump_constraints_table()
    session.set_constraints_message("success", message)
    request_full_rerun(session.CONSTRAINTS_RERUN)


def adopt_spec(ws: DataAndModel, spec: dict, message: str) -> None:
    """Apply ``spec`` as the constraints from the page script (not a callback: the editors' widgets may be drawn
    already this run, so they are forgotten, not set, and start from the applied constraints when drawn next)."""
    scope = scope_of(ws)
    session.clear_widgets(f"{session.CONSTRAINT_WIDGETS}kind_{scope}_")
    session.clear_widgets(f"{session.CONSTRAINT_WIDGETS}w_{scope}_")
    session.clear_widgets(f"{session.CONSTRAINT_WIDGETS}limit_{scope}_")
    session.clear_widgets(f"{session.CONSTRAINT_WIDGETS}to_{scope}_")
    active.set_params(constraints=spec)
    session.confirm_constraints(scope)
    session.bump_constraints_table()
    session.set_constraints_message("success", message)


def _apply_suggested(ws: DataAndModel, found: dict) -> None:
    applied = active.params().constraint_spec
    spec = {**applied, **{f: s["constraint"] for f, s in found.items() if f not in applied}}
    apply_spec(ws, spec, f"Applied: {describe_constraints(spec)}")


def _make_immutable(ws: DataAndModel, feature) -> None:
    spec = {**active.params().constraint_spec, feature: IMMUTABLE}
    apply_spec(ws, spec, f"{feature} is immutable now: no advice asks to change it")


def pending_suggestions(ws: DataAndModel, result: FitResult | None) -> dict:
    """Suggestions (with reasons) not applied yet, for features the user has not confirmed constraints for."""
    if session.constraints_confirmed(scope_of(ws)):
        return {}
    applied = active.params().constraint_spec
    return {f: s for f, s in suggestion_details(result).items() if f not in applied}


def suggestions_panel(ws: DataAndModel, result: FitResult | None, key: str) -> None:
    """The suggested constraints with their reasons and one button that applies them all (after an upload, and in
    the audit's hints). Shown until the user applies or edits constraints for this data and model."""
    found = pending_suggestions(ws, result)
    if not found:
        return
    with st.container(border=True):
        st.markdown("**Suggested actionability constraints** — advice should only ask for changes a person can "
                    "make:")
        st.markdown("\n".join(f"- {ws.feature_name(f)}: **{describe_constraint(s['constraint'])}** — {s['reason']}"
                               for f, s in found.items()))
        st.button(f"Apply these {len(found)} constraint{'s' if len(found) != 1 else ''}", type="primary",
                  key=f"{key}_apply_suggested", icon=":material/lock:", on_click=_apply_suggested,
                  args=(ws, found), help="Applied at once (the rules are re-derived, not regrown); edit or reset "
                                         "them in the sidebar's Actionability constraints.")


def immutable_button(ws: DataAndModel, feature, key: str) -> None:
    """"Mark <feature> immutable" (the audit's hint when a grouping feature is one people are told to change)."""
    if active.params().constraint_spec.get(feature) == IMMUTABLE:
        return
    st.button(f"Mark {feature} immutable", key=f"{key}_immutable_{feature}", icon=":material/lock:",
              on_click=_make_immutable, args=(ws, feature),
              help="An actionability constraint: rules that need a change to it are no longer offered.")


# ============================================================================================ many features
#: Up to this many features the sidebar holds the editor above; with more, the sidebar shows a summary and a link,
#: and the constraints are edited in one table on the Data & model page (:func:`table_editor`).
SIDEBAR_MAX_FEATURES = 10
TABLE_ANCHOR = "actionability-constraints"
TABLE_COLUMNS = ["feature", "type", "constraint", "weight", "note"]


def uses_table(ws: DataAndModel) -> bool:
    """Whether this data has too many features for the sidebar editor (the main-area table is used instead)."""
    return len(ws.features) > SIDEBAR_MAX_FEATURES


def sidebar_summary(ws: DataAndModel, result: FitResult | None) -> None:
    """The short sidebar entry for many features: what is applied, pending suggestions, and a link to the table."""
    applied = active.params().constraint_spec
    scope = scope_of(ws)
    confirmed = session.constraints_confirmed(scope)
    pending = {f: v for f, v in suggestions(result).items() if f not in applied} if not confirmed else {}
    st.caption(f"{len(ws.features)} features: the constraints are edited in a table on the Data & model page.")
    st.caption(f"Applied: **{describe_constraints(applied)}**")
    if pending:
        st.caption(f":orange[**Suggested, not applied:** {describe_constraints(pending)}]")
    st.page_link("pages/views/data_model.py", label="Edit the constraints (table)", icon=":material/table_edit:",
                 help="Data & model page, section 7")


def allows_direction(ws: DataAndModel, result: FitResult | None, feature) -> bool:
    """Whether ``feature`` may take a direction (:func:`tcrex.constraints.kinds_for`): numeric features and ordered
    categoricals (an order declared in the fitted schema) may, other categoricals only *free* or *immutable* (and
    limited category moves)."""
    return INCREASE in kinds_for(feature in set(ws.categorical), _ordered(result, feature))


def _ordered(result: FitResult | None, feature) -> bool:
    if result is None or feature not in result.explainer.schema_.names:
        return False
    return bool(getattr(result.explainer.schema_.features[result.explainer.schema_.index(feature)], "ordered", False))


#: The constraints tables: features that may take a direction (numbers, ordered categories), then the other
#: categorical features (*free* or *immutable* only: one table's choices are the same for every row, so a
#: categorical feature must never sit in a table that offers "increase only").
TABLE_PARTS = ("directed", CATEGORICAL)


def table_frame(ws: DataAndModel, result: FitResult | None, part: str | None = None) -> pd.DataFrame:
    """One row per feature: its type, constraint (applied, else the suggestion until the user confirms once),
    weight and a note (suggestion, limited category moves). ``part`` (one of :data:`TABLE_PARTS`): only the
    features of that table; None: every feature."""
    applied = active.params().constraint_spec
    suggested = suggestions(result)
    confirmed = session.constraints_confirmed(scope_of(ws))
    categorical = set(ws.categorical)
    rows = []
    for f in ws.features:
        directed = allows_direction(ws, result, f)
        if part is not None and directed != (part == "directed"):
            continue
        start = applied.get(f) if f in applied else (None if confirmed else suggested.get(f))
        kind, weight, transitions = constraint_parts(start)
        note = []
        if f not in applied and not confirmed and f in suggested:
            note.append(f"suggested: {describe_constraint(suggested[f])} — confirm with Apply")
        if transitions:
            note.append("limited category moves (kept)")
        kind_type = ("ordered categories" if f in categorical else NUMERIC) if directed else CATEGORICAL
        rows.append({"feature": str(f), "type": kind_type,
                     "constraint": KIND_LABELS[kind], "weight": float(weight), "note": "; ".join(note)})
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def table_key(ws: DataAndModel, part: str = "directed") -> str:
    """A constraints table's widget key (a new key after every Apply, so the table starts from what applies)."""
    name = "con_table" if part == "directed" else "con_cattable"
    return f"{name}_{scope_of(ws)}_{session.constraints_table_version()}"


def _table_edited(ws: DataAndModel, result: FitResult | None) -> bool:
    """Whether the constraints tables (while drawn: their edits live in their widget state) describe other
    constraints than they started from: each table's start with the user's edits to "constraint" and "weight"."""
    if not any(session.has_widget(table_key(ws, part)) for part in TABLE_PARTS):
        return False
    starts, edits = [], []
    for part in TABLE_PARTS:
        start = table_frame(ws, result, part)
        edited = start.copy()
        for row, changes in ((session.widget_value(table_key(ws, part), None) or {}).get("edited_rows")
                             or {}).items():
            for column in ("constraint", "weight"):
                if column in changes and 0 <= int(row) < len(edited):
                    edited.at[int(row), column] = changes[column]
        starts.append(start)
        edits.append(edited)
    return table_spec(ws, pd.concat(edits)) != table_spec(ws, pd.concat(starts))


def table_spec(ws: DataAndModel, edited: pd.DataFrame) -> dict:
    """The engine's constraints dict from the edited table (category-move limits already applied are kept while
    the feature's kind is unchanged)."""
    applied = active.params().constraint_spec
    by_label = {v: k for k, v in KIND_LABELS.items()}
    names = {str(f): f for f in ws.features}
    spec = {}
    for row in edited.itertuples(index=False):
        f = names[row.feature]
        kind = by_label.get(row.constraint, "free")
        weight = float(row.weight) if row.weight == row.weight and row.weight else 1.0
        old_kind, _, transitions = constraint_parts(applied.get(f))
        packed = constraint_spec(kind, weight, transitions if kind == old_kind and kind != "immutable" else {})
        if packed is not None:
            spec[f] = packed
    return spec


def category_names(ws: DataAndModel, feature, categories: list):
    """How the transition boxes name a category: "no checking account (A14)" when the codebook labels it
    (:func:`tcrex.text.value_text`, matched by :func:`tcrex.codebook.match_feature`); the boxes keep the
    categories themselves as their values, so the constraints hold codes."""
    labels, _ = match_feature(str(feature), True, list(categories), ws.data.value_labels.get(feature) or {})
    return lambda value: value_text(value, labels)


def special_codes_of(result: FitResult | None, feature) -> tuple:
    """A numeric feature's special codes (``schema_``; -7/-8/-9 "no record"), () without a fit or codes."""
    if result is None or feature not in result.explainer.schema_.names:
        return ()
    return tuple(result.explainer.schema_.features[result.explainer.schema_.index(feature)].special_codes or ())


def code_labels(ws: DataAndModel, feature, codes) -> dict:
    """The codebook's labels of a numeric feature's special ``codes`` (matched as the engine matches them)."""
    labels, _ = match_feature(str(feature), False, [], ws.data.value_labels.get(feature) or {})
    return {c: labels[c] for c in codes if c in labels}


def moves_spec(applied: dict, feature, categories: list, chosen: dict) -> dict:
    """``applied`` with ``feature``'s category moves set to ``chosen`` (``{category: allowed targets}``; a category
    allowed to move anywhere is left out), keeping its kind and weight."""
    kind, weight, _ = constraint_parts(applied.get(feature))
    transitions = {}
    for c in categories:
        others = [x for x in categories if x != c]
        allowed = chosen.get(c, others)
        if set(map(str, allowed)) != set(map(str, others)):
            transitions[str(c)] = [x.item() if hasattr(x, "item") else x for x in allowed]
    spec = {f: v for f, v in applied.items() if f != feature}
    packed = constraint_spec(kind, weight, transitions)
    if packed is not None:
        spec[feature] = packed
    return spec


def moves_editor(ws: DataAndModel, result: FitResult | None, scope: str) -> None:
    """Below the table: limit one categorical feature's category moves (per current category, where it may go)."""
    categorical = [f for f in ws.features if f in set(ws.categorical)]
    if not categorical:
        return
    with st.expander("Limit category moves (categorical features)", icon=":material/swap_horiz:"):
        f = st.selectbox("Feature", categorical, key=f"con_moves_feature_{scope}")
        cats = _categories(ws, result, f)
        applied = active.params().constraint_spec
        kind, _, transitions = constraint_parts(applied.get(f))
        if kind == "immutable":
            st.caption(f"`{f}` is immutable: it cannot move at all.")
            return
        if len(cats) > MAX_CATEGORIES:
            st.caption(f"{len(cats)} categories: too many to edit moves here.")
            return
        chosen, names = {}, category_names(ws, f, cats)
        with st.form(f"con_moves_form_{scope}_{f}"):
            for i, c in enumerate(cats):
                others = [x for x in cats if x != c]
                old = next((v for k, v in transitions.items() if str(k) == str(c)), None)
                start = others if old is None else [x for x in others if str(x) in {str(a) for a in old}]
                chosen[c] = st.multiselect(f"From {names(c)} to", others, default=start, format_func=names,
                                           key=f"con_moves_{scope}_{f}_{i}")
            go = st.form_submit_button(f"Apply {f}'s moves", type="primary")
        if go:
            spec = moves_spec(applied, f, cats, chosen)
            try:
                if result is not None:
                    Constraints(result.explainer.schema_, spec)
            except TCRExError as exc:
                session.set_constraints_message("error", f"Not applied: {exc}")
                st.rerun()
            active.set_params(constraints=spec)
            session.confirm_constraints(scope)
            session.bump_constraints_table()
            session.set_constraints_message("success", f"Applied: {describe_constraints(spec)}")
            st.rerun()


@st.fragment
def table_editor(ws: DataAndModel, result: FitResult | None) -> None:
    """All features' constraints in two tables (:data:`TABLE_PARTS`: a categorical feature is offered only *free* or
    *immutable*, never a direction); nothing is applied until **Apply constraints**, and until then a
    "Not applied yet" note lists what the edited tables would apply (a fragment, as the sidebar editor: an edit
    reruns only this table, so the note follows every edit; inside a form it could not, and an edited table said
    nothing while the applied set differed)."""
    full_rerun_if_requested(session.CONSTRAINTS_RERUN)
    scope = scope_of(ws)
    applied = active.params().constraint_spec
    st.caption("What a person can actually change, one row per feature. **Immutable**: rules needing a change to "
               "it are not offered; **increase / decrease only** (numbers and ordered categories): only moves in "
               "that direction; categorical features are **free** or **immutable**, their moves between categories "
               "limited below; **weight**: a change costs that much (1 = default). Nothing is applied until you "
               "press **Apply constraints**; applying re-derives the rules from the grown surrogate (fast).")
    frames = {part: table_frame(ws, result, part) for part in TABLE_PARTS}
    if any(f["note"].str.startswith("suggested").any() for f in frames.values()):
        st.info("**Suggested from the column names — please confirm:** the rows marked *suggested* are pre-filled "
                "but **not applied** until you press **Apply constraints**.", icon=":material/lightbulb:")
    edits = []
    for part, frame in frames.items():
        if frame.empty:
            continue
        kinds = KINDS if part == "directed" else CATEGORICAL_KINDS
        if part == CATEGORICAL:
            st.markdown("**Categorical features** — free or immutable (no order to move along)")
        elif not frames[CATEGORICAL].empty:
            st.markdown("**Numeric features**" + (" and ordered categories" if (frame["type"] != NUMERIC).any()
                                                   else ""))
        edits.append(st.data_editor(
            frame, hide_index=True, width="stretch", key=table_key(ws, part),
            disabled=["feature", "type", "note"], height=min(38 + 35 * len(frame), 720),
            column_config={
                "constraint": st.column_config.SelectboxColumn(
                    "constraint", options=[KIND_LABELS[k] for k in kinds], required=True,
                    help="free, immutable, or increase / decrease only" if part == "directed"
                    else "free or immutable (limit the moves between categories below the tables)"),
                "weight": st.column_config.NumberColumn("weight", min_value=0.1, max_value=100.0, step=0.5,
                                                        format="%.1f", help="The cost of changing it (1 = default)"),
                "note": st.column_config.TextColumn("note", width="large")}))
    edited = pd.concat(edits) if edits else frames["directed"]
    draft = table_spec(ws, edited)
    message = session.take_constraints_message()
    if message:
        (st.error if message[0] == "error" else st.success)(message[1])
    if draft != applied:
        not_applied_yet(describe_constraints(draft), "Apply constraints")
    elif applied and not message:
        st.caption(f"Applied: **{describe_constraints(applied)}**")
    c1, c2 = st.columns(2)
    apply = c1.button("Apply constraints", type="primary", width="stretch", key=f"con_table_apply_{scope}")
    reset = c2.button("Reset to none (every feature free)", width="stretch", key=f"con_table_reset_{scope}",
                      disabled=not applied and not draft)
    moves_editor(ws, result, scope)
    if not (apply or reset):
        return
    spec = {} if reset else draft
    if result is not None and spec:
        try:
            Constraints(result.explainer.schema_, spec)
        except TCRExError as exc:  # said here, at once: a fragment-scoped rerun fails when the app ran whole
            st.error(f"Not applied: {exc}", icon=":material/error:")
            return
    active.set_params(constraints=spec)
    session.confirm_constraints(scope)
    session.bump_constraints_table()
    session.set_constraints_message("success", "Constraints removed: every feature is free" if reset
                                    else f"Applied: {describe_constraints(spec)}")
    st.rerun()  # the whole app: every page and the sidebar must see the new constraints
