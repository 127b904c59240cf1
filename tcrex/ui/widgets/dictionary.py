"""The data dictionary editor on the Data & model page: what each column means, declared by the user.

Per feature one table row: its **title** ("repayment status last month"), kind, unit, **special codes** with their
meanings (values of a numeric column that are codes, not numbers: ``-2 = no consumption; -1 = paid in full``) and
how many rows hold each, **actionability** (declared: free, immutable, a direction for numbers and ordered
categories) and the **history** flag (the column describes the past: immutable). Numeric and categorical features
sit in two tables, so a categorical feature is never offered a direction. Upload and download read and write the
dictionary through :mod:`tcrex.dictionary` (extended codebook CSV, JSON, Frictionless Table Schema), the one owner
of the format; the codes the data suggests (:func:`tcrex.dictionary.suggest`) are findings with one click each.

The dictionary is kept per data content (:func:`tcrex.ui.state.active.set_dictionary`) and saved with the
workspace; every page then names features by their titles (:meth:`tcrex.ui.state.sources.ActiveData.feature_name`)
and the fit takes it (:func:`tcrex.ui.state.active.engine_dictionary`: ``TCREx(dictionary=...)``).
"""
from __future__ import annotations

import io
import json
from dataclasses import replace

import pandas as pd
import streamlit as st

from tcrex.codebook import match_feature
from tcrex.dictionary import DataDictionary, FeatureEntry, read_dictionary, suggest, value_key
from tcrex.errors import ParameterError, TCRExError
from tcrex.spreadsheet import to_csv
from tcrex.text import format_number, value_text
from tcrex.vocabulary import CATEGORICAL, NUMERIC

from ..state import active, caching, session, sources
from ..state.active import DataAndModel, FitResult
from . import constraints

NOT_DECLARED = "not declared"
#: The actionability a row may declare, in words (numeric rows: every one; categorical rows: no direction).
ACTIONS = {NOT_DECLARED: None, "free": "free", "immutable": "immutable", "increase only": "increase_only",
           "decrease only": "decrease_only"}
CATEGORICAL_ACTIONS = [NOT_DECLARED, "free", "immutable"]
NUMERIC_COLUMNS = ["feature", "title", "unit", "special codes", "rows per code", "actionability", "history",
                   "description"]
CATEGORICAL_COLUMNS = ["feature", "title", "kind", "actionability", "history", "description"]


# ============================================================================================ reading the state
def entry_of(ws: DataAndModel, feature) -> FeatureEntry:
    """The user's entry of ``feature`` (an empty one when the dictionary does not describe it)."""
    d = ws.data.dictionary
    return (d.get(str(feature)) if d is not None else None) or FeatureEntry(str(feature))


def detected_codes(result: FitResult | None, feature) -> list:
    """The codes the fitted engine treats ``feature`` with (declared or detected), [] without a fit."""
    return list(constraints.special_codes_of(result, feature))


def code_counts(ws: DataAndModel, feature, codes) -> str:
    """How many rows hold each code ("−2: 612 · −1: 803 · 0: 2,611"), over every row of the data."""
    if not codes:
        return ""
    column = pd.to_numeric(ws.X[feature], errors="coerce")
    return " · ".join(f"{format_number(c)}: {int((column == float(c)).sum()):,}" for c in codes)


def codes_text(ws: DataAndModel, feature, codes) -> str:
    """The codes of a feature as the table's cell: "-2 = no consumption; -1 = paid in full; 0"."""
    labels, _ = match_feature(str(feature), False, [], ws.data.value_labels.get(feature) or {})
    out = []
    for c in codes:
        label = next((lab for v, lab in labels.items() if value_key(v) == value_key(c)), None)
        out.append(f"{format_number(c)} = {label}" if label else format_number(c))
    return "; ".join(out)


def parse_codes(feature, text: str, labels: dict) -> tuple:
    """The codes a cell names ("-2 = no consumption; -1; 0 = revolving"), each with its meaning (typed, else the
    codebook's label); raises :class:`tcrex.errors.ParameterError` saying which part is not a number."""
    out = []
    for part in str(text or "").replace("\n", ";").split(";"):
        if not part.strip():
            continue
        value, _, meaning = part.partition("=")
        try:
            number = float(value.strip().replace("−", "-"))
        except ValueError:
            raise ParameterError(f"{feature}: the special code {value.strip()!r} is not a number (write codes as "
                                 "'-2 = no consumption; -1 = paid in full')") from None
        number = int(number) if number == int(number) else number
        meaning = meaning.strip() or next((lab for v, lab in labels.items() if value_key(v) == value_key(number)),
                                          None)
        out.append((number, meaning or None))
    return tuple(out)


