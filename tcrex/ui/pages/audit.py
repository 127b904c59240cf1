"""The Subgroup audit page's pieces: choose a grouping column, population, favourable target and interval level,
run :func:`tcrex.audit.audit` (cached per session), and show findings, charts and tables.

Any column of the active data can group the individuals, including columns that are not model features (a
protected attribute kept as "not a feature (audit only)" on the Data & model page) and the label column.  Numeric
columns with many values are split into quartiles.  The last audit is remembered so the HTML report can include it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
import pandas as pd
import streamlit as st

from tcrex import is_categorical_column
from tcrex.constraints import suggest_constraints
from tcrex.errors import ParameterError, TCRExError
from tcrex.vocabulary import REGRESSION
from tcrex.audit import audit, practical_gaps, split_findings  # noqa: F401 - one owner
from tcrex.population import PRACTICAL_DEFAULT
from tcrex.figures import BAR_METRICS
from tcrex.population import REST, labelled_groups  # noqa: F401 - one owner
from tcrex.text import format_number, integer_range

from ..widgets import components as ui
from ..widgets import constraints
from ..state import caching, session, shared, sources, active, verification, workspace
from ..state.active import FitResult, DataAndModel


MAX_GROUPS = 50  # the audit refuses more
BIN_ABOVE = 12  # numeric columns with more distinct values are split into quartiles
CONFIDENCES = [0.90, 0.95, 0.99]
N_BOOT = 1000
#: The per-group table's columns with a model: recourse is verified recourse, the costs are the verified advice's
#: (the report's table, :data:`tcrex.report.AUDIT_COLUMNS`).
TABLE_COLUMNS = {
    "group": "group", "n_total": "rows", "n": "need recourse", "n_recourse": "have verified recourse",
    "recourse_share": "share with verified recourse", "n_next_rule": "verified through the next rule",
    "n_minimal_change": "verified beyond the rules", "n_similar": "similar case only", "n_none": "no verified recourse",
    "n_no_rule": "no valid rule", "n_no_actionable_rule": "no actionable rule", "mean_changes": "mean changes",
    "mean_distance": "mean distance", "mean_feasibility": "mean feasibility", "mean_accuracy": "mean accuracy",
    "small_group": "small group", "is_reference": "reference",
}
#: Without a model: the paper's rules, not checked on a model (:data:`tcrex.report.AUDIT_RULE_COLUMNS`).
RULE_TABLE_COLUMNS = {
    "group": "group", "n_total": "rows", "n": "need recourse", "n_recourse": "have a rule",
    "recourse_share": "share with a rule", "n_no_rule": "no valid rule", "n_no_actionable_rule": "no actionable rule",
    "mean_changes": "mean changes (rules)", "mean_distance": "mean distance (rules)",
    "mean_feasibility": "mean feasibility", "mean_accuracy": "mean accuracy", "small_group": "small group",
    "is_reference": "reference",
}



#: The second grouping column's "none" option.
NO_SECOND = "(none)"
#: The reference options besides a group: the largest group (engine default) and everyone else.
LARGEST = "__largest__"


def _prefs() -> dict:
    """The audit's choices kept across pages (widget state is dropped when a page is left): grouping columns,
    reference, interval level, minimum group size, practical threshold (:data:`tcrex.ui.state.session.AUDIT_PREFS`)."""
    return session.audit_prefs()


@dataclass
class AuditSettings:
    column: str
    population: ui.Population
    target: Any  # the engine's target spec of the favourable outcome
    target_label: str
    confidence: float
    min_group_size: int
    #: smallest gap that matters in practice: percentage points for shares, percent of the reference value for
    #: means; a gap is shown red only when it is at least this large AND its interval excludes zero
    practical: float = PRACTICAL_DEFAULT
    #: a second grouping column: intersectional groups ("sex = F and race = B"); None: one column
    second: str | None = None
    #: the reference group's label, "rest" (everyone else) or None (the largest group)
    reference: str | None = None


@dataclass
class AuditRun:
    """A finished audit and what it was run on (kept for the report)."""

    result: Any  # tcrex.audit.AuditResult
    fit_key: str  # FitResult.key it belongs to
    column: str
    population: str
    target_label: str
    binned: bool
    #: the page's practical threshold when the audit was last shown (the report applies the same one)
    practical: float = PRACTICAL_DEFAULT
    #: computed from the workspace's saved settings for the report (the page was not visited in this session)
    restored: bool = False

    @property
    def title(self) -> str:
        return (f"Subgroup audit by {self.column}{' (quartiles)' if self.binned else ''} — {self.population}, "
                f"compared with {self.result.reference_display}, "
                f"favourable outcome {self.target_label}, practical threshold {self.practical:g} points")


# ============================================================================================ grouping columns
def group_columns(ws: DataAndModel) -> list[str]:
    """Columns that can group individuals, non-features first (the usual audit), then categorical features, the
    label, and numeric features (binned when they have many values)."""
    frame = ws.data.frame
    features = set(ws.features)
    categorical = set(ws.categorical)
    usable = []
    for c in frame.columns:
        s = frame[c]
        numeric = _numbers(s)
        if s.nunique(dropna=True) < 2 or (not numeric and s.nunique(dropna=True) > MAX_GROUPS):
            continue
        usable.append(c)

    def rank(c) -> int:
        if c not in features and c != ws.data.label_column:
            return 0
        if c in categorical:
            return 1
        if c == ws.data.label_column:
            return 3
        return 2 if frame[c].nunique() <= BIN_ABOVE else 4
    return sorted(usable, key=lambda c: (rank(c), list(frame.columns).index(c)))


def _numbers(s: pd.Series) -> bool:
    """A column of numbers, which can be cut into quartiles: numeric by the engine's column rule
    (``is_categorical_column``: bool, text and category columns are categorical) and of a number dtype (a datetime
    column is neither categorical nor numbers, and has no quartile labels)."""
    return not is_categorical_column(s) and pd.api.types.is_numeric_dtype(s)


def default_column(ws: DataAndModel, columns: list[str]) -> str | None:
    """The column an audit usually groups by, or None (then the page asks): a non-feature column with a few
    values (kept "audit only", e.g. a protected attribute), else a low-cardinality column that looks like a
    protected attribute (:func:`tcrex.constraints.suggest_constraints`: sex, race, marital status, ...), else the first
    categorical feature with 2-12 values. Never an arbitrary numeric column or the label."""
    frame = ws.data.frame
    features = set(ws.features)
    few = [c for c in columns if 2 <= frame[c].nunique() <= BIN_ABOVE]
    for c in few:
        if c not in features and c != ws.data.label_column:
            return c
    candidates = [c for c in few if c != ws.data.label_column]
    protected = {f for f, s in suggest_constraints(frame[candidates]).items()
                 if "protected" in s["reason"]} if candidates else set()
    for c in few:
        if c in protected:
            return c
    categorical = [c for c in few if c in ws.categorical]
    return categorical[0] if categorical else None


def column_role(ws: DataAndModel, column: str) -> str:
    if column == ws.data.label_column:
        return "label column"
    if column not in ws.features:
        return "not a model feature"
    return "categorical feature" if column in ws.categorical else "numeric feature"


def group_values(ws: DataAndModel, column: str) -> tuple[pd.Series, bool]:
    """The group of every row (aligned with ``ws.X``); numeric columns with many values become quartiles."""
    s = ws.data.frame[column].reindex(ws.X.index)
    numeric = _numbers(s)
    if numeric and s.nunique(dropna=True) > BIN_ABOVE:
        bins, edges = pd.qcut(s, 4, duplicates="drop", retbins=True)
        labels = bin_labels(edges, s)
        out = pd.Series(pd.Categorical.from_codes(bins.cat.codes, categories=labels), index=s.index, name=column)
        return out, True
    return labelled_groups(s, ws.data.value_labels.get(column)).rename(column), False


def bin_labels(edges, values: pd.Series) -> list[str]:
    """Readable, non-overlapping labels of quantile bins that are true of the values in them.

    ``edges`` are the exact bin edges (``pd.qcut(..., retbins=True)``): bin 0 holds ``[edges[0], edges[1]]``, bin
    ``i`` holds ``(edges[i], edges[i+1]]``. Whole-number columns: the whole numbers each bin holds, "18–37",
    "38–56" (one number: "38"). Other columns: "17.5 to 37.25" for the first bin, then "over 37.25 to 56" (above
    37.25, up to and including 56)."""
    edges = [float(e) for e in edges]
    finite = values.dropna().to_numpy(dtype=float)
    if bool(len(finite)) and bool(np.all(finite == np.floor(finite))):
        labels = []
        for i in range(len(edges) - 1):
            first = math.ceil(edges[0]) if i == 0 else integer_range(edges[i], edges[i + 1])[0]
            last = integer_range(edges[i], edges[i + 1])[1]
            labels.append(format_number(first) if first == last else
                          f"{format_number(first)}–{format_number(last)}")
        if len(set(labels)) == len(labels):
            return labels
    return [f"{format_number(edges[0])} to {format_number(edges[1])}" if i == 0 else
            f"over {format_number(edges[i])} to {format_number(edges[i + 1])}" for i in range(len(edges) - 1)]


# ============================================================================================ the favourable outcome
def target_controls(ws: DataAndModel, result: FitResult, key: str) -> tuple[Any, str]:
    """The favourable outcome: the one chosen in the sidebar (every page, export and the audit describe the same
    people). Only when the sidebar explains both directions (the paper's default) does the audit ask here, since
    "who needs recourse" needs one favourable outcome."""
    p = active.params()
    name = ws.data.label_column or "output"
    target = p.target
    if ws.task == REGRESSION:
        if isinstance(target, (tuple, list)):
            st.markdown(f"**Favourable outcome** (sidebar)  \n{active.describe_target(target, ws.task)}")
            low, high = target
            return tuple(target), (f"{name} > {format_number(low)}" if high is None else
                                   f"{name} ≤ {format_number(high)}")
        y = ws.y_pred.astype(float)
        c1, c2 = st.columns([1, 1])
        side = c1.segmented_control("Favourable", ["above", "below"], default="above", key=f"{key}_side",
                                    required=True, format_func=lambda s: f"output {s} the threshold")
        default = float(target) if target is not None else round(float(np.mean(y)), 4)
        thr = c2.number_input("Threshold", value=default, key=f"{key}_threshold", format="%.4g")
        st.caption("The sidebar explains both directions; the audit needs one favourable side (set it in the "
                   "sidebar to use it everywhere).")
        if side == "below":
            return (None, float(thr)), f"{name} ≤ {format_number(thr)}"
        return (float(thr), None), f"{name} > {format_number(thr)}"
    if target is not None:  # a class, a set of classes or "this class or better": one favourable outcome
        label = active.describe_target(target, ws.task, ws.class_name)
        st.markdown(f"**Favourable outcome** (sidebar)  \n{label}")
        return (list(target) if isinstance(target, tuple) else target), label
    classes = ws.classes
    default = ws.favourable_default()
    default = default if default is not None else classes[-1]
    chosen = st.selectbox("Favourable outcome", classes, index=classes.index(default), key=f"{key}_target",
                          format_func=ws.class_name,
                          help="Who needs recourse depends on which outcome is favourable: the audit looks at the "
                               "individuals whose model output is not this one.")
    st.caption("The sidebar explains every individual toward the other class (the paper's default); choose the "
               "favourable outcome there to use it on every page.")
    return chosen, ws.class_name(chosen)


def saved_target(ws: DataAndModel, saved: dict) -> tuple[Any, str]:
    """:func:`target_controls`' answer without drawing a widget (a report built from saved settings): the sidebar's
    favourable outcome when it names one, else the one the page last ran with (``saved["target"]``,
    ``saved["target_label"]``), else the page's own default."""
    target = active.params().target
    name = ws.data.label_column or "output"
    if ws.task == REGRESSION:
        if isinstance(target, (tuple, list)):
            low, high = target
            return tuple(target), (f"{name} > {format_number(low)}" if high is None else
                                   f"{name} ≤ {format_number(high)}")
        if isinstance(saved.get("target"), tuple) and saved.get("target_label"):
            return saved["target"], saved["target_label"]
        thr = float(target) if target is not None else round(float(np.mean(ws.y_pred.astype(float))), 4)
        return (thr, None), f"{name} > {format_number(thr)}"
    if target is not None:
        return (list(target) if isinstance(target, tuple) else target), \
            active.describe_target(target, ws.task, ws.class_name)
    chosen = saved.get("target")
    if chosen not in ws.classes:
        chosen = ws.favourable_default()
        chosen = chosen if chosen is not None else ws.classes[-1]
    return chosen, ws.class_name(chosen)


def controls(ws: DataAndModel, result: FitResult, key: str = "audit") -> AuditSettings | None:
    """The audit's settings. The grouping columns, reference, interval level, minimum group size and practical
    threshold are kept across pages (:func:`_prefs`), per data."""
    columns = group_columns(ws)
    if not columns:
        st.warning("No column with between 2 and 50 values to group individuals by.", icon=":material/warning:")
        return None
    prefs = _prefs().setdefault(ws.data.key, {})
    default = prefs.get("column") if prefs.get("column") in columns else default_column(ws, columns)
    c1, c2 = st.columns([3, 2])
    with c1:
        column = st.selectbox("Group individuals by", columns,
                              index=columns.index(default) if default in columns else None, key=f"{key}_column",
                              placeholder="Choose a column (e.g. a protected attribute)",
                              format_func=lambda c: f"{ws.feature_name(c)}  ({column_role(ws, c)})",
                              help="Any column of the data, including columns the model never sees (mark them "
                                   "'not a feature (audit only)' when uploading). Numeric columns with many values "
                                   "are split into quartiles.")
        seconds = [NO_SECOND, *(c for c in columns if c != column)]
        second = st.selectbox("… and by (intersections, optional)", seconds,
                              index=seconds.index(prefs.get("second")) if prefs.get("second") in seconds else 0,
                              key=f"{key}_second",
                              format_func=lambda c: c if c == NO_SECOND else f"{ws.feature_name(c)}  ({column_role(ws, c)})",
                              help="Groups of both columns at once (e.g. sex = F and age 18–30); the small-group "
                                   "rule applies to every intersection.")
    with c2:
        target, target_label = target_controls(ws, result, key)
    if column is None:
        st.info("**Choose the column to group individuals by.** No column with a few values looks like the usual "
                "one (a protected attribute kept 'audit only', or a categorical feature such as sex).",
                icon=":material/group:")
        return None
    prefs["column"], prefs["second"] = column, second
    # kept for the report built from saved settings (:func:`restore`); the widget itself starts from the sidebar
    prefs["target"], prefs["target_label"] = (tuple(target) if isinstance(target, list) else target), target_label
    pop = ui.population(ws, key=f"{key}_pop", choices=("all", "test", "filter"),
                        default=prefs.get("population", "test" if len(ws.data.test_index) else "all"),
                        label="Audit population")
    prefs["population"] = session.widget_value(f"{key}_pop_mode", prefs.get("population"))
    prefs["population_spec"] = pop.spec  # a filter's choices too: the report rebuilds the audit from them
    c3, c4, c5 = st.columns(3)
    confidence = c3.select_slider("Confidence level", CONFIDENCES, value=prefs.get("confidence", 0.95),
                                  key=f"{key}_confidence", format_func=lambda c: f"{c:.0%}")
    min_size = c4.number_input("Minimum group size", 2, 10_000, value=int(prefs.get("min_size", 30)), step=5,
                               key=f"{key}_min_size",
                               help="Groups with fewer individuals needing recourse are shown but never called a "
                                    "clear difference.")
    practical = c5.number_input("Practical threshold (points)", 0.0, 100.0,
                                value=float(prefs.get("practical", PRACTICAL_DEFAULT)), step=1.0,
                                key=f"{key}_practical",
                                help="A gap is called clear only when it is at least this large — in percentage "
                                     "points for shares, in percent of the reference group's value for means — and "
                                     "its confidence interval excludes zero. Red: worse for the group than for the "
                                     "reference; green: better.")
    prefs.update(confidence=float(confidence), min_size=int(min_size), practical=float(practical))
    ref_key = reference_key(key, grouping_name(column, None if second == NO_SECOND else second))
    if session.has_widget(ref_key):  # the reference widget (below the run) was just changed
        chosen = session.widget_value(ref_key)
        prefs["reference"] = None if chosen == LARGEST else chosen
    return AuditSettings(column=column, population=pop, target=target, target_label=target_label,
                         confidence=float(confidence), min_group_size=int(min_size), practical=float(practical),
                         second=None if second == NO_SECOND else second, reference=prefs.get("reference"))


def grouping_name(column, second) -> str:
    """A grouping in words: ``column``, or ``column × second`` for intersections (:attr:`AuditRun.column`)."""
    return str(column) if second is None else f"{column} × {second}"


def reference_key(key: str, grouping: str) -> str:
    """The reference widget's key: one per grouping. Streamlit 1.67 keys a selectbox by its ``key`` alone and the
    browser keeps the chosen option's *text*, so one key across groupings showed "the largest group
    (Foreign_worker = A201)" while grouping by age; a new grouping is a new widget."""
    return f"{key}_reference:{grouping}"


def reference_control(ws: DataAndModel, run_: "AuditRun", key: str = "audit") -> str | None:
    """Choose the group every other group is compared with (default: the largest); kept across pages. Returns the
    choice (a group label, "rest", or None for the largest)."""
    res = run_.result
    prefs = _prefs().setdefault(ws.data.key, {})
    options = [LARGEST, *res.groups, REST]
    chosen = prefs.get("reference") if prefs.get("reference") in options else LARGEST
    largest = _largest(res)
    value = st.selectbox("Compare every group with", options, index=options.index(chosen),
                         key=reference_key(key, run_.column),
                         format_func=lambda g: (f"the largest group ({res.display(largest)})" if g == LARGEST
                                                else "everyone else (the rest of the population)" if g == REST
                                                else res.display(g)),
                         help="The reference group: gaps are each group's value minus the reference's. The largest "
                              "group is the default; choose the group a policy protects, or everyone else.")
    prefs["reference"] = None if value == LARGEST else value
    return prefs["reference"]


def _largest(res) -> str:
    table = res.table()
    usable = table[table["n"] > 0]
    pool = usable if len(usable) else table
    return str(pool.loc[pool["n_total"].idxmax(), "group"])


# ============================================================================================ running
def run(ws: DataAndModel, result: FitResult, settings: AuditSettings) -> AuditRun | None:
    """The audit for these settings (cached per session); problems become a message and ``None``."""
    index = settings.population.index
    if len(index) == 0:
        st.warning("The population is empty; widen the filter.", icon=":material/filter_alt_off:")
        return None
    try:
        return compute(ws, result, settings)
    except TCRExError as exc:
        st.warning(f"The audit cannot run with these settings: {exc}", icon=":material/warning:")
        return None


def compute(ws: DataAndModel, result: FitResult, settings: AuditSettings) -> AuditRun:
    """The audit for these settings, cached per session (one owner for the page and the report built from saved
    settings, :func:`restore`), remembered as the last audit; raises :class:`~tcrex.errors.TCRExError`."""
    index = settings.population.index
    groups, binned = group_values(ws, settings.column)
    column = settings.column
    if settings.second is not None:  # intersections: the engine joins the two groupings
        other, binned_other = group_values(ws, settings.second)
        groups = pd.concat([groups.rename(str(settings.column)), other.rename(str(settings.second))], axis=1)
        binned = binned or binned_other
        column = grouping_name(settings.column, settings.second)
    key = sources.sha256("audit", result.key, settings.column, settings.second, repr(settings.target),
                         settings.confidence, settings.min_group_size, repr(settings.reference),
                         np.asarray(index).tobytes() if index.dtype.kind in "iu" else list(index))

    def build() -> AuditRun:
        X = ws.X.loc[index]
        y = ws.y_pred[ws.X.index.get_indexer(index)]
        kwargs = dict(y_pred=y, model=verification.checker(ws), target=settings.target, n_boot=N_BOOT,
                      confidence=settings.confidence, min_group_size=settings.min_group_size, random_state=0,
                      class_names=ws.class_names)
        # the page's own check of every row (the "verified" headline's frame): the audit aggregates it rather than
        # asking the model again, so both speak of the same people and the same advice
        checked = verification.verified_rows(ws, result) if kwargs["model"] is not None else None
        if checked is not None and not checked.sampled and index.isin(checked.frame.index).all():
            kwargs["counterfactuals"] = checked.frame.loc[index]

        def run_audit():
            try:
                return audit(result.explainer, X, groups.loc[index], reference=settings.reference, **kwargs)
            except TCRExError:
                if settings.reference is None:
                    raise
                # the chosen group is not in this population: the largest instead
                return audit(result.explainer, X, groups.loc[index], **kwargs)

        try:
            res = run_audit()
        except ParameterError as exc:  # the check was of another favourable outcome: verify the audit's own rows
            if kwargs.pop("counterfactuals", None) is None or "counterfactuals" not in str(exc):
                raise
            res = run_audit()
        return AuditRun(result=res, fit_key=result.key, column=column,
                        population=settings.population.label, target_label=settings.target_label, binned=binned)

    with st.spinner("Auditing recourse by group ..."):
        # the bundled sample's audits are the same for every session: computed once per server
        run_ = caching.cached("audits", key, lambda: shared.once(result, "audit", key, build))
    run_ = replace(run_, practical=settings.practical)  # a display setting: the cached computation is shared
    session.set_last_audit(run_)
    workspace.record("audit", {"column": column, "second": settings.second, "population": settings.population.label,
                               "target": run_.target_label, "confidence": settings.confidence,
                               "min_group_size": settings.min_group_size, "reference": repr(settings.reference)},
                     once_key=key)
    return run_


def saved_settings(ws: DataAndModel) -> AuditSettings | str | None:
    """The audit's settings as the workspace saved them (:data:`tcrex.ui.state.session.AUDIT_PREFS`), without
    drawing a widget; a sentence saying why they cannot be used; or None when this data was never audited."""
    prefs = _prefs().get(ws.data.key) or {}
    column = prefs.get("column")
    if column is None:
        return None
    columns = group_columns(ws)
    second = None if prefs.get("second") in (None, NO_SECOND) else prefs.get("second")
    missing = [c for c in (column, second) if c is not None and c not in columns]
    if missing:
        return f"the saved grouping column {missing[0]!r} cannot group this data"
    mode = prefs.get("population") or ("test" if len(ws.data.test_index) else "all")
    pop = ui.population_from_spec(ws, prefs.get("population_spec")) or ui.population_of(ws, mode)
    if pop is None:
        return "its population is a filter this data no longer has; open the Subgroup audit page to run it"
    target, target_label = saved_target(ws, prefs)
    return AuditSettings(column=column, population=pop, target=target, target_label=target_label,
                         confidence=float(prefs.get("confidence", 0.95)),
                         min_group_size=int(prefs.get("min_size", 30)),
                         practical=float(prefs.get("practical", PRACTICAL_DEFAULT)), second=second,
                         reference=prefs.get("reference"))


def restore(ws: DataAndModel, result: FitResult) -> AuditRun | str | None:
    """The audit of the saved settings (:func:`saved_settings`), through the page's own :func:`compute`; a sentence
    saying why it cannot be run; or None when this data was never audited."""
    settings = saved_settings(ws)
    if settings is None or isinstance(settings, str):
        return settings
    if not len(settings.population.index):
        return "its population is empty"
    try:
        return compute(ws, result, settings)
    except TCRExError as exc:
        return f"it cannot run with the saved settings: {exc}"


def last_audit(result: FitResult) -> AuditRun | None:
    """The last audit run on this fitted explainer (for the report), if any."""
    run_ = session.last_audit()
    return run_ if run_ is not None and run_.fit_key == result.key else None


# ============================================================================================ showing
def findings(run_: AuditRun, practical: float = PRACTICAL_DEFAULT) -> None:
    """The plain-language findings as the page's headline: overview, clear gaps (red: interval excludes zero and
    at least ``practical`` points; the rule is :func:`tcrex.audit.clear_gaps`), then the rest."""
    res = run_.result
    # once per audit result (the default audit is one result for every session): its wording took half the page run
    found = caching.derived(res, ("split_findings", practical), lambda: split_findings(res, practical))
    if found is None:
        return
    with st.container(border=True):
        st.markdown(f"**{found.overview}**")
        for s in found.clear_worse:  # by direction: worse for the group red, better green (never "any gap" red)
            st.markdown(f"- :red[**{s}**] *(worse for this group)*")
        for s in found.clear_better:
            st.markdown(f"- :green[**{s}**] *(better for this group)*")
        if not found.clear and found.compared:
            st.markdown(f"- :green[**No clear difference between the groups** (none at least {practical:g} points "
                        f"with a {res.confidence:.0%} interval excluding zero).]")
        for s in found.below:
            st.markdown(f"- {s} *(below the practical threshold of {practical:g} points)*")
        for s in found.other:
            st.markdown(f"- {s}")
    st.caption("Gaps are differences from the reference group with percentile-bootstrap intervals "
               f"({res.n_boot} resamples); a gap is *clear* when it is at least {practical:g} percentage points "
               "(shares) or percent of the reference value (means), its interval excludes zero and both groups have "
               f"at least {res.min_group_size} individuals — red when the group fares worse than the reference (less "
               "recourse, more changes, a longer distance), green when it fares better. Expect about one in twenty "
               "intervals to exclude zero by "
               "chance; the intervals are not adjusted for multiple comparisons. Differences are associations, not "
               "causes (see docs/audit.md).")


def hints(ws: DataAndModel, result: FitResult, run_: AuditRun, key: str = "audit") -> None:
    """What to do about it, as buttons: mark the grouping feature immutable when people are told to change it
    (the finding says so), and the suggested actionability constraints not applied yet."""
    res = run_.result
    told = res.group_is_feature and any("consider marking it immutable" in f
                                        for f in caching.derived(res, "findings", res.findings))
    if told:
        constraints.immutable_button(ws, res.group_column, key)
    constraints.suggestions_panel(ws, result, key)


def top_rules_table(res, result: FitResult, ws: DataAndModel) -> pd.DataFrame:
    """The most frequent rules per group, named by their public id and their outcome ("toward Good"), never by
    the internal index of the target entry."""
    top = res.top_rules(k=3)
    if not len(top):
        return top
    out = ui.with_rule_ids(top, result.explainer)
    out.insert(1, "toward", [ws.target_name(result.explainer.targets_[int(t)].target) for t in out["target"]])
    return out.drop(columns=["target"])


def table(run_: AuditRun) -> pd.DataFrame:
    """The per-group table in the words of the audit's basis (verified on the model, or rules only)."""
    t = run_.result.table()
    columns = TABLE_COLUMNS if run_.result.verified else RULE_TABLE_COLUMNS
    return t[[c for c in columns if c in t.columns]].rename(columns=columns)


TABLE_CONFIG = {
    "share with verified recourse": st.column_config.ProgressColumn(
        "share with verified recourse", format="percent", min_value=0.0, max_value=1.0,
        help="Share of the group's individuals needing recourse with a point that changes exactly what their advice "
             "names and that the model confirms"),
    "share with a rule": st.column_config.ProgressColumn(
        "share with a rule", format="percent", min_value=0.0, max_value=1.0,
        help="Rules only — not checked on a model: share of the group's individuals needing recourse to whom a rule "
             "applies"),
    "mean changes": st.column_config.NumberColumn("mean changes", format="%.2f",
                                                  help="Features the verified advice changes"),
    "mean changes (rules)": st.column_config.NumberColumn("mean changes (rules)", format="%.2f",
                                                          help="Features the rule asks to change (not checked on a "
                                                               "model; 0 for someone already inside the rule)"),
    "mean distance": st.column_config.NumberColumn("mean distance", format="%.3f",
                                                   help="Total percentile shift to the verified point"),
    "mean distance (rules)": st.column_config.NumberColumn("mean distance (rules)", format="%.3f",
                                                           help="Total percentile shift to the rule's nearest point"),
    "mean feasibility": st.column_config.NumberColumn("mean feasibility", format="percent"),
    "mean accuracy": st.column_config.NumberColumn("mean accuracy", format="percent"),
}


def _figure(builder: Callable[..., Any], result, *args, height: int | None = None, **kwargs):
    """``builder(result, *args, **kwargs)`` prepared for drawing at ``height`` (:func:`ui.prepare_figure`): built once
    per audit result, arguments and height (the default audit of the bundled sample is one result for every
    session, and its four figures took 1.1 s of the page to build). Returns ``(figure, height)``; the figure is drawn
    as it is (:func:`ui.draw_prepared` only reads it), so it is never copied: a deep copy of each figure took about
    as long as the rest of the page's run."""
    key = (builder.__module__, builder.__qualname__, tuple(repr(a) for a in args),
           tuple(sorted((k, repr(v)) for k, v in kwargs.items())), height)
    return caching.derived(result, key, lambda: ui.prepare_figure(builder(result, *args, **kwargs), height,
                                                                  legend_below=False))


def audit_chart(builder: Callable[..., Any], *args, height: int | None = None, key: str | None = None,
                **kwargs) -> None:
    """Draw the audit figure ``builder(*args, **kwargs)`` (a failure becomes a message); built once per audit
    result and arguments (:func:`_figure`)."""
    try:
        fig, height = _figure(builder, *args, height=height, **kwargs)
    except TCRExError as exc:
        st.warning(str(exc), icon=":material/warning:")
        return
    except Exception as exc:  # noqa: BLE001 - a figure failure must not take the page down
        st.error(f"This figure could not be drawn ({type(exc).__name__}: {exc}).", icon=":material/error:")
        return
    ui.draw_prepared(fig, height=height, key=key)


def metric_choice(key: str, res=None) -> str:
    """The metric of the bar chart, named in the words of the audit ``res``'s basis (verified or rules only)."""
    labels = {**BAR_METRICS, **({m: v[0] for m, v in res.metrics.items()} if res is not None else {})}
    options = [m for m in BAR_METRICS]
    return st.segmented_control("Compare", options, default="recourse_share", key=key, required=True,
                                format_func=labels.get) or "recourse_share"
