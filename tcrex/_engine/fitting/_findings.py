"""What a fit says too little about (:meth:`TCREx.fit_findings`): a degenerate explanation in plain sentences, each
with a parameter set that was fitted on the same rows and gives more rules.

An explanation is degenerate for a target when it has one rule, one metarule, a metarule with no condition that
covers at least :data:`UNCONDITIONAL_SHARE` of the people needing recourse, or (with the verified frame) when far more
people are verified by a change beyond the rules than through the rules (:data:`BEYOND_RULES_RATIO`). The suggestion
is searched on a short ladder of cheaper-first settings (:data:`LADDER`: smaller rho, more trees), each fitted on the
fit rows and their outputs within ``budget`` seconds; a setting is suggested only when its fit succeeded and gave
more rules for every degenerate target; the first one that is no longer degenerate wins, else the one with most
rules.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import pandas as pd

from ...errors import TCRExError
from ...text import pluralise
from ...vocabulary import MINIMAL_CHANGE, is_verified, needs_recourse

__all__ = ["FitFinding", "fit_findings", "FINDING_KINDS", "ONE_RULE", "ONE_METARULE", "UNCONDITIONAL_METARULE",
           "BEYOND_RULES", "UNCONDITIONAL_SHARE", "BEYOND_RULES_RATIO", "LADDER", "FINDINGS_BUDGET"]

#: One rule for a target: the explanation is a single condition.
ONE_RULE = "one_rule"
#: One metarule for a target: everyone gets the same advice.
ONE_METARULE = "one_metarule"
#: A metarule with no condition serves most of the people needing recourse.
UNCONDITIONAL_METARULE = "unconditional_metarule"
#: Many more people are verified by a change beyond the rules than through the rules.
BEYOND_RULES = "beyond_rules"
FINDING_KINDS = (ONE_RULE, ONE_METARULE, UNCONDITIONAL_METARULE, BEYOND_RULES)

#: Share of the people needing recourse a condition-less metarule must serve to be a finding.
UNCONDITIONAL_SHARE = 0.9
#: "Much higher": people verified beyond the rules at least this many times those verified through a rule.
BEYOND_RULES_RATIO = 2.0
#: Settings tried, cheapest first: ``(rho factor, trees)``; rho is the current rho times the factor, trees at least
#: the current number.
LADDER = ((0.5, 1), (1.0, 3), (0.5, 3), (1.0, 5), (0.5, 5), (0.25, 5), (1.0, 10), (0.5, 10))
#: Default seconds :meth:`TCREx.fit_findings` spends searching for a suggestion.
FINDINGS_BUDGET = 10.0


@dataclass(frozen=True)
class FitFinding:
    """One thing a fit says too little about, in a plain sentence, with a checked suggestion.

    ``kind`` is a machine code (:data:`FINDING_KINDS`), ``target`` the target id, ``text`` the sentence for people;
    ``suggestion`` the parameters to set (``{"rho": 0.01, "n_trees": 5}``) or None when no setting tried gave more
    rules, with the rules and metarules that setting was checked to give (``suggested_rules``,
    ``suggested_metarules``, summed over the degenerate targets) against the current ones."""

    kind: str
    target: int
    text: str
    n_rules: int
    n_metarules: int
    suggestion: dict | None = None
    suggested_rules: int | None = None
    suggested_metarules: int | None = None
    details: dict = field(default_factory=dict)

    def suggestion_text(self) -> str:
        """The suggestion in words ("Try rho 0.01 and 5 trees: checked on the same rows, 9 rules and 57
        metarules instead of 1 and 1."), or why there is none."""
        if self.suggestion is None:
            return "No setting tried within the time allowed gave more rules; try a lower tau or more rows."
        words = []
        if "rho" in self.suggestion:
            words.append(f"rho {self.suggestion['rho']:g}")
        if "n_trees" in self.suggestion:
            words.append(pluralise(int(self.suggestion["n_trees"]), "tree"))
        return (f"Try {' and '.join(words)}: checked on the same rows, "
                f"{pluralise(self.suggested_rules, 'rule')} and {pluralise(self.suggested_metarules, 'metarule')} "
                f"instead of {self.n_rules} and {self.n_metarules}.")

    def to_dict(self) -> dict:
        """Plain data for JSON (the rules JSON's ``findings``)."""
        return {"kind": self.kind, "target": int(self.target), "text": self.text, "n_rules": int(self.n_rules),
                "n_metarules": int(self.n_metarules), "suggestion": self.suggestion,
                "suggested_rules": self.suggested_rules, "suggested_metarules": self.suggested_metarules,
                "suggestion_text": self.suggestion_text()}


def _unconditional(ex, t: int) -> list:
    """The metarules of target ``t`` with no condition."""
    return [m for m in range(len(ex.targets_[t].metarules)) if not ex.metarule_conditions(t, m)]


def _problems(ex, explanations: pd.DataFrame | None, counterfactuals: pd.DataFrame | None,
              class_names: dict | None = None) -> list:
    """``(kind, target, sentence, details)`` for every degenerate trait of the fitted explanation."""
    out = []
    need = tgt = meta = None
    if explanations is not None and len(explanations):
        need = needs_recourse(explanations["status"])
        tgt = pd.to_numeric(explanations["target"], errors="coerce").to_numpy()
        meta = pd.to_numeric(explanations["metarule"], errors="coerce").to_numpy()
    rules = ex.rules_frame()
    for t, sol in enumerate(ex.targets_):
        outcome = sol.target.describe(class_names or ex.__dict__["state_"].class_names or None)
        if sol.n_rules == 1:
            said = rules.loc[rules.target == t, "conditions"].iloc[0]
            out.append((ONE_RULE, t, f"Only one rule reaches {outcome} ({said}): the "
                        "explanation is a single condition, so it says little about what else the model asks.", {}))
        if len(sol.metarules) == 1:
            out.append((ONE_METARULE, t, f"Only one metarule for {outcome}: everyone who needs a change gets the "
                        "same advice, whatever their values.", {}))
        elif need is not None:
            mine = need & (tgt == t)
            n_need = int(mine.sum())
            for m in _unconditional(ex, t):
                served = int((mine & (meta == m)).sum())
                if n_need and served >= UNCONDITIONAL_SHARE * n_need:
                    out.append((UNCONDITIONAL_METARULE, t,
                                f"One metarule with no condition gives the advice to {served:,} of the {n_need:,} "
                                f"people who need a change toward {outcome} ({served / n_need:.0%}): the advice "
                                "hardly depends on who they are.", {"metarule": m, "served": served}))
    if counterfactuals is not None and len(counterfactuals) and "recourse" in counterfactuals.columns:
        verified = is_verified(counterfactuals)
        src = counterfactuals["source"].astype(object).to_numpy()
        beyond = int((verified & (src == MINIMAL_CHANGE)).sum())
        through = int((verified & (src != MINIMAL_CHANGE)).sum())
        if beyond and beyond >= BEYOND_RULES_RATIO * through:
            t = 0 if len(ex.targets_) == 1 else int(pd.to_numeric(counterfactuals.get(
                "target", pd.Series([0])), errors="coerce").mode().iloc[0])
            out.append((BEYOND_RULES, t, f"{beyond:,} people are verified by a change beyond the rules and only "
                        f"{through:,} through a rule: the rules miss most of what the model accepts.",
                        {"beyond": beyond, "through": through}))
    return out


def _counts(ex, targets) -> tuple[int, int]:
    return (sum(ex.targets_[t].n_rules for t in targets), sum(len(ex.targets_[t].metarules) for t in targets))


def _degenerate(ex, t: int) -> bool:
    sol = ex.targets_[t]
    return sol.n_rules <= 1 or len(sol.metarules) <= 1


def _search(ex, targets, budget: float):
    """The suggested parameters and their checked (rules, metarules) for ``targets``, or (None, None)."""
    X, y = ex.fit_rows(), ex.__dict__["state_"].fit_y
    rho0, trees0 = float(ex.rho), int(ex.n_trees)
    best = None
    t0 = time.perf_counter()
    seen = set()
    for factor, trees in LADDER:
        if seen and time.perf_counter() - t0 > budget:
            break
        params = {"rho": float(f"{rho0 * factor:.3g}"), "n_trees": max(trees, trees0)}
        key = (params["rho"], params["n_trees"])
        if key in seen or key == (rho0, trees0):
            continue
        seen.add(key)
        trial = type(ex)(**{**ex.get_params(deep=False), **params})
        try:
            with warnings.catch_warnings():  # a trial's own warnings ("no valid rule") are not the user's fit's
                warnings.simplefilter("ignore")
                trial.fit(X, y_pred=y)
        except (TCRExError, ValueError, MemoryError):  # the grid too large for max_cells, too few rows for rho
            continue
        if len(trial.targets_) != len(ex.targets_):
            continue
        got = _counts(trial, targets)
        if not all(trial.targets_[t].n_rules > ex.targets_[t].n_rules for t in targets):
            continue
        suggestion = {k: v for k, v in params.items() if v != {"rho": rho0, "n_trees": trees0}[k]}
        if not any(_degenerate(trial, t) for t in targets):
            return suggestion, got
        if best is None or got[0] > best[1][0]:
            best = (suggestion, got)
    return best if best is not None else (None, None)


def fit_findings(ex, explanations=None, counterfactuals=None, budget: float = FINDINGS_BUDGET,
                 class_names: dict | None = None) -> list:
    """:meth:`TCREx.fit_findings` (``ex`` fitted)."""
    state = ex.__dict__["state_"]
    if explanations is None and state.has_fit_data:
        explanations = ex.explain(ex.fit_rows(), y_pred=state.fit_y)
    problems = _problems(ex, explanations, counterfactuals, class_names)
    if not problems:
        return []
    targets = sorted({t for _, t, _, _ in problems})
    suggestion = got = None
    if state.has_fit_data and state.fit_y is not None and budget > 0:
        suggestion, got = _search(ex, targets, budget)
    n_rules, n_metas = _counts(ex, targets)
    return [FitFinding(kind=k, target=t, text=text, n_rules=n_rules, n_metarules=n_metas, suggestion=suggestion,
                       suggested_rules=None if got is None else int(got[0]),
                       suggested_metarules=None if got is None else int(got[1]), details=details)
            for k, t, text, details in problems]