def _cell(value) -> str:
    return "" if value is None or (isinstance(value, float) and value != value) else str(value).strip()


def frames(ws: DataAndModel, result: FitResult | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two tables' rows: numeric features (with codes and their row counts: declared, else detected by the fit,
    else suggested by the data), then categorical features."""
    categorical = set(ws.categorical)
    action_words = {v: k for k, v in ACTIONS.items()}
    suggested = {s.feature: list(s.value) for s in code_suggestions(ws)}
    numeric, cats = [], []
    for f in ws.features:
        e = entry_of(ws, f)
        base = {"feature": str(f), "title": e.title or "", "actionability": action_words.get(e.actionability,
                                                                                               NOT_DECLARED),
                "history": bool(e.history), "description": e.description or ""}
        if f in categorical:
            cats.append({**base, "kind": "ordered categories" if e.kind == "ordered" else CATEGORICAL})
            continue
        detected = detected_codes(result, f)
        codes = e.special_codes or detected or suggested.get(f, [])
        declared = bool(e.codes)
        note = "" if declared or not codes else " (detected, not declared)" if detected else " (suggested above)"
        numeric.append({**base, "unit": e.unit or "", "special codes": codes_text(ws, f, codes) if declared else "",
                        "rows per code": code_counts(ws, f, codes) + note})
    return pd.DataFrame(numeric, columns=NUMERIC_COLUMNS), pd.DataFrame(cats, columns=CATEGORICAL_COLUMNS)


def dictionary_from_tables(ws: DataAndModel, numeric: pd.DataFrame, cats: pd.DataFrame) -> DataDictionary:
    """The user's dictionary with the edited tables' rows in place of its entries (entries that declare nothing
    are left out); raises :class:`tcrex.errors.ParameterError` (nothing applied) on a bad cell."""
    names = {str(f): f for f in ws.features}
    d = ws.data.dictionary or DataDictionary()
    for table, kind in ((numeric, NUMERIC), (cats, CATEGORICAL)):
        for row in table.to_dict("records"):
            f = names[row["feature"]]
            e = entry_of(ws, f)
            action = ACTIONS.get(_cell(row["actionability"]) or NOT_DECLARED)
            changes = {"title": _cell(row["title"]) or None, "description": _cell(row["description"]) or None,
                       "actionability": action, "history": bool(row["history"])}
            if kind == NUMERIC:
                labels = ws.data.value_labels.get(f) or {}
                codes = parse_codes(f, row["special codes"], labels)
                keys = {value_key(c) for c, _ in codes}
                changes.update(unit=_cell(row["unit"]) or None, codes=codes,
                               labels=tuple((v, lab) for v, lab in e.labels if value_key(v) not in keys))
            entry = replace(e, **changes)
            if entry.is_empty() or entry == FeatureEntry(entry.name, kind=entry.kind):
                d = DataDictionary(tuple(x for x in d.entries if x.name != entry.name), d.class_names)
            else:
                d = d.replace_entry(entry)
    return d


def full_dictionary(ws: DataAndModel) -> tuple[DataDictionary, list]:
    """What the download holds: every feature with its kind and its labels in force (the codebook's and the
    dictionary's), the user's entries for titles, codes and actionability (:func:`complete_dictionary`)."""
    return complete_dictionary(ws.features, ws.categorical, ws.X, ws.data.value_labels or {}, ws.data.dictionary)


def complete_dictionary(features, categorical, X: pd.DataFrame, value_labels: dict,
                        dictionary: DataDictionary | None) -> tuple[DataDictionary, list]:
    """``dictionary``'s entries for ``features`` completed with each feature's kind (``categorical`` or numeric)
    and the codebook's labels (``value_labels``, matched to the values of ``X`` as the engine matches them) for
    the values the entry neither labels nor declares as codes. Returns the dictionary and the codebook labels a
    dictionary cannot hold (``(feature, value)``: HTML markup in a label, which the codebook shows escaped), left
    out of it, never raised."""
    categorical = set(categorical)
    entries, skipped = [], []
    for f in features:
        e = (dictionary.get(str(f)) if dictionary is not None else None) or FeatureEntry(str(f))
        is_cat = f in categorical
        matched, _ = match_feature(str(f), is_cat, list(X[f].dropna().unique()) if is_cat else [],
                                   value_labels.get(f) or {})
        have = {value_key(v) for v, _ in e.labels} | {value_key(c) for c, _ in e.codes}
        labels = list(e.labels)
        for v, lab in matched.items():
            if value_key(v) in have:
                continue
            try:
                FeatureEntry(str(f), labels=((v, lab),))
            except TCRExError:
                skipped.append((f, v))
                continue
            labels.append((v, lab))
        entries.append(replace(e, kind=e.kind or (CATEGORICAL if is_cat else NUMERIC), labels=tuple(labels)))
    return DataDictionary(tuple(entries), dictionary.class_names if dictionary is not None else ()), skipped


def csv_download(d: DataDictionary) -> bytes:
    """The dictionary as the extended codebook CSV, formula-like cells neutralised (:mod:`tcrex.spreadsheet`)."""
    frame = pd.read_csv(io.StringIO(d.to_csv()), dtype=str, keep_default_na=False)
    frame["value"] = frame["value"].map(_number_or_text).astype(object)  # a code -2 is a number, not a formula
    return to_csv(frame, index=False).encode("utf-8")


def _number_or_text(text: str):
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number == int(number) and abs(number) < 2**53 else number


def table_schema_download(d: DataDictionary) -> bytes:
    return json.dumps(d.to_table_schema(), indent=2, ensure_ascii=False).encode("utf-8")


# ============================================================================================ applying
def apply(ws: DataAndModel, d: DataDictionary, what: str) -> None:
    """Use ``d`` as this data's dictionary from now on; the actionability it declares becomes the applied
    constraints of those features (the others keep theirs)."""
    before = ws.data.dictionary or DataDictionary()
    active.set_dictionary(ws.data.key, d)
    settled = before.declared | d.declared  # what the dictionary says (or said) settles these features
    declared = {f: v for f, v in d.constraints.items() if f in ws.features}
    applied = active.params().constraint_spec
    spec = {**{f: v for f, v in applied.items() if f not in settled}, **declared}
    message = what + (f"; constraints applied: {constraints.describe_constraints(spec)}" if spec != applied else "")
    if spec != applied:
        constraints.adopt_spec(ws, spec, message)
    session.set_notice(message)


def code_suggestions(ws: DataAndModel) -> list:
    """The special codes the data suggests for numeric features that declare none (:func:`tcrex.dictionary.suggest`
    on every row, given the user's dictionary), once per data and dictionary."""
    d = ws.data.dictionary
    key = sources.sha256("codes", ws.data.key, list(ws.X.columns), sorted(ws.categorical),
                         d.to_json() if d is not None else "")
    categorical = set(ws.categorical)

    def build():
        declared = DataDictionary(tuple(
            replace(entry_of(ws, f), kind=CATEGORICAL if f in categorical else NUMERIC, labels=())
            for f in ws.features if entry_of(ws, f).codes or f in categorical))
        return [s for s in suggest(ws.X, declared).of("codes") if s.feature in ws.features]
    return caching.cached("dictionary_suggestions", key, build)


def _accept_codes(ws: DataAndModel, found: list) -> None:
    """One-click callback: declare the suggested codes (meanings from the codebook's labels)."""
    d = ws.data.dictionary or DataDictionary()
    for s in found:
        e = entry_of(ws, s.feature)
        labels = ws.data.value_labels.get(s.feature) or {}
        codes = tuple((c, next((lab for v, lab in labels.items() if value_key(v) == value_key(c)), None))
                      for c in s.value)
        keys = {value_key(c) for c, _ in codes}
        kept = tuple((v, lab) for v, lab in e.labels if value_key(v) not in keys)
        try:
            entry = replace(e, codes=codes, labels=kept)
        except TCRExError:  # a codebook label a dictionary cannot hold (markup): the code without its meaning
            entry = replace(e, codes=tuple((c, None) for c, _ in codes), labels=kept)
        d = d.replace_entry(entry)
    active.set_dictionary(ws.data.key, d)
    session.set_notice("Special codes declared: " + "; ".join(
        f"{ws.data.feature_name(s.feature)}: {', '.join(format_number(c) for c in s.value)}" for s in found)
        + ". Advice never moves these features into or out of a code")


# ============================================================================================ drawing
def section(ws: DataAndModel, result: FitResult | None) -> None:
    """The dictionary: code findings, the two tables (applied with one button), upload and download."""
    st.caption("What each column means: a **title** every page uses (“repayment status last month (status_1)”), "
               "the **special codes** of a numeric column (values that are codes, not amounts: −2 = no "
               "consumption), how many rows hold each, and the **actionability** the column declares "
               "(*history*: it describes the past, so advice never changes it). Nothing changes until you press "
               "**Apply the dictionary**.")
    findings(ws)
    numeric, cats = frames(ws, result)
    with st.form("dictionary_form"):
        edited_numeric = edited_cats = None
        if not numeric.empty:
            st.markdown("**Numeric features**")
            edited_numeric = st.data_editor(
                numeric, hide_index=True, width="stretch", key="dictionary_numeric", num_rows="fixed",
                disabled=["feature", "rows per code"], height=min(38 + 35 * len(numeric), 560),
                column_config={
                    "title": st.column_config.TextColumn("title", max_chars=200),
                    "unit": st.column_config.TextColumn("unit", max_chars=40),
                    "special codes": st.column_config.TextColumn(
                        "special codes", max_chars=2000, width="medium",
                        help="Values that are codes, not numbers, each with its meaning: "
                             "-2 = no consumption; -1 = paid in full"),
                    "rows per code": st.column_config.TextColumn("rows per code", width="medium"),
                    "actionability": st.column_config.SelectboxColumn("actionability", options=list(ACTIONS),
                                                                      required=True),
                    "history": st.column_config.CheckboxColumn("history",
                                                               help="Describes the past: immutable"),
                    "description": st.column_config.TextColumn("description", max_chars=2000)})
        if not cats.empty:
            st.markdown("**Categorical features** — free or immutable (no order to move along)")
            edited_cats = st.data_editor(
                cats, hide_index=True, width="stretch", key="dictionary_categorical", num_rows="fixed",
                disabled=["feature", "kind"], height=min(38 + 35 * len(cats), 420),
                column_config={
                    "title": st.column_config.TextColumn("title", max_chars=200),
                    "actionability": st.column_config.SelectboxColumn("actionability",
                                                                      options=CATEGORICAL_ACTIONS, required=True),
                    "history": st.column_config.CheckboxColumn("history", help="Describes the past: immutable"),
                    "description": st.column_config.TextColumn("description", max_chars=2000)})
        go = st.form_submit_button("Apply the dictionary", type="primary")
    if go:
        try:
            d = dictionary_from_tables(ws, numeric if edited_numeric is None else edited_numeric,
                                       cats if edited_cats is None else edited_cats)
        except TCRExError as exc:
            st.error(f"The dictionary was not applied: {exc}", icon=":material/error:")
        else:
            apply(ws, d, "Data dictionary applied")
            st.rerun()
    files(ws)


def findings(ws: DataAndModel) -> None:
    """The codes the data suggests, each a question with one button (and one button for all)."""
    found = code_suggestions(ws)
    if not found:
        return
    with st.container(border=True):
        st.markdown("**Values that look like codes, not numbers** — as numbers, a rule may span them and advice "
                    "may move a value into one (“change it to −2”):")
        for s in found:
            labels, _ = match_feature(str(s.feature), False, [], ws.data.value_labels.get(s.feature) or {})
            shown = ", ".join(value_text(float(c), labels).replace("-", "−") for c in s.value)
            left, right = st.columns([5, 1], vertical_alignment="center")
            left.markdown(f"Treat **{shown}** of **{ws.data.feature_name(s.feature)}** as codes?  \n"
                          f":gray[{s.reason}]")
            right.button("Treat as codes", key=f"dictionary_codes_{s.feature}", on_click=_accept_codes,
                         args=(ws, [s]), width="stretch")
        if len(found) > 1:
            st.button(f"Treat all {len(found)} as codes", key="dictionary_codes_all", type="primary",
                      on_click=_accept_codes, args=(ws, found), icon=":material/done_all:")


def files(ws: DataAndModel) -> None:
    """Download the dictionary (CSV, Table Schema JSON); upload one (CSV, JSON, Table Schema) as untrusted input."""
    full, skipped = full_dictionary(ws)
    c1, c2, c3 = st.columns([2, 2, 2], vertical_alignment="bottom")
    opened = c1.toggle("Upload a data dictionary", key="dictionary_upload_open")
    c2.download_button("Download the dictionary (CSV)", data=csv_download(full), file_name="dictionary.csv",
                       mime="text/csv", on_click="ignore", key="dictionary_download_csv")
    c3.download_button("Download as Table Schema (JSON)", data=table_schema_download(full),
                       file_name="dictionary.schema.json", mime="application/json", on_click="ignore",
                       key="dictionary_download_schema")
    if skipped:
        st.caption(f"{len(skipped)} codebook label(s) hold HTML markup, which a dictionary file never holds; they "
                   "are left out of the downloads: " + ", ".join(f"{f} = {v}" for f, v in skipped[:5])
                   + (" …" if len(skipped) > 5 else ""))
    upload = st.file_uploader("A data dictionary: CSV feature,value,label[,kind] (kind: label, special, title, "
                              "description, unit, type, actionability, history), its JSON, or a Frictionless "
                              "Table Schema", type=["csv", "json"], key="dictionary_upload") if opened else None
    if upload is None:
        if ws.data.dictionary is not None and st.button("Remove the data dictionary", key="dictionary_reset"):
            active.set_dictionary(ws.data.key, None)
            session.set_notice("Data dictionary removed (the codebook's labels stay)")
            st.rerun()
        return
    try:
        d = read_dictionary(upload.getvalue(), upload.name)
    except TCRExError as exc:
        st.error(f"The dictionary cannot be used: {exc}", icon=":material/error:")
        return
    try:
        d, notes = fitted(ws, d)
    except TCRExError as exc:
        st.error(f"The dictionary cannot be used with this data: {exc}", icon=":material/error:")
        return
    for note in notes:
        st.warning(f"{upload.name}: {note}", icon=":material/label_off:")
    st.info(f"{upload.name}: {len(d)} column(s) described — {len(d.titles)} title(s), special codes for "
            f"{len(d.special_codes)} column(s), actionability declared for {len(d.declared)} column(s).",
            icon=":material/menu_book:")
    if st.button("Use this dictionary", key="dictionary_use", disabled=not len(d), type="primary"):
        apply(ws, d, f"Data dictionary {upload.name} applied")
        st.rerun()


def fitted(ws: DataAndModel, d: DataDictionary) -> tuple[DataDictionary, list]:
    """The uploaded dictionary's entries for this data's features, and notes on what was left out (columns the
    data lacks; codes declared for a categorical column). Raises TCRExError on an entry that contradicts the
    data's typing."""
    features = {str(f) for f in ws.features}
    categorical = {str(f) for f in ws.categorical}
    unknown = [e.name for e in d.entries if e.name not in features]
    notes = []
    if unknown:
        notes.append(f"{len(unknown)} column(s) are not features of this data and are left out: "
                     + ", ".join(unknown[:8]) + (" …" if len(unknown) > 8 else ""))
    coded = [e.name for e in d.entries if e.name in categorical and e.codes]
    if coded:
        notes.append("special codes are for numeric columns; these are categorical here, so their codes are "
                     "used as labels only: " + ", ".join(coded[:8]))
    entries = []
    for e in d.entries:
        if e.name not in features:
            continue
        if e.name in categorical and e.codes:
            e = replace(e, codes=(), labels=tuple(e.labels) + tuple((v, m) for v, m in e.codes if m))
        if e.name in categorical and e.actionability in ("increase_only", "decrease_only") and e.kind != "ordered":
            raise ParameterError(f"{e.name!r} is categorical in this data: it may be free or immutable, never "
                                 f"{e.actionability.replace('_', ' ')}")
        entries.append(e)
    return DataDictionary(tuple(entries), d.class_names), notes
