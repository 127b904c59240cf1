"""The Compare models page's pieces: choose the new model B (the bundled retrained model, a model trained in the
app, or an upload), run :func:`tcrex.compare.compare_models` against the active model A (cached per session), and show the
headline, flows, group gaps, broken rules and the people behind every number.

Model B comes from the same code as the active model (:mod:`tcrex.ui.state.sources`, :mod:`tcrex.ui.state.training`): an upload
is read by the intake and checked against the data, a trained model uses the Data & model page's algorithms. The
last comparison is remembered so the HTML report and the exports can include it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from tcrex import datasets
from tcrex.errors import CellLimitError, NoValidRuleError, TCRExError
from tcrex.vocabulary import CLASSIFICATION
from tcrex.compare import CHANGE_TEXT, CHANGES, GAINED, LOST, PARAMS_B, compare_models
from tcrex.spreadsheet import to_csv

from . import audit, monitor
from .data_model import MODEL_LABEL, MODEL_TYPES, PICKLE_TYPES, missing_formats_note
from ..state import active, caching, session, sources, verification
from ..widgets import components as ui
from ..widgets.components import MAX_TABLE_ROWS
from ..state.sources import ActiveModel, InputProblem, ModelSpec
from ..state.active import FitResult, DataAndModel
from ..state.training import ALGORITHMS, TrainingError, train_model

BUNDLED_B = "bundled_b"
KINDS = {BUNDLED_B: "Bundled retrained model", "train": "Train in the app", "upload": "Upload a model file"}
RETRAIN = {"bootstrap": "a bootstrap resample of the fit rows", "seed": "the same fit rows, another seed"}
N_BOOT = 1000
NO_GROUPING = "(no grouping)"
PEOPLE_COLUMNS = {"group": "group", "change": "change", "output_a": "output (A)", "output_b": "output (B)",
                  "recourse_a": "recourse (A)", "recourse_b": "recourse (B)",
                  "advice_a_holds_under_b": "A's advice holds under B", "n_changes_a": "changes (A)",
                  "n_changes_b": "changes (B)", "rule_a": "rule (A)", "rule_b": "rule (B)"}


@dataclass
class ComparisonRun:
    """A finished comparison and what it was run on (kept for the report and the exports)."""

    result: Any  # tcrex.compare.ComparisonResult
    fit_key: str  # FitResult.key it belongs to
    model_b_label: str
    column: str | None
    population: str
    target_label: str
    model_b: Any = None  # model B as the engine asks it (for the drill-down under model B)
    params_b: dict = field(default_factory=dict)  # explainer B's own parameters where they differ from A's
    #: computed from the workspace's saved settings for the report (the page was not visited in this session)
    restored: bool = False

    @property
    def title(self) -> str:
        grouped = f" by {self.column}" if self.column else ""
        return (f"Model A (active) against {self.model_b_label}{grouped} — {self.population}, favourable outcome "
                f"{self.target_label}")


# ============================================================================================ model B
def bundled_b_available(ws: DataAndModel) -> bool:
    """The retrained bundled model fits the bundled loans sample (and only that data)."""
    spec = ws.data.spec
    return (spec.kind, spec.name) == (active.DEFAULT_DATA.kind, active.DEFAULT_DATA.name) and \
        (datasets.SAMPLE_DATA_DIR / datasets.LOANS_MODEL_B).exists()


def _bundled_b(data) -> ActiveModel:
    m = datasets.load_bundled_model(datasets.SAMPLE_DATA_DIR / datasets.LOANS_MODEL_B)
    missing = [f for f in m.feature_names if f not in data.frame.columns]
    if missing:
        raise InputProblem(f"the retrained bundled model needs the column(s) {missing}, which this data lacks")
    meta = m.meta
    return ActiveModel(key=sources.sha256("bundled_b", (datasets.SAMPLE_DATA_DIR / datasets.LOANS_MODEL_B)
                                          .read_bytes()), label="Bundled XGBoost, retrained",
                       description=f"the bundled classifier retrained on a {meta.get('retrained', 'bootstrap')}",
                       kind="bundled", task=CLASSIFICATION, predict=m.predict, spec=ModelSpec(BUNDLED_B),
                       classes=[int(c) for c in m.classes_], model=m)


def _trained_b(ws: DataAndModel, algorithm: str, how: str, seed: int) -> ActiveModel:
    data = ws.data
    if not data.label_column:
        raise InputProblem("training needs a label column; choose it on the Data & model page")
    fit = data.fit_index
    if how == "bootstrap":  # the same number of rows, drawn with replacement
        fit = fit[np.random.default_rng(seed).integers(0, len(fit), size=len(fit))]
    try:
        m = train_model(data.frame, ws.features, data.label_column, data.categorical, fit, data.test_index,
                        algorithm, random_state=seed, task=data.spec.task)
    except TrainingError as exc:
        raise InputProblem(str(exc)) from None
    return ActiveModel(key=sources.sha256("train_b", data.key, algorithm, how, seed),
                       label=f"{m.describe()} trained on {RETRAIN[how]} (seed {seed})",
                       description=f"trained in the app on {RETRAIN[how]}", kind="train", task=m.task,
                       predict=m.predict, spec=ModelSpec("train", algorithm), score=m.holdout_score,
                       score_name=m.score_name, classes=[] if m.classes_ is None else list(m.classes_), model=m)


def model_b_controls(ws: DataAndModel, key: str = "compare") -> ActiveModel | None:
    """Choose model B; None (with a message) until there is one."""
    kinds = [k for k in KINDS if k != BUNDLED_B or bundled_b_available(ws)]
    # the last choice of this workspace starts the widgets of a new session (a link reopened, tcrex/ui/state/workspace.py);
    # once drawn, the widgets keep their own values
    saved = session.compare_choice()
    kind = st.segmented_control("New model (B)", kinds,
                                default=None if session.has_widget(f"{key}_kind") else
                                saved.get("kind") if saved.get("kind") in kinds else kinds[0],
                                format_func=KINDS.get, key=f"{key}_kind", required=True) or kinds[0]
    session.set_compare_choice({**saved, "kind": kind})
    try:
        if kind == BUNDLED_B:
            st.caption("The bundled loans classifier retrained on a bootstrap resample with another seed "
                       "(`sample_data/build.py`).")
            return saved_model_b(ws, {"kind": BUNDLED_B})
        if kind == "train":
            c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
            algo = c1.selectbox("Algorithm", list(ALGORITHMS), format_func=ALGORITHMS.get, key=f"{key}_algo",
                                index=_index(list(ALGORITHMS), saved.get("algo"), f"{key}_algo"))
            how = c2.selectbox("Trained on", list(RETRAIN), format_func=RETRAIN.get, key=f"{key}_how",
                               index=_index(list(RETRAIN), saved.get("how"), f"{key}_how"))
            seed = int(c3.number_input("Seed", 0, 10_000, key=f"{key}_seed",
                                       value="min" if session.has_widget(f"{key}_seed") else
                                       int(saved.get("seed", 1))))
            choice = {**saved, "kind": kind, "algo": algo, "how": how, "seed": seed}
            session.set_compare_choice(choice)
            return saved_model_b(ws, choice)
        return _uploaded_b(ws, key)
    except InputProblem as exc:
        st.warning(f"Model B cannot be used: {exc}", icon=":material/warning:")
        return None


def saved_model_b(ws: DataAndModel, choice: dict) -> ActiveModel:
    """Model B as the saved compare choice makes it (:data:`tcrex.ui.state.session.COMPARE_CHOICE`), through the
    same cached builders as :func:`model_b_controls`, without drawing a widget; raises
    :class:`~tcrex.ui.state.sources.InputProblem` saying why it cannot be made."""
    kind = choice.get("kind")
    if kind == BUNDLED_B:
        if not bundled_b_available(ws):
            raise InputProblem("the retrained bundled model fits only the bundled loans sample")
        return caching.cached("model_b", "bundled_b", lambda: _bundled_b(ws.data))
    if kind == "train":
        algo, how, seed = choice.get("algo"), choice.get("how"), int(choice.get("seed", 1))
        if algo not in ALGORITHMS or how not in RETRAIN:
            raise InputProblem("the saved training choice is not one this version offers")
        return caching.cached("model_b", sources.sha256("train_b", ws.data.key, algo, how, seed),
                              lambda: _trained_b(ws, algo, how, seed))
    kept = active.blob("model_b")
    if kept is None:
        raise InputProblem("model B's file is not in this workspace; upload it again on the Compare models page")
    digest, filename, data = kept
    return caching.cached("model_b", sources.sha256("upload_b", digest, ws.data.key),
                          lambda: sources.uploaded_model(ws.data, data, filename, active.allow_pickle()))


def _index(options: list, saved, key: str) -> int:
    """A selectbox's starting index: the saved choice in a new session, else the first (0 once the widget holds a
    value: Streamlit then keeps its own and warns about a second default)."""
    return options.index(saved) if saved in options and not session.has_widget(key) else 0


def _uploaded_b(ws: DataAndModel, key: str) -> ActiveModel | None:
    types = MODEL_TYPES + (PICKLE_TYPES if active.allow_pickle() else [])
    upload = st.file_uploader(MODEL_LABEL.replace("Model file", "Model B file"), type=types,
                              key=f"{key}_file:{ws.data.key[:16]}",
                              help="Loaded without running code, like the model on the Data & model page.")
    missing_formats_note()
    if upload is not None:
        active.remember_blob("model_b", upload.name, upload.getvalue())
    if active.blob("model_b") is None:
        st.info("Upload the new model to compare it with the active one.", icon=":material/upload_file:")
        return None
    return saved_model_b(ws, {"kind": "upload"})


# ============================================================================================ running
def _model_object(m: ActiveModel):
    """What the engine asks: the loaded/trained model (it knows its features and classes), else its predict."""
    obj = m.model
    return obj if obj is not None and hasattr(obj, "predict") else m.predict


def group_choice(ws: DataAndModel, key: str) -> str | None:
    columns = audit.group_columns(ws)
    default = audit.default_column(ws, columns)
    options = [NO_GROUPING] + columns
    # the grouping is kept with the workspace's other compare choices: a reopened link starts the widget there
    saved = session.compare_choice()
    start = saved.get("column") if saved.get("column") in options else default
    chosen = st.selectbox("Compare groups by", options, index=_index(options, start, f"{key}_column")
                          if start in options else 0,
                          key=f"{key}_column", format_func=lambda c: c if c == NO_GROUPING else
                          f"{ws.feature_name(c)}  ({audit.column_role(ws, c)})")
    session.set_compare_choice({**session.compare_choice(), "column": chosen})
    return None if chosen == NO_GROUPING else chosen


#: Explainer B's parameters as the sidebar names A's
PARAM_NAMES_B = {"tau": "τ", "rho": "ρ", "n_trees": "surrogate trees", "max_cells": "grid cell limit"}


def explainer_b_params(result: FitResult, key: str) -> dict:
    """Explainer B's own ρ, τ, surrogate trees and grid cell limit, starting from A's (the active fit's); returns
    those that differ from A's (``compare_models(params_b=)``). The widgets start over when A's parameters change,
    so B's defaults are always A's current ones."""
    p = result.params
    a = {"tau": p.tau, "rho": p.rho, "n_trees": p.n_trees, "max_cells": p.max_cells}
    tag = sources.sha256(*a.values())[:10]
    with st.expander("Explainer B's parameters", expanded=False, icon=":material/tune:"):
        st.caption("Model B is explained by its own T-CREx explainer, fitted on model B's outputs over A's fit rows. "
                   "It starts with A's parameters; model B may need a larger ρ or fewer surrogate trees to keep its "
                   "metarule grid within the cell limit.")
        c = st.columns(4)
        b = {"tau": c[0].slider("τ (B)", 0.5, 1.0, value=p.tau, step=0.01, key=f"{key}_b_tau_{tag}"),
             "rho": c[1].slider("ρ (B)", 0.005, 0.2, value=p.rho, step=0.005, format="%.3f",
                                key=f"{key}_b_rho_{tag}"),
             "n_trees": c[2].number_input("Surrogate trees (B)", 1, 50, value=p.n_trees, step=1,
                                          key=f"{key}_b_trees_{tag}"),
             "max_cells": c[3].number_input("Grid cell limit (B)", 1_000, 5_000_000, value=p.max_cells, step=10_000,
                                            key=f"{key}_b_cells_{tag}")}
    own = {k: v for k, v in b.items() if not np.isclose(float(v), float(a[k]), rtol=1e-9, atol=1e-12)}
    return {k: (int(v) if k in ("n_trees", "max_cells") else float(v)) for k, v in own.items()}


def params_b_text(params_b: dict) -> str:
    """"model A's parameters" or "its own parameters (ρ = 0.050, surrogate trees 1; the rest A's)"."""
    if not params_b:
        return "model A's parameters"
    shown = ", ".join(f"{PARAM_NAMES_B[k]} = {v:,}" if k != "rho" else f"ρ = {v:.3f}"
                      for k, v in params_b.items() if k in PARAMS_B)
    return f"its own parameters ({shown}; the rest A's)"


def _why_b_failed(exc: TCRExError) -> str:
    """What to change in *Explainer B's parameters* when B's explainer cannot be fitted."""
    if isinstance(exc, CellLimitError):
        return ("Open **Explainer B's parameters** above and raise **ρ (B)**, lower **Surrogate trees (B)** or "
                "raise **Grid cell limit (B)**; model A's own explainer is unaffected.")
    if isinstance(exc, NoValidRuleError):
        return "Open **Explainer B's parameters** above and lower **τ (B)** or **ρ (B)**."
    return ""


def run(ws: DataAndModel, result: FitResult, model_b: ActiveModel, column: str | None, target, target_label: str,
        population, params_b: dict | None = None) -> ComparisonRun | None:
    """The comparison for these settings (cached per session); problems become a message and ``None``.
    ``params_b``: explainer B's parameters that differ from A's (:func:`explainer_b_params`)."""
    params_b = dict(params_b or {})
    index = population.index
    if len(index) == 0:
        st.warning("The population is empty; widen the filter.", icon=":material/filter_alt_off:")
        return None
    if model_b.task != ws.task:
        st.warning(f"{_other_task(ws, model_b)}; compare models of the same task.", icon=":material/warning:")
        return None
    try:
        run_ = compute(ws, result, model_b, column, target, target_label, population, params_b)
    except TCRExError as exc:
        st.warning(f"The comparison cannot run with these settings: {exc}. {_why_b_failed(exc)}".rstrip(),
                   icon=":material/warning:")
        return None
    # kept with the workspace's other compare choices for the report built from saved settings (:func:`restore`)
    session.set_compare_choice({**session.compare_choice(), "target": target, "target_label": target_label,
                                "population": population.label, "population_spec": population.spec,
                                "params_b": params_b})
    return run_


def _other_task(ws: DataAndModel, model_b: ActiveModel) -> str:
    return f"Model B solves a {model_b.task} task but the active model a {ws.task} task"


def compute(ws: DataAndModel, result: FitResult, model_b: ActiveModel, column: str | None, target,
            target_label: str, population, params_b: dict) -> ComparisonRun:
    """The comparison for these settings, cached per session (one owner for the page and the report built from
    saved settings, :func:`restore`), remembered as the last comparison; raises
    :class:`~tcrex.errors.TCRExError`."""
    index = population.index
    groups, binned = audit.group_values(ws, column) if column else (None, False)
    key = sources.sha256("compare", result.key, model_b.key, column, repr(target), sorted(params_b.items()),
                         np.asarray(index).tobytes() if index.dtype.kind in "iu" else list(index))

    def build() -> ComparisonRun:
        X = ws.X.loc[index]
        res = compare_models(result.explainer, X, _model_object(model_b), model_a=verification.checker(ws),
                             target=target, groups=None if groups is None else groups.loc[index], n_boot=N_BOOT,
                             random_state=0, class_names=ws.class_names, params_b=params_b)
        return ComparisonRun(result=res, fit_key=result.key, model_b_label=model_b.label, column=column,
                             population=population.label, target_label=target_label, model_b=_model_object(model_b),
                             params_b=params_b)

    with st.spinner("Comparing recourse under both models ..."):
        run_ = caching.cached("comparisons", key, build)
    session.set_last_comparison(run_)
    return run_


def restore(ws: DataAndModel, result: FitResult) -> ComparisonRun | str | None:
    """The comparison of the saved compare choice (model B, grouping, favourable outcome, population, explainer B's
    parameters), through the page's own :func:`compute`; a sentence saying why it cannot be run; or None when no
    comparison was run in this workspace."""
    choice = session.compare_choice()
    if "target_label" not in choice:  # the page never ran a comparison here
        return None
    if not verification.model_available(ws):
        return "the active model is a column of outputs, with no model A to check points on"
    column = choice.get("column")
    column = None if column in (None, NO_GROUPING) else column
    if column is not None and column not in audit.group_columns(ws):
        return f"the saved grouping column {column!r} cannot group this data"
    mode = ui.SIMPLE_POPULATIONS.get(choice.get("population"))
    population = ui.population_from_spec(ws, choice.get("population_spec")) or (
        None if mode is None else ui.population_of(ws, mode))
    if population is None:
        return "its population is a filter this data no longer has; open the Compare models page to run it"
    if not len(population.index):
        return "its population is empty on this data"
    try:
        model_b = saved_model_b(ws, choice)
    except InputProblem as exc:
        return f"model B cannot be made: {exc}"
    if model_b.task != ws.task:
        return _other_task(ws, model_b)
    target, target_label = audit.saved_target(ws, choice)
    try:
        return compute(ws, result, model_b, column, target, target_label, population,
                       dict(choice.get("params_b") or {}))
    except TCRExError as exc:
        return f"it cannot run with the saved settings: {exc}"


def last_comparison(result: FitResult) -> ComparisonRun | None:
    """The last comparison run on this fitted explainer (for the report and the exports), if any."""
    run_ = session.last_comparison()
    return run_ if run_ is not None and run_.fit_key == result.key else None


# ============================================================================================ showing
def headline(run_: ComparisonRun) -> None:
    res = run_.result
    s = res.summary
    with st.container(border=True):
        st.markdown(f"### {res.headline()}")
        c = st.columns(4)
        c[0].metric("Lose recourse", f"{s['changes'][LOST]:,}", help=CHANGE_TEXT[LOST])
        c[1].metric("Gain recourse", f"{s['changes'][GAINED]:,}", help=CHANGE_TEXT[GAINED])
        holds = s["advice_holds_share"]
        c[2].metric("A's advice holds under B", "—" if holds != holds else f"{holds:.0%}",
                    help="Share of model A's verified points that model B also sends to the favourable outcome")
        change = s["mean_changes_change"]
        shown = "—" if change != change else "0.00" if abs(change) < 0.005 else f"{change:+.2f}"  # no "-0.00"
        # a short label: the metric's column is a quarter of the page, and a longer one was cut ("… to ch…")
        c[3].metric("Changes asked, B − A", shown,
                    help="Among people who keep recourse: the mean number of features B's advice asks to change, "
                         "minus A's")
    st.caption(f"{run_.title}. Verified recourse means the model confirms a point that follows the advice "
               f"(the same definition on every page); explainer B has {params_b_text(run_.params_b)}, model A's "
               f"constraints, and was fitted on {res.explainer_b_fit_on}.")


def findings(run_: ComparisonRun) -> None:
    with st.container(border=True):
        for f in run_.result.findings():
            st.markdown(f"- {f}")


def reference_choice(run_: ComparisonRun, key: str):
    """The comparison with the reference group chosen here (recomputed from the counts, no model call)."""
    res = run_.result
    options = list(res.group_labels) + ["rest"]
    default = options.index(res.reference) if res.reference in options else 0
    # one widget per grouping (audit.reference_key): under one key the browser kept the option chosen for
    # another grouping, so the box showed a group of the old column while the figures used the new default
    ref = st.selectbox("Reference group", options, index=default, key=audit.reference_key(key, str(run_.column)),
                       format_func=lambda g: "everyone else (rest)" if g == "rest" else str(g))
    return res if ref == res.reference else res.regroup(reference=ref)


GROUPS_CONFIG = {name: st.column_config.NumberColumn(name, format="percent")
                 for name in ("A's advice invalidated by B", "verified (A)", "verified (B)")}


def groups_table(res) -> pd.DataFrame:
    cols = {"group": "group", "n": "rows", "n_need_a": "need recourse (A)", "n_lost": "lose recourse",
            "n_gained": "gain recourse", "invalidation_rate": "A's advice invalidated by B",
            "verified_share_a": "verified (A)", "verified_share_b": "verified (B)", "is_reference": "reference"}
    return res.groups[list(cols)].rename(columns=cols)


def people_table(run_: ComparisonRun, changes: list[str]) -> pd.DataFrame:
    p = run_.result.people
    shown = p[p["change"].isin(changes)] if changes else p
    cols = [c for c in PEOPLE_COLUMNS if c in shown.columns]
    return shown[cols].rename(columns=PEOPLE_COLUMNS)


def change_options() -> list[str]:
    return list(CHANGES)


def open_individual(row, under_b: bool = False) -> None:
    """Make ``row`` the Individual page's person, explained under the active model A or (``under_b``) under model B
    of the last comparison (see :func:`individual_view`)."""
    session.choose_individual(row)
    session.set_individual_under_b(under_b)


def individual_view(ws: DataAndModel, result: FitResult):
    """``(explainer, model, label)`` the Individual page explains under: a monitored model version when the Monitor
    page's drill-down asked for it, model B of the last comparison when its drill-down did (``label`` names it),
    else the active model A (``label`` None)."""
    under_version = monitor.individual_view(ws, result)
    if under_version is not None:
        return under_version
    if session.individual_under_b():
        run_ = last_comparison(result)
        if run_ is not None and run_.result.explainer_b is not None and run_.model_b is not None:
            return run_.result.explainer_b, run_.model_b, run_.model_b_label
        session.set_individual_under_b(False)  # that comparison is gone (another fit)
    return result.explainer, verification.checker(ws), None


def back_to_model_a() -> None:
    session.set_individual_under_b(False)
    session.set_individual_under_version(None)


def view_banner(label: str) -> str:
    """The Individual page's banner when it explains under another model than the active one."""
    if session.individual_under_version():
        return f"Explained under the model of **{label}**, from the Monitor page."
    return f"Explained under **model B ({label})**, from the Compare models page."


def under_both(ws: DataAndModel, result: FitResult, run_: ComparisonRun, row, target) -> pd.DataFrame | None:
    """One person under each model: the sentence each explainer gives, its verified point's outcome, and the
    features its verified point changes (a table with a column per model)."""
    res = run_.result
    ex_b = res.explainer_b
    p = res.people.loc[row]
    x = ws.X.loc[[row]]
    cols = {}
    for name, ex, model, letter in (("model A (active)", result.explainer, verification.checker(ws), "a"),
                                    ("model B (new)", ex_b, run_.model_b, "b")):
        if ex is None or model is None:
            continue
        try:
            exp = ex.explain_one(x, model=model, target=target)
        except TCRExError as exc:
            st.warning(f"{name}: {exc}", icon=":material/warning:")
            continue
        cols[name] = {"model output": ws.outcome_name(p[f"output_{letter}"]),
                      "advice": exp.text,
                      "recourse": {True: "verified", False: "not verified"}[bool(p[f"verified_{letter}"])]
                      if p[f"needs_recourse_{letter}"] else "not needed (favourable outcome)",
                      "rule": p[f"rule_{letter}"] if isinstance(p[f"rule_{letter}"], str) else "",
                      "features to change": "" if pd.isna(p[f"n_changes_{letter}"]) else
                      int(p[f"n_changes_{letter}"])}
    if not cols:
        return None
    holds = p["advice_a_holds_under_b"]
    frame = pd.DataFrame(cols)
    frame.loc["A's advice under model B", frame.columns[0]] = "" if pd.isna(holds) else \
        ("still works" if holds else "no longer works")
    return frame.fillna("").astype(str)


# ============================================================================================ exports
def people_csv(run_: ComparisonRun):
    """Builder of the people-level comparison as CSV (formula cells neutralised) for ``st.download_button``."""
    def build() -> str:
        return to_csv(run_.result.people.reset_index(names="row"))
    return build


def comparison_json(run_: ComparisonRun):
    def build() -> str:
        return run_.result.to_json(indent=1)
    return build


def people_section(ws: DataAndModel, result: FitResult, run_: ComparisonRun, target, key: str) -> None:
    """The people whose recourse changed as chosen, one person under both models, and the way to open that person
    on the Individual page under model A or model B."""
    changes = st.multiselect("Show people whose recourse is", change_options(), default=["lost"],
                             key=f"{key}_changes")
    table = people_table(run_, changes)
    st.dataframe(table.head(MAX_TABLE_ROWS), width="stretch")
    if not len(table):
        return
    row = st.selectbox("Look at one person", list(table.index[:MAX_TABLE_ROWS]), key=f"{key}_person")
    both = under_both(ws, result, run_, row, target)
    if both is not None:
        st.dataframe(both, width="stretch")
    open_a, open_b = st.columns(2)
    if open_a.button("Open this person on the Individual page (model A)", key=f"{key}_open"):
        open_individual(row)
        st.switch_page("pages/views/individual.py")
    if open_b.button("Open this person on the Individual page (model B)", key=f"{key}_open_b"):
        open_individual(row, under_b=True)
        st.switch_page("pages/views/individual.py")
