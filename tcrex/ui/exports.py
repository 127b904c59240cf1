"""Exports of the current state: JSON, CSV and a self-contained HTML report.

Each ``*`` function returns a zero-argument callable, so ``st.download_button(data=...)`` builds the file only
when the user clicks.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

import numpy as np
import pandas as pd
import streamlit as st

from .state import FitResult, Workspace


def rules_json(result: FitResult) -> Callable[[], str]:
    return lambda: result.explainer.to_json(indent=2)


def explanations_frame(ws: Workspace, result: FitResult) -> pd.DataFrame:
    out = result.explanations.copy()
    out.insert(0, "split", np.where(ws.X.index.isin(ws.data.test_index), "test", "fit"))
    out.insert(1, "model_output", ws.y_pred)
    out.insert(0, "row", ws.X.index)
    targets = {t: s.target.describe() for t, s in enumerate(result.explainer.targets_)}
    out.insert(out.columns.get_loc("target") + 1, "target_description",
               out["target"].map(lambda t: targets.get(t, "") if pd.notna(t) else ""))
    return out


def explanations_csv(ws: Workspace, result: FitResult) -> Callable[[], str]:
    return lambda: explanations_frame(ws, result).to_csv(index=False)


def provenance(ws: Workspace, result: FitResult, audit=None) -> dict:
    """What the report records; ``audit`` is the :class:`tcrex.ui.auditing.AuditRun` to include, if any."""
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
        "target": p.describe_target(ws.task),
        "tau": p.tau, "rho": p.rho, "surrogate trees": p.n_trees, "grid cell limit": p.max_cells,
        "fit rows": len(ws.data.fit_index), "test rows": len(ws.data.test_index),
        "surrogate grower": p.grower + (f" (used: {result.explainer.grower_})"
                                        if getattr(result.explainer, "grower_", None) else ""),
        "actionability constraints": "none" if constraints is None else constraints.describe(),
        "rules / metarules / grid cells": f"{result.n_rules} / {result.n_metarules} / {result.n_cells:,}",
        "subgroup audit": audit.title if audit is not None else
        "not run (run one on the Subgroup audit page to include it in the report)",
    }


def provenance_table(ws: Workspace, result: FitResult, audit=None) -> pd.DataFrame:
    items = provenance(ws, result, audit)
    return pd.DataFrame({"item": list(items), "value": [str(v) for v in items.values()]})


def build_html(ws: Workspace, result: FitResult, generated_at: datetime | None = None, individual=None,
               audit=None) -> str:
    """The self-contained HTML report; ``audit`` (an :class:`~tcrex.ui.auditing.AuditRun`) adds its findings, table
    and gap forest plot."""
    from tcrex import figures as fg
    from tcrex import report

    from .components import current_individual, used_features

    ex = result.explainer
    p = result.params
    test = ws.data.test_index if len(ws.data.test_index) else ws.X.index
    figs = {"Rules overview": fg.rules_overview(ex)}
    actions = result.actions(ws).loc[test]
    figs["Change or keep, per feature (test split)"] = fg.change_keep_bars(actions)
    figs["Changes per individual (test split)"] = fg.changes_histogram(result.explanations.loc[test])
    row = individual if individual is not None else current_individual(ws, result)
    for t, sol in enumerate(ex.targets_):
        used = [f for f in used_features(result, t) if f in ws.features]
        axes = (used + [f for f in ws.features if f not in used])[:2]
        if len(axes) == 2 and sol.n_rules:
            figs[f"Rule map: {axes[0]} × {axes[1]}, target {sol.target.describe()}"] = fg.rule_plot(
                ex, t, axes[0], axes[1], ws.X, ws.y_pred, individual=row, max_points=2000)
    tables = {}
    exp = ex.explain_one(ws.X.loc[[row]], y_pred=[ws.y_pred[ws.X.index.get_loc(row)]])
    tables[f"Individual (row {row}): {exp.text}"] = fg.individual_table(exp, ws.X.loc[row])
    if exp.alternatives:
        tables[f"Metacounterfactuals of row {row}"] = fg.metacounterfactual_table(exp)
    prov = provenance(ws, result, audit)
    return report.build_report(
        ex, title=f"T-CREx report — {ws.data.label}",
        data_description=prov["data"], data_fingerprint=ws.data.key,
        model_description=prov["model"] + (f" ({prov['model score']})" if ws.model.score is not None else ""),
        model_fingerprint=ws.model.key,
        params={"tau": p.tau, "rho": p.rho, "surrogate trees": p.n_trees, "grid cell limit": p.max_cells,
                "target": p.describe_target(ws.task), "task": ws.task, "fit rows": len(ws.data.fit_index),
                "test rows": len(ws.data.test_index), "surrogate grower": p.grower,
                "actionability constraints": prov["actionability constraints"]},
        figures=figs, tables=tables, generated_at=generated_at or datetime.now(timezone.utc),
        audit=None if audit is None else audit.result, audit_title=None if audit is None else audit.title)


def html_report(ws: Workspace, result: FitResult) -> Callable[[], str]:
    """The report builder for ``st.download_button``; includes the last subgroup audit of this explainer."""
    from .auditing import last_audit

    audit = last_audit(result)

    def build() -> str:
        with st.spinner("Building the report ..."):
            return build_html(ws, result, audit=audit)
    return build
