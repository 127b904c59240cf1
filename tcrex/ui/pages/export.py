"""Exports of the current state: JSON, CSV and a self-contained HTML report.

Each ``*`` function returns a zero-argument callable, so ``st.download_button(data=...)`` builds the file only
when the user clicks.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Callable

import numpy as np
import pandas as pd
import streamlit as st

from tcrex import figures as fg
from tcrex import conform_dtypes, report, spreadsheet
from tcrex.vocabulary import is_verified, plain_words, RECOURSE_PLAIN, SOURCE_TEXT, STATUS_PLAIN
from tcrex.population import PRACTICAL_DEFAULT

from ..state import verification
from . import audit as audit_page
from . import compare as compare_page
from .audit import AuditRun, last_audit
from .compare import ComparisonRun, last_comparison
from ..state import session
from ..widgets.components import current_individual, used_features
from ..state.active import FitResult, DataAndModel, export_dictionary, measure_model  # noqa: F401 - export_dictionary: the Export page asks this module


def rules_json(result: FitResult, class_names: dict | None = None, dictionary=None) -> Callable[[], str]:
    """The rules JSON, with the codebook (the fit carries it), the classes' names (``class_names``, the data's
    as the pages say them) and the data dictionary with its actionability and history flags (``dictionary``:
    :func:`tcrex.ui.state.active.export_dictionary`; the fit itself takes them from the constraints editor) kept in
    it, so a reload says what the pages said."""
    def build() -> str:
        ex = result.explainer
        names = {c: n for c, n in (class_names or {}).items() if c in set(getattr(ex, "classes_", []))}
        relabel = {}
        if names and names != (ex.class_names or {}):
            relabel["class_names"] = names
        if dictionary is not None and dictionary != getattr(ex, "dictionary_", None):
            relabel["dictionary"] = dictionary
        if relabel:
            ex = copy.deepcopy(ex).update(**relabel)
        return ex.to_json(indent=2)
    return build


def explanations_frame(ws: DataAndModel, result: FitResult) -> pd.DataFrame:
    """Every row's explanation for the CSV export: split, model output (with class names), the target it is
    explained toward, rule and metarule (their indices within the target and their ids ``rule_id`` / ``metarule_id``,
    as the tables show them), changes, status, text and, where a model checked it, whether the recommended point
    works (``recourse``, ``recourse_verified``), where the point comes from (``point_source``), the rule whose point
    was verified (``recommended_rule_id``), the features it changes (``changed``) and the sentence stating the
    verified values (``verified_text``). With the model's check, ``changes`` counts the confirmed point's changes
    (empty for a person without one) and the rule's own count moves to ``rule_changes_not_checked``.

    Statuses, recourse outcomes and point sources are plain words (:data:`tcrex.vocabulary.STATUS_PLAIN`,
    ``RECOURSE_PLAIN``, ``SOURCE_TEXT``); their machine codes follow in ``status_code``, ``recourse_code`` and
    ``point_source_code``."""
    out = result.explanations.copy()
    out.insert(0, "split", np.where(ws.X.index.isin(ws.data.test_index), "test", "fit"))
    out.insert(1, "model_output", ws.y_pred)
    if ws.data.class_names:
        out.insert(2, "model_output_name", [ws.class_name(v) for v in ws.y_pred])
    out.insert(0, "row", ws.X.index)
    targets = {t: ws.target_name(s.target) for t, s in enumerate(result.explainer.targets_)}
    out.insert(out.columns.get_loc("target") + 1, "target_description",
               out["target"].map(lambda t: targets.get(t, "") if pd.notna(t) else ""))
    target_index = out.pop("target")  # the internal index of the target entry: never shown to a person
    ex = result.explainer
    # ids looked up per (target, index) from tables built once: a call per row would cost seconds on big exports
    rule_ids = {(t, r): ex.rule_id(t, r) for t, sol in enumerate(ex.targets_) for r in range(sol.n_rules)}
    meta_ids = {(t, m): ex.metarule_id(t, m) for t, sol in enumerate(ex.targets_) for m in range(len(sol.metarules))}
    for column, table in (("rule", rule_ids), ("metarule", meta_ids)):
        out.insert(out.columns.get_loc(column) + 1, f"{column}_id",
                   [table.get((int(t), int(i))) if pd.notna(t) and pd.notna(i) else None
                    for t, i in zip(target_index, out[column])])
    rows = verification.verified_rows(ws, result)
    if rows is not None and not rows.sampled:
        frame = rows.frame.reindex(out.index)
        verified = is_verified(frame)
        out["recourse"] = plain_words(frame["recourse"], RECOURSE_PLAIN)
        out["recourse_verified"] = pd.array(verified, dtype="boolean")
        out.loc[frame["recourse"].isna().to_numpy(), "recourse_verified"] = pd.NA
        out["point_source"] = plain_words(frame["source"], SOURCE_TEXT)
        out["recommended_rule_id"] = [rule_ids.get((int(t), int(r))) if pd.notna(t) and pd.notna(r) else None
                                      for t, r in zip(target_index, frame["recommended_rule"])]
        out["changed"] = ["; ".join(c) if isinstance(c, tuple) else "" for c in frame["changed"]]
        out["verified_text"] = frame["text"]
        # the changes a person is asked to make are the confirmed point's; the rule's own count is kept apart,
        # said as not checked (a person inside a rule the model does not confirm is never "0 changes")
        rule_changes = out.pop("changes")
        out.insert(out.columns.get_loc("status"), "changes",
                   pd.array(np.where(verified, frame["n_changes"].fillna(0).astype(int), 0), dtype="Int64"))
        out.loc[~verified, "changes"] = pd.NA
        out[RULE_CHANGES_COLUMN] = rule_changes
        out["recourse_code"] = frame["recourse"].astype(object)
        out["point_source_code"] = frame["source"].astype(object)
    out["status_code"] = out["status"].astype(object)
    out["status"] = plain_words(out["status"], STATUS_PLAIN)
    return out


#: The CSV's column of the changes each person's rule asks for, once the model checked the advice.
RULE_CHANGES_COLUMN = "rule_changes_not_checked"


def explanations_csv(ws: DataAndModel, result: FitResult) -> Callable[[], str]:
    """The explanations as CSV, safe to open in a spreadsheet (formula-leading text neutralised)."""
    return lambda: spreadsheet.to_csv(explanations_frame(ws, result))


def provenance(ws: DataAndModel, result: FitResult, audit=None) -> dict:
    """What the report records; ``audit`` is the :class:`tcrex.ui.pages.audit.AuditRun` to include, if any."""
    p = result.params
    constraints = getattr(result.explainer, "constraints_", None)
    return {
        "data": f"{ws.data.label}: {ws.data.n_rows:,} rows, {len(ws.features)} features"
                + (f", label column {ws.data.label_column!r}" if ws.data.label_column else ""),
        "data fingerprint (SHA-256 of the content)": ws.data.key,
        "model": f"{ws.model.label} — {ws.model.description}",
        "model fingerprint (SHA-256)": ws.model.key,
        "model score": "n/a" if ws.model.score is None else f"{ws.model.score_name}: {ws.model.score:.4f}",
        "task": ws.task,
        "favourable outcome": p.describe_target(ws.task, ws.class_name),
        "tau": p.tau, "rho": p.rho, "surrogate trees": p.n_trees, "grid cell limit": p.max_cells,
        "fit rows": len(ws.data.fit_index), "test rows": len(ws.data.test_index),
        "surrogate grower": p.grower + (f" (used: {result.explainer.grower_})"
                                        if getattr(result.explainer, "grower_", None) else ""),
        "actionability constraints": "none" if constraints is None else constraints.describe(),
        "rules / metarules / grid cells": f"{result.n_rules} / {result.n_metarules} / {result.n_cells:,}",
        "subgroup audit": audit.title if audit is not None else
        "not run (run one on the Subgroup audit page to include it in the report)",
    }


def provenance_table(ws: DataAndModel, result: FitResult, audit=None) -> pd.DataFrame:
    items = provenance(ws, result, audit)
    # a value not set reads "not set", never "None"
    return pd.DataFrame({"item": list(items), "value": ["not set" if v is None else str(v) for v in items.values()]})


def chosen_individuals(ws: DataAndModel, result: FitResult) -> list:
    """What the Individual page has chosen: its row and, when the user edited values there, the edited
    individual as ``("edited", values)``."""
    out = [current_individual(ws, result)]
    edited = session.edited_individual()
    if edited:
        out.append(("edited", dict(edited)))
    return out


def _individual_entry(ws: DataAndModel, result: FitResult, choice):
    ex = result.explainer
    if isinstance(choice, tuple) and choice and choice[0] == "edited":
        x = pd.DataFrame([choice[1]])[ws.features].infer_objects()
        x = conform_dtypes(x, ws.X)  # the fit data's dtypes where they keep every value
        if ws.model.predict is None:
            return None
        exp = ex.explain_one(x, y_pred=[np.asarray(ws.model.predict(x))[0]], model=_checker(ws),
                             class_names=ws.class_names)
        return "Edited individual (values entered on the Individual page)", (exp, x.iloc[0])
    exp = ex.explain_one(ws.X.loc[[choice]], y_pred=[ws.y_pred[ws.X.index.get_loc(choice)]], model=_checker(ws),
                         class_names=ws.class_names)
    return f"Row {choice}", (exp, ws.X.loc[choice])


def _checker(ws: DataAndModel):
    return verification.checker(ws)


def build_html(ws: DataAndModel, result: FitResult, generated_at: datetime | None = None, individual=None,
               audit=None, individuals: list | None = None, include_rows: bool = False,
               interactive: bool = False, comparison=None) -> str:
    """The self-contained stakeholder report for the individuals chosen on the Individual page (``individuals``:
    row labels or ``("edited", values)``; ``individual`` is one row label, for older callers). ``audit`` (an
    :class:`~tcrex.ui.pages.audit.AuditRun`) adds its findings. By default the report carries aggregates, rules and
    the chosen individuals only and has no scripts; ``include_rows`` embeds row-level data (first 500 rows, with
    model output) and ``interactive`` adds plotly charts (rule maps, with their sampled points, only together with
    ``include_rows``). ``comparison`` (a :class:`~tcrex.ui.pages.compare.ComparisonRun`) adds the comparison with
    another model."""
    ex = result.explainer
    p = result.params
    if individuals is None:
        individuals = [individual] if individual is not None else chosen_individuals(ws, result)
    chosen = dict(e for e in (_individual_entry(ws, result, c) for c in individuals) if e is not None)
    figs = {}
    if interactive:
        test = ws.data.test_index if len(ws.data.test_index) else ws.X.index
        names = ws.data.class_names or None
        figs["Rules overview"] = fg.rules_overview(ex, class_names=names)
        figs["Change or keep, per feature (test split)"] = fg.change_keep_bars(result.actions(ws).loc[test])
        figs["Changes per individual (test split)"] = fg.changes_histogram(result.explanations.loc[test])
        first = next((c for c in individuals if not isinstance(c, tuple)), None)
        for t, sol in enumerate(ex.targets_):
            used = [f for f in used_features(result, t) if f in ws.features]
            axes = (used + [f for f in ws.features if f not in used])[:2]
            if include_rows and len(axes) == 2 and sol.n_rules:
                figs[f"Rule map: {axes[0]} × {axes[1]}, target {ws.target_name(sol.target)}"] = fg.rule_plot(
                    ex, t, axes[0], axes[1], ws.X, ws.y_pred, fg.RulePlotOptions(individual=first, max_points=2000,
                                                                                 class_names=names))
    rows = None
    if include_rows:
        rows = ws.X.copy()
        rows.insert(0, "model output", ws.y_pred)
    prov = provenance(ws, result, audit)
    options = report.ReportOptions(
        title=f"T-CREx report — {ws.data.label}",
        data_description=prov["data"], data_fingerprint=ws.data.key,
        model_description=prov["model"] + (f" ({prov['model score']})" if ws.model.score is not None else ""),
        model_fingerprint=ws.model.key,
        params={"tau": p.tau, "rho": p.rho, "surrogate trees": p.n_trees, "grid cell limit": p.max_cells,
                "favourable outcome": p.describe_target(ws.task, ws.class_name), "task": ws.task, "fit rows": len(ws.data.fit_index),
                "test rows": len(ws.data.test_index), "surrogate grower": p.grower,
                "actionability constraints": prov["actionability constraints"]},
        figures=figs, tables={}, generated_at=generated_at or datetime.now(timezone.utc),
        audit=None if audit is None else audit.result, audit_title=None if audit is None else audit.title,
        audit_practical=PRACTICAL_DEFAULT if audit is None else audit.practical,
        individuals=chosen, explanations=result.explanations, actions=result.actions(ws),
        rows=rows, include_rows=include_rows, effectiveness=verification.effectiveness(ws, result),
        counterfactuals=_verified_frame(ws, result), summary=verification.summary_text(ws, result),
        people=None if _verified_frame(ws, result) is None else ws.X.loc[_verified_frame(ws, result).index],
        outcome_names={t: ws.target_name(sol.target) for t, sol in enumerate(ex.targets_)},
        class_names=ws.data.class_names or None, model_performance=measure_model(ws, p.target),
        comparison=None if comparison is None else comparison.result,
        comparison_title=None if comparison is None else comparison.title)
    return report.build_report(ex, options)


def _verified_frame(ws: DataAndModel, result: FitResult) -> pd.DataFrame | None:
    """The points checked on the model (the same rows as the report's verified counts), or None without a model:
    the report's "How hard it is" then counts the advice people get."""
    rows = verification.verified_rows(ws, result)
    return None if rows is None else rows.frame


@dataclass
class ReportSections:
    """The subgroup audit and the comparison the report will hold, and what the Export page says of them."""

    audit: AuditRun | None = None
    comparison: ComparisonRun | None = None
    #: a line per section built from the saved settings, or that the saved settings could not rebuild
    notes: list[str] = field(default_factory=list)


def report_sections(ws: DataAndModel, result: FitResult) -> ReportSections:
    """The audit and the comparison for the report: the last ones of this fit, else those the workspace's saved
    settings describe, computed now through the Subgroup audit and Compare models pages' own cached functions
    (:func:`tcrex.ui.pages.audit.restore`, :func:`tcrex.ui.pages.compare.restore`). A workspace keeps settings,
    never results: after a restart or from a shared link the report lost both sections until those pages were
    visited again. Settings that cannot be used are said in a note, never dropped silently."""
    out = ReportSections(audit=last_audit(result), comparison=last_comparison(result))
    if out.audit is None:
        restored = audit_page.restore(ws, result)
        if isinstance(restored, str):
            out.notes.append(f"no subgroup audit: the saved audit settings cannot be used — {restored}")
        elif restored is not None:
            out.audit = replace(restored, restored=True)
            session.set_last_audit(out.audit)
    if out.comparison is None:
        restored = compare_page.restore(ws, result)
        if isinstance(restored, str):
            out.notes.append(f"no comparison with another model: the saved comparison cannot be rebuilt — {restored}")
        elif restored is not None:
            out.comparison = replace(restored, restored=True)
            session.set_last_comparison(out.comparison)
    if out.audit is not None and out.audit.restored:
        out.notes.append(f"audit by {out.audit.column}: computed from the saved settings")
    if out.comparison is not None and out.comparison.restored:
        grouped = f" by {out.comparison.column}" if out.comparison.column else ""
        out.notes.append(f"comparison with {out.comparison.model_b_label}{grouped}: computed from the saved settings")
    return out


def report_options(key: str = "report") -> dict:
    """The report's three opt-ins, drawn where the Export page calls it; all off by default (a board copy carries
    no one's values unless asked)."""
    include_person = st.checkbox("Include the chosen person", value=False, key=f"{key}_person",
                                 help="The person chosen on the Individual page, with their feature values and "
                                      "advice. Off by default: a report to hand over names no individual.")
    include_rows = st.checkbox("Include row-level data (first 500 rows)", value=False, key=f"{key}_rows",
                               help="By default the report carries aggregates, rules and the chosen individuals "
                                    "only, not the uploaded table.")
    interactive = st.checkbox("Interactive charts (+4.9 MB of plotly.js, slower to open)", value=False, key=f"{key}_charts")
    return {"include_person": include_person, "include_rows": include_rows, "interactive": interactive}


def report_contents(ws: DataAndModel, result: FitResult, include_person: bool = False, include_rows: bool = False,
                    interactive: bool = False, sections: ReportSections | None = None) -> list[str]:
    """What the report will hold with these options, in the words of the report's own "This report contains"
    note (:func:`tcrex.report.report_contents`), for the Export page to show before the file is written; then
    ``sections``' notes (an audit or comparison computed from the saved settings, or why one could not be)."""
    sections = sections if sections is not None else ReportSections(last_audit(result), last_comparison(result))
    people = chosen_individuals(ws, result) if include_person else []
    return report.report_contents(len(people), rows=ws.data.n_rows if include_rows else None,
                                  total_rows=ws.data.n_rows, audit=sections.audit is not None,
                                  comparison=sections.comparison is not None,
                                  figures=interactive) + sections.notes


def pdf_available() -> bool:
    """Whether this server can print the report to PDF (Chromium is installed: :func:`tcrex.report.chromium`)."""
    return report.chromium() is not None


def pdf_report(ws: DataAndModel, result: FitResult, include_rows: bool = False, interactive: bool = False,
               include_person: bool = False, sections: ReportSections | None = None) -> Callable[[], bytes]:
    """The report printed to PDF by the server's Chromium (A4, the main part first, the appendix on its own
    pages), built on click: the same HTML as :func:`html_report` with the same options."""
    html = html_report(ws, result, include_rows=include_rows, interactive=interactive,
                       include_person=include_person, sections=sections)

    def build() -> bytes:
        text = html()
        with st.spinner("Printing the report to PDF ..."):
            return report.pdf_bytes(text)
    return build


def html_report(ws: DataAndModel, result: FitResult, include_rows: bool = False,
                interactive: bool = False, include_person: bool = False,
                sections: ReportSections | None = None) -> Callable[[], str]:
    """The report builder for ``st.download_button``, built on click; includes ``sections``' audit and comparison
    (default: the last ones of this explainer, :func:`report_sections`), and the individuals chosen now on the
    Individual page only with ``include_person`` (off by default: no one's values unless asked)."""
    audit = sections.audit if sections is not None else last_audit(result)
    comparison = sections.comparison if sections is not None else last_comparison(result)
    individuals = chosen_individuals(ws, result) if include_person else []

    def build() -> str:
        with st.spinner("Building the report ..."):
            return build_html(ws, result, audit=audit, individuals=individuals, include_rows=include_rows,
                              interactive=interactive, comparison=comparison)
    return build
