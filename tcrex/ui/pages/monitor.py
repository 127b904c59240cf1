"""The Monitor page's pieces: which monitor this workspace follows (start one on the active analysis, or open one of
the store by name), its history read from the store (:class:`tcrex.monitor.Monitor`, the dashboard's own
workspace store), the alerts in plain words, the people who lost recourse at the last release (searchable, each
opening on the Individual page under either version), and "register this model as a new version" for the model
of the Data & model page. A read-only link shows everything and changes nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from tcrex import datasets
from tcrex.errors import TCRExError
from tcrex.monitor import STATUS_TEXT, Monitor, ModelSource

from . import audit
from ..state import active, caching, session, workspace
from ..state.active import DataAndModel, FitResult
from ..widgets.components import MAX_TABLE_ROWS

#: The id column of a monitor started on the dashboard's data: each person is a row of that data.
ROW_ID = "row"
#: What "lost recourse" means on this page: they held verified advice, the new model rejects it, no other
#: verified advice was found for them.
LOST = "lost recourse (advice invalidated, none verified now)"
SHOWN = {LOST: None, **{s: s for s in STATUS_TEXT}}


@st.cache_resource(show_spinner=False, max_entries=4)
def _monitor_of(store_id: int, _db) -> Monitor:
    # keyed on the store object (cached by workspace.store() for as long as the server runs): the store itself
    # is not hashed, and a Monitor of another store must never answer for this one
    return Monitor(_db)


def monitor() -> Monitor:
    """The monitors of the dashboard's workspace store (SQLite in TCREX_STATE_DIR, or TCREX_STORE): the server's
    one store, so one Monitor per server."""
    db = workspace.store()
    return _monitor_of(id(db), db)


def read_only() -> bool:
    bound = workspace.binding()
    return bool(bound is not None and bound.read_only)


def chosen() -> str | None:
    return session.monitor_choice().get("name")


def forget() -> None:
    session.set_monitor_choice({})
    session.set_individual_under_version(None)


# ============================================================================================ the active model's file
def active_model_file(ws: DataAndModel) -> ModelSource | None:
    """The model of the Data & model page as a model file (a monitor knows every version by its file's SHA-256):
    the bundled model or an uploaded file; None for a model trained in the app or a column of outputs."""
    spec = ws.model.spec
    if spec.kind == "bundled":
        path = datasets.SAMPLE_DATA_DIR / datasets.LOANS_MODEL
        return ModelSource(path.read_bytes(), path.name, {"kind": "dashboard", "text": f"bundled model {path.name}"})
    if spec.kind == "upload":
        kept = active.blob("model", spec.digest)
        if kept is None:
            return None
        _, filename, data = kept
        return ModelSource(data, filename, {"kind": "dashboard", "text": f"uploaded on Data & model: {filename}"})
    return None


def _why_no_file(ws: DataAndModel) -> str:
    kind = ws.model.spec.kind
    if kind == "train":
        return ("the active model was trained in the app and has no file; a monitor knows each version by its model "
                "file's SHA-256 — save the model (XGBoost JSON, skops, ONNX) and upload it on the Data & model page")
    if kind == "column":
        return "the active model is a column of outputs: there is no model to re-check advice on"
    return "the uploaded model file is no longer in this session; upload it again on the Data & model page"


# ============================================================================================ choosing
def choose(ws: DataAndModel, result: FitResult) -> str | None:
    """The monitor this workspace follows, or None after drawing the ways to get one."""
    name = chosen()
    names = _names()
    if name is not None and name in names:
        return name
    if name is not None:
        st.warning(f"The monitor **{name}** is no longer in the store.", icon=":material/warning:")
        if not read_only():
            forget()
    if read_only():
        st.info("This read-only link follows no monitor.", icon=":material/visibility:")
        return None
    start, open_ = st.tabs(["Start monitoring this analysis", "Open a monitor of the store"])
    with start:
        start_form(ws, result)
    with open_:
        open_form(names)
    return None


def _names() -> list[str]:
    try:
        return monitor().names()
    except TCRExError as exc:
        st.error(f"The monitor store cannot be read: {exc}", icon=":material/error:")
        return []


def open_form(names: list[str]) -> None:
    listed = workspace.listing_allowed()
    with st.form("monitor_open"):
        if listed and names:
            name = st.selectbox("Monitor", names, key="monitor_open_pick")
        else:
            name = st.text_input("Monitor name (as given to `tcrex monitor init --name`)", key="monitor_open_name")
        go = st.form_submit_button("Open this monitor", icon=":material/folder_open:")
    if go and name:
        if name not in names:
            st.warning(f"No monitor named **{name}** in this store.", icon=":material/search_off:")
            return
        session.set_monitor_choice({"name": name})
        st.rerun()


def start_form(ws: DataAndModel, result: FitResult) -> None:
    """Start a monitor on the active analysis: its people are the rows of the active data, its rules the active
    fit's (with its fit rows as reference rows), its first version the active model."""
    source = active_model_file(ws)
    if source is None:
        st.info(f"Monitoring needs a model file: {_why_no_file(ws)}.", icon=":material/info:")
        return
    target, target_label = audit.target_controls(ws, result, key="monitor")
    columns = audit.group_columns(ws)
    default = audit.default_column(ws, columns)
    with st.form("monitor_start"):
        st.caption(f"Follows the {len(ws.X):,} rows of the active data under the active fit's rules, towards "
                   f"**{target_label}**; the first version is the active model ({source.origin_text}).")
        c1, c2 = st.columns(2)
        name = c1.text_input("Monitor name", value=f"{ws.data.spec.name or 'analysis'} monitor", key="monitor_name")
        label = c2.text_input("Label of this first version", value="v1", key="monitor_first_label")
        groups = st.multiselect("Report on groups by", columns, default=[default] if default else [],
                                key="monitor_groups", format_func=lambda c: f"{ws.feature_name(c)}  ({audit.column_role(ws, c)})")
        both = st.checkbox("Also their intersection (every combination of the chosen columns)", key="monitor_cross")
        go = st.form_submit_button("Start monitoring", icon=":material/monitor_heart:", type="primary")
    if not go:
        return
    people, groupings = people_frame(ws, groups)
    if both and len(groupings) > 1:
        groupings.append(list(groupings))
    try:
        with st.spinner(f"Verifying the advice of {len(people):,} people under {label} ..."):
            monitor().init(name.strip(), rules=result.explainer, people=people, id_column=ROW_ID, model=source,
                           version=label.strip(), groups=groupings, target=target, class_names=ws.class_names,
                           allow_pickle=active.allow_pickle())
    except TCRExError as exc:
        st.warning(f"The monitor cannot start: {exc}", icon=":material/warning:")
        return
    session.set_monitor_choice({"name": name.strip(), "fit_key": result.key})
    st.rerun()


def people_frame(ws: DataAndModel, groups: list[str]) -> tuple[pd.DataFrame, list]:
    """The active data's rows as a monitor's people: the row label as the id, the features, and each grouping's
    values (a numeric column with many values as its quartiles, in a column of its own)."""
    people = ws.X.copy()
    people.insert(0, ROW_ID, ws.X.index.to_numpy())
    groupings = []
    for c in groups:
        values, binned = audit.group_values(ws, c)
        column = f"{c} (quartile)" if binned else c
        if column not in people.columns:
            people[column] = values.astype(object).to_numpy()
        groupings.append(column)
    return people.reset_index(drop=True), groupings


# ============================================================================================ the history
def history(name: str):
    try:
        return monitor().history(name)
    except TCRExError as exc:
        st.error(f"The monitor's history cannot be read: {exc}", icon=":material/error:")
        return None


def headline(h) -> None:
    last = h.last
    with st.container(border=True):
        st.markdown(f"### {last.headline()}")
        c = st.columns(4)
        c[0].metric("Versions", f"{len(h.runs):,}")
        c[1].metric("People followed", f"{last.n_people:,}")
        c[2].metric("Verified recourse now", f"{last.verified_share:.0%}",
                    help="Share of the people needing recourse under the last version who hold advice it confirms")
        inval = last.invalidation_rate
        c[3].metric("Invalidated at last release", "—" if inval != inval else f"{inval:.0%}",
                    help="Share of the verified advice held before the last version that it rejects")
    st.caption(f"Monitor **{h.monitor}**; favourable outcome: {last.target}. Every figure is verified on the model "
               "of its version (the same definition on every page).")


def alerts(h) -> None:
    last = h.last
    if not last.alerts:
        st.success(f"No alert at {last.version.label}.", icon=":material/check_circle:")
    for a in last.alerts:  # a warning, not an error box: the page works; the model's release is what is wrong
        st.warning(f"**Alert ({a.kind.replace('_', ' ')}):** {a.message}", icon=":material/notifications_active:")
    earlier = [(r.version.label, a) for r in h.runs[:-1] for a in r.alerts]
    if earlier:
        with st.expander(f"Alerts of earlier versions ({len(earlier)})"):
            for label, a in earlier:
                st.markdown(f"- **{label}**: {a.message}")


def grouping_choice(h, key: str) -> str | None:
    features = list(pd.unique(h.last.groups["feature"].dropna()))
    if not features:
        return None
    return st.selectbox("Groups by", features, key=key)


VERSIONS_CONFIG = {"verified recourse": st.column_config.NumberColumn("verified recourse", format="percent")}


def versions_table(h) -> pd.DataFrame:
    t = h.timeline()
    return pd.DataFrame({"version": t["version"], "registered (UTC)": t["registered"].dt.strftime("%Y-%m-%d %H:%M"),
                         "model SHA-256": t["model_sha256"].str[:16] + "…", "from": t["origin"],
                         "kept": t["n_kept"], "invalidated": t["n_invalidated"], "gained": t["n_gained"],
                         "newly needing": t["n_newly_needing"], "verified recourse": t["verified_share"],
                         "alerts": t["n_alerts"]})


# ============================================================================================ the people
def _frames(name: str, h) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    last = h.last.version.label
    previous = h.runs[-2].version.label if len(h.runs) > 1 else None
    now = caching.cached("monitor_models", ("people", name, last), lambda: monitor().people(name, last))
    before = None if previous is None else caching.cached(
        "monitor_models", ("people", name, previous), lambda: monitor().people(name, previous))
    return now, before


def people_section(ws: DataAndModel, result: FitResult, name: str, h, key: str = "monitor") -> None:
    """The people behind the last release: who lost recourse (by default), searchable; one person under both
    versions, and the way to open them on the Individual page under either."""
    id_col = h.spec["params"]["id_column"]
    now, before = _frames(name, h)
    if before is None:
        st.caption("One version so far: the people's statuses appear with the next version.")
        return
    prev_label, last_label = h.runs[-2].version.label, h.last.version.label
    c1, c2 = st.columns([2, 3])
    which = c1.selectbox("People", list(SHOWN), key=f"{key}_which",
                         format_func=lambda s: s if s == LOST else f"{s}: {STATUS_TEXT[s]}")
    query = c2.text_input("Search (id or any value)", key=f"{key}_query", placeholder="e.g. an id, or Unemployed")
    status = now["status"].astype(str)
    sel = (status == "invalidated") & ~now["verified"] if SHOWN[which] is None else status == SHOWN[which]
    table = pd.DataFrame({id_col: now[id_col], "status": status, f"advice under {prev_label}": before["text"],
                          f"advice under {last_label}": now["text"], "verified now": now["verified"],
                          "advice from": now["advice_version"]})[sel.to_numpy()]
    if query.strip():
        words = query.strip().lower()
        population = monitor().population(name)
        text = population.loc[table.index].astype(str).apply(lambda col: col.str.lower().str.contains(words,
                                                                                                    regex=False))
        table = table[text.any(axis=1).to_numpy() | table[id_col].astype(str).str.lower().str.contains(
            words, regex=False).to_numpy()]
    st.caption(f"{len(table):,} people ({which}) between {prev_label} and {last_label}"
               + (f"; the first {MAX_TABLE_ROWS:,} are shown" if len(table) > MAX_TABLE_ROWS else ""))
    st.dataframe(table.head(MAX_TABLE_ROWS), hide_index=True, width="stretch")
    if not len(table):
        return
    pick = st.selectbox("Look at one person", list(table[id_col].head(MAX_TABLE_ROWS)), key=f"{key}_person")
    at = int(np.flatnonzero(now[id_col].to_numpy() == pick)[0])
    st.dataframe(under_both(ws, before.iloc[at], now.iloc[at], prev_label, last_label), width="stretch")
    row = _data_row(ws, name, h, pick)
    if row is None:
        st.caption("This person is not a row of the active data, so the Individual page cannot open them; their "
                   "advice under both versions is above, as recorded.")
        return
    a, b = st.columns(2)
    for col, label in ((a, prev_label), (b, last_label)):
        if col.button(f"Open on the Individual page under {label}", key=f"{key}_open_{label}"):
            session.choose_individual(row)
            session.set_individual_under_b(False)
            session.set_individual_under_version({"monitor": name, "version": label})
            st.switch_page("pages/views/individual.py")


def under_both(ws: DataAndModel, before: pd.Series, now: pd.Series, prev_label: str, last_label: str) -> pd.DataFrame:
    """One person under the previous and the last version, as recorded: output, whether they need recourse, the
    advice and whether the model confirms it."""
    def column(r, held_from=None):
        return {"model output": ws.outcome_name(r["person_output"]),
                "needs recourse": "yes" if r["needs_recourse"] else "no (favourable outcome)",
                "advice": str(r["text"]), "verified": "yes" if r["verified"] else "no",
                "features to change": int(r["n_changes"]) if r["verified"] else "",
                "status": str(r["status"]) if held_from is None else ""}
    frame = pd.DataFrame({prev_label: column(before, True), last_label: column(now)})
    held = now["advice_holds"]
    frame.loc[f"advice held under {prev_label}", last_label] = "" if pd.isna(held) else \
        ("still works" if held else "rejected by the new model")
    return frame.fillna("").astype(str)


def _data_row(ws: DataAndModel, name: str, h, person) -> Any:
    """The person's row label in the active data, or None: a monitor started here names rows; another monitor's id
    is looked up in the active data's column of that name."""
    id_col = h.spec["params"]["id_column"]
    if id_col == ROW_ID and person in ws.X.index:
        return person
    frame = ws.data.frame
    if id_col in frame.columns:
        hit = frame.index[frame[id_col].to_numpy() == person]
        if len(hit) == 1 and hit[0] in ws.X.index:
            return hit[0]
    return None


# ============================================================================================ a new version
def register_section(ws: DataAndModel, name: str, h, key: str = "monitor") -> None:
    """Register the Data & model page's model as the next version of the monitor (one run)."""
    if read_only():
        return
    source = active_model_file(ws)
    with st.container(border=True):
        st.markdown("**Register this model as a new version**")
        if source is None:
            st.caption(f"Not possible now: {_why_no_file(ws)}.")
            return
        same = source.sha256 == h.last.version.model_sha256
        st.caption(f"The model of the Data & model page: {source.origin_text} (SHA-256 {source.sha256[:16]}…)"
                   + (f" — the same file as {h.last.version.label}" if same else "")
                   + ". Every person's advice is re-checked on it; the run is recorded for good.")
        with st.form(f"{key}_register"):
            label = st.text_input("Version label", value=f"v{len(h.runs) + 1}", key=f"{key}_label")
            go = st.form_submit_button("Register and re-check", icon=":material/add_task:")
        if go:
            try:
                with st.spinner(f"Re-checking {h.last.n_people:,} people's advice under {label} ..."):
                    monitor().run(name, model=source, version=label.strip(), allow_pickle=active.allow_pickle())
            except TCRExError as exc:
                st.warning(f"The version cannot be registered: {exc}", icon=":material/warning:")
                return
            st.rerun()


# ============================================================================================ the Individual page
def individual_view(ws: DataAndModel, result: FitResult):
    """``(explainer, model, label)`` when the Individual page explains under a monitored version (the Monitor
    page's drill-down), else None. The rules are the active fit's when the monitor was started on it (its fit rows
    serve the search), else the monitor's own."""
    view = session.individual_under_version()
    if not view:
        return None
    name, label = view.get("monitor"), view.get("version")
    try:
        model = caching.cached("monitor_models", ("model", name, label),
                               lambda: monitor().model_of(name, label, allow_pickle=active.allow_pickle()))
        started_here = session.monitor_choice().get("fit_key") == result.key
        ex = result.explainer if started_here else caching.cached(
            "monitor_models", ("rules", name), lambda: monitor().explainer(name))
    except TCRExError as exc:
        st.warning(f"The monitored version cannot be loaded: {exc}", icon=":material/warning:")
        session.set_individual_under_version(None)
        return None
    return ex, model, f"version {label} of the monitor '{name}'"
