"""The global views of a fitted state: the rules and metarules frames and the textual summary."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import ParameterError
from ._lookup import change_keep
from ..fitting._solution import Solution
from ..fitting._state import FittedState, metarule_id, rule_id
from ...text import (NO_ACTIONABLE_RECOURSE, rule_changes_text, box_text, change_keep_sentence, if_sentence, inside_rule_sentence,
                   is_trivial_rule, pluralise, trivial_rule_note)

RULE_COLUMNS = ["target", "target_description", "rule", "rule_id", "conditions", "n", "feasibility", "accuracy",
                "complexity", "n_metarules"]
METARULE_COLUMNS = ["target", "metarule", "metarule_id", "rule", "rule_id", "conditions", "sparsity", "n_cells",
                    "change", "keep", "text", "paper_text"]


def _cached(state: FittedState, name: str, build) -> pd.DataFrame:
    """``build(state)`` once per state (``StateCache.frames``: a dashboard page asks for the metarules frame several
    times per run, and building it costs a noticeable share of a page on hundreds of metarules); each call gets a
    copy. ``update``/``recount`` make a new state, so a frame is never stale."""
    frames = state.cache.frames
    if name not in frames:
        frames[name] = build(state)
    return frames[name].copy()


def rules_frame(state: FittedState) -> pd.DataFrame:
    """Every rule of every fitted target with its n, feasibility, accuracy and complexity (tie-break order)."""
    return _cached(state, "rules", _rules_frame)


def metarules_frame(state: FittedState) -> pd.DataFrame:
    """Every metarule with its rule, worst-case sparsity and what to change / keep inside it."""
    return _cached(state, "metarules", _metarules_frame)


def _rules_frame(state: FittedState) -> pd.DataFrame:
    rows = []
    for t, sol in enumerate(state.solutions):
        complexity = sol.rules.complexity()
        n_meta = np.bincount(sol.metarule_rule[sol.metarule_rule >= 0], minlength=sol.n_rules)
        for r in range(sol.n_rules):
            rows.append({"target": t, "target_description": sol.target.describe(state.names()), "rule": r,
                         "rule_id": rule_id(state, t, r),
                         "conditions": box_text(state.schema, sol.rules, r), "n": int(sol.rule_n[r]),
                         "feasibility": float(sol.feasibility[r]), "accuracy": float(sol.accuracy[r]),
                         "complexity": int(complexity[r]), "n_metarules": int(n_meta[r])})
    return pd.DataFrame(rows, columns=RULE_COLUMNS)


def _metarules_frame(state: FittedState) -> pd.DataFrame:
    rows = []
    for t, sol in enumerate(state.solutions):
        for m in range(len(sol.metarules)):
            r = int(sol.metarule_rule[m])
            change, keep = metarule_change_keep(state, sol, m) if r >= 0 else ([], [])
            paper = change_keep_sentence(change, keep) if r >= 0 else NO_ACTIONABLE_RECOURSE
            # inside its rule everywhere: the people it serves are in the rule and not in the target, so the
            # paper's "no change needed" is not what they read (it stays in paper_text)
            text = inside_rule_sentence(rule_id(state, t, r), keep) if r >= 0 and not change else paper
            rows.append({"target": t, "metarule": m, "metarule_id": metarule_id(state, t, m),
                         "rule": r if r >= 0 else None,
                         "rule_id": rule_id(state, t, r), "conditions": box_text(state.schema, sol.metarules, m),
                         "sparsity": int(sol.metarule_sparsity[m]), "n_cells": int(sol.metarule_cells[m]),
                         "change": [c["feature"] for c in change], "keep": [k["feature"] for k in keep],
                         "text": text, "paper_text": paper})
    return pd.DataFrame(rows, columns=METARULE_COLUMNS)


def metarule_change_keep(state: FittedState, sol: Solution, m: int) -> tuple[list, list]:
    """Worst case over the metarule: a rule feature is to change if any part of the metarule lies outside."""
    r = int(sol.metarule_rule[m])
    cells = np.flatnonzero(sol.cell_metarule == m)
    states = np.stack(np.unravel_index(cells, sol.grid.dims), axis=1)
    outside = np.zeros(len(state.schema), dtype=bool)
    for i, table in enumerate(sol.tables):
        outside[i] = table[states[:, i], r].any()
    return change_keep(state.schema, sol, r, outside)


def summary_text(state: FittedState, class_names=None, target: int | None = None) -> str:
    """``TCREx.summary_text``: per target its rules, then per metarule "if …: change …, keeping …"."""
    solutions = state.solutions
    if target is None:
        chosen = range(len(solutions))
    elif isinstance(target, (int, np.integer)) and not isinstance(target, bool) and 0 <= int(target) < len(solutions):
        chosen = [int(target)]
    else:
        raise ParameterError(f"target must be the index of one of the {len(solutions)} target(s) "
                             f"(0 to {len(solutions) - 1}), got {target!r}")
    rules = rules_frame(state)
    metas = metarules_frame(state)
    lines = []
    for t in chosen:
        sol = solutions[t]
        # the outcome, never the internal index of the target entry (people read this)
        lines.append(f"Toward {sol.target.describe(class_names)} — {pluralise(sol.n_rules, 'rule')}, "
                     f"{pluralise(len(sol.metarules), 'metarule')}, {pluralise(sol.n_cells, 'grid cell')}")
        trivial = set()
        for _, r in rules[rules.target == t].iterrows():
            note = ""
            if is_trivial_rule(r.complexity):
                trivial.add(int(r.rule))
                note = f"  — {trivial_rule_note(sol.target.describe(class_names), r.accuracy)}"
            lines.append(f"  Rule {r.rule_id}: {r.conditions}  [accuracy {r.accuracy:.3f}, feasibility "
                         f"{r.feasibility:.3f}, complexity {r.complexity}]{note}")
        for _, m in metas[metas.target == t].iterrows():
            flag = " — a rule without conditions, not advice" if m.rule is not None and m.rule == m.rule \
                and int(m.rule) in trivial else ""
            if isinstance(m.rule_id, str):
                lines.append(f"  {if_sentence(m.conditions, m.text)} ({m.metarule_id} → {m.rule_id}, "
                             f"{rule_changes_text(m.sparsity)}{flag})")
            else:  # constraints forbid every rule here (the frame's missing id reads back as NaN, not None)
                lines.append(f"  {if_sentence(m.conditions, m.text)} ({m.metarule_id} → no actionable rule)")
    return "\n".join(lines)
