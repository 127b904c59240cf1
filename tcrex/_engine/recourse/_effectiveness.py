"""Effectiveness of rules and metarules on a population .

Every figure here reads the one definition of "works" (:func:`tcrex.vocabulary.recourse_outcome`: a model-confirmed point
that changes exactly the features its sentence names). Over the rows that need recourse it counts who has
verified recourse, split by where the point came from (the paper's optimal rule, the next rule in cost order, a
minimal change beyond the rules), who has only a similar real case, and who has none. For the inputs a rule (or
metarule) serves — rows needing recourse whose optimal rule it is — two shares:

* ``boundary_effectiveness``: the share whose nearest point of the rule in the data (the paper's counterfactual
  point, at values the data holds) already brings the model's output into the target;
* ``effectiveness``: the share whose verified point lies in that rule (nearest or deeper inside it): the rule's
  own advice works for them.

and what happens to all of them, counted (``OUTCOME_COUNTS``): verified through this rule, through the next rule,
by a minimal change beyond the rules, or not verified. A rule whose own advice works for 0 % may still leave
everyone it serves with verified recourse through the next rule; the counts say so.

The population is the fit rows by default; any rows can be given with the model (or the model and their outputs).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..base._data import as_frame
from ...errors import ModelError, SchemaError, not_fitted
from ..explaining._lookup import lookup, model_columns, outputs
from ..fitting._state import FittedState
from ._verify import recourse_codes, verify_points
from ...vocabulary import (BOUNDARY, MINIMAL_CHANGE, NEXT_RULE, NO_VERIFIED_RECOURSE, RECOURSE_OUTCOMES, RECOURSE_TEXT,
                         SEARCHED, SIMILAR_CASE, SOURCES, VERIFIED)

#: What happens to the people a rule (metarule) serves, counted: verified through this rule's own advice, through
#: the next rule in cost order, by a minimal change beyond the rules, or not verified (a similar case or none).
#: They add up to ``n_served``; ``effectiveness`` is ``n_this_rule / n_served``.
OUTCOME_COUNTS = ["n_this_rule", "n_next_rule", "n_minimal_change", "n_not_verified"]
RULE_COLUMNS = ["target", "rule", "n_served", "boundary_effectiveness", "effectiveness", *OUTCOME_COUNTS]
META_COLUMNS = ["target", "metarule", "n_served", "boundary_effectiveness", "effectiveness", *OUTCOME_COUNTS]
#: Columns that rules_frame / metarules_frame gain.
ADDED = ["n_served", "boundary_effectiveness", "effectiveness", *OUTCOME_COUNTS]


@dataclass
class Effectiveness:
    """Plain data: population counts, and per rule / metarule the two shares (NaN where nothing is served)."""

    population: str  # "fit rows" or "given rows"
    n: int  # rows in the population
    n_needing: int  # rows needing recourse (tcrex.vocabulary.needs_recourse)
    n_with_rule: int  # of those, rows with an optimal rule (status ok or already_in_rule)
    n_boundary_valid: int  # ... whose optimal rule's nearest point already works
    n_verified: int  # rows needing recourse with verified recourse (tcrex.vocabulary.recourse_outcome == "verified")
    n_similar: int  # ... with a similar real case only
    n_none: int  # ... with neither
    n_optimal_rule: int = 0  # verified through the paper's optimal rule (nearest point or deeper inside it)
    n_next_rule: int = 0  # verified through the next rule in cost order
    n_minimal_change: int = 0  # verified by a minimal change beyond the rules
    rules: pd.DataFrame = field(repr=False, default=None)
    metarules: pd.DataFrame = field(repr=False, default=None)

    def share(self, count: int) -> float:
        """``count`` as a share of the rows needing recourse (NaN when nobody needs it)."""
        return count / self.n_needing if self.n_needing else float("nan")

    @property
    def verified_share(self) -> float:
        """Share of everyone needing recourse whose recourse is verified (a point that follows the advice)."""
        return self.share(self.n_verified)

    @property
    def similar_share(self) -> float:
        return self.share(self.n_similar)

    @property
    def none_share(self) -> float:
        return self.share(self.n_none)

    @property
    def boundary_share(self) -> float:
        """Share of the rows with an optimal rule whose nearest point of it already works."""
        return self.n_boundary_valid / self.n_with_rule if self.n_with_rule else float("nan")

    def headline(self) -> str:
        """"verified by a point that follows the advice N % · a similar real case only M % · none K %"."""
        if not self.n_needing:
            return "nobody here needs recourse"
        return " · ".join(f"{RECOURSE_TEXT[k]} {self.share(c):.0%}" for k, c in
                          ((VERIFIED, self.n_verified), (SIMILAR_CASE, self.n_similar),
                           (NO_VERIFIED_RECOURSE, self.n_none)))

    _COUNTS = ("n", "n_needing", "n_with_rule", "n_boundary_valid", "n_verified", "n_similar", "n_none",
               "n_optimal_rule", "n_next_rule", "n_minimal_change")

    def to_dict(self) -> dict:
        return {"population": self.population, **{k: int(getattr(self, k)) for k in self._COUNTS},
                "rules": _records(self.rules), "metarules": _records(self.metarules)}

    @classmethod
    def from_dict(cls, d: dict) -> "Effectiveness":
        try:
            d = dict(d)
            if "n_similar" not in d and "n_valid" in d:  # older files counted real examples apart
                d["n_similar"] = d["n_valid"] - d["n_verified"]
                d["n_none"] = d["n_needing"] - d["n_valid"]
                d["n_optimal_rule"] = d["n_verified"]
                d["n_next_rule"] = d["n_minimal_change"] = 0
            counts = {k: d[k] for k in cls._COUNTS}
            if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in counts.values()):
                raise SchemaError("effectiveness counts must be whole numbers >= 0")
            rules = _frame(d["rules"], RULE_COLUMNS, "rule")
            metas = _frame(d["metarules"], META_COLUMNS, "metarule")
            return cls(str(d["population"]), rules=rules, metarules=metas, **counts)
        except SchemaError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise SchemaError(f"malformed effectiveness: {type(exc).__name__}: {exc}") from None


def _records(frame: pd.DataFrame) -> list[dict]:
    out = []
    for row in frame.itertuples(index=False):
        rec = row._asdict()
        out.append({k: (None if v is pd.NA or (isinstance(v, float) and np.isnan(v)) else
                        int(v) if isinstance(v, (np.integer, int)) else float(v)) for k, v in rec.items()})
    return out


def _frame(records, columns, id_name) -> pd.DataFrame:
    frame = pd.DataFrame(list(records), columns=columns)
    for c in ("target", id_name, "n_served"):
        frame[c] = frame[c].astype(np.int64)
    for c in OUTCOME_COUNTS:  # missing (None) in older files: unknown, never 0
        frame[c] = pd.array(frame[c].astype(object).where(frame[c].notna(), None), dtype="Int64")
    for c in ("boundary_effectiveness", "effectiveness"):
        frame[c] = frame[c].astype(np.float64)
        if ((frame[c] < 0) | (frame[c] > 1)).any():
            raise SchemaError(f"effectiveness shares must lie in [0, 1] ({c})")
    return frame


def compute(state: FittedState, X=None, model=None, y_pred=None, reference=None) -> Effectiveness:
    """The effectiveness on X (the fit rows by default) with ``model`` (default the fitted one)."""
    model = model if model is not None else state.model
    if model is None:
        raise ModelError("effectiveness checks points on the model: pass model= (or fit with the model)")
    if X is None:
        if not state.has_fit_data:
            raise not_fitted("the default population is the fit data, which a JSON export does not hold; "
                                 "pass X (and model=)")
        X = model_columns(state, state.schema.decode(state.fit_enc, state.fit_index), model)  # the fit dtypes
        y = state.fit_y if y_pred is None else outputs(state, X, y_pred)
        population = "fit rows"
    else:
        X = model_columns(state, as_frame(X), model)
        y = outputs(state, X, y_pred, model)
        population = "given rows"
    enc = state.schema.encode(X)
    res = lookup(state, enc, y, state.solutions)
    rec = verify_points(state, X, enc, res, model, reference)
    return _summarise(state, population, res.target_id, res.rule, res.metarule,
                      np.where(rec.found, rec.source, -1), recourse_codes(rec))


def from_rows(state: FittedState, explanations: pd.DataFrame, counterfactuals: pd.DataFrame,
              population: str = "given rows") -> Effectiveness:
    """The same figures from frames already computed for the same rows: ``explanations`` from
    :meth:`TCREx.explain` and ``counterfactuals`` from :meth:`TCREx.counterfactuals` with ``verify=True`` (aligned
    on the index). A dashboard verifies every row once and then summarises any subset without calling the model
    again."""
    if "recourse" not in counterfactuals.columns or "source" not in counterfactuals.columns:
        raise SchemaError("counterfactuals must come from counterfactuals(verify=True) (columns recourse, source)")
    if not explanations.index.equals(counterfactuals.index):
        counterfactuals = counterfactuals.reindex(explanations.index)

    def ids(column) -> np.ndarray:
        return explanations[column].astype("Int64").fillna(-1).to_numpy(dtype=np.int64)

    source = pd.Categorical(counterfactuals["source"].astype(object), categories=list(SOURCES)).codes
    recourse = pd.Categorical(counterfactuals["recourse"].astype(object), categories=list(RECOURSE_OUTCOMES)).codes
    return _summarise(state, population, ids("target"), ids("rule"), ids("metarule"), np.asarray(source, np.int64),
                      np.asarray(recourse, np.int64))


def _summarise(state: FittedState, population, target, rule, metarule, source, recourse) -> Effectiveness:
    """Counts over the population and per-rule / per-metarule shares from per-row codes (see module doc):
    ``source`` indexes SOURCES (-1: nothing found), ``recourse`` RECOURSE_OUTCOMES (-1: not needing)."""
    needing = target >= 0
    has = needing & (rule >= 0)
    src = {s: source == i for i, s in enumerate(SOURCES)}
    boundary_valid = src[BOUNDARY]
    via_rule = src[BOUNDARY] | src[SEARCHED]
    frames = {}
    for key, served_by, columns, sizes in (
            ("rule", rule, RULE_COLUMNS, [s.n_rules for s in state.solutions]),
            ("metarule", metarule, META_COLUMNS, [s.n_metarules for s in state.solutions])):
        rows = []
        for t, size in enumerate(sizes):
            sel = has & (target == t) & (served_by >= 0)
            ids = served_by[sel]
            n = np.bincount(ids, minlength=size)
            nb = np.bincount(ids, weights=boundary_valid[sel], minlength=size)
            nv = np.bincount(ids, weights=via_rule[sel], minlength=size)
            nn = np.bincount(ids, weights=src[NEXT_RULE][sel], minlength=size)
            nm = np.bincount(ids, weights=src[MINIMAL_CHANGE][sel], minlength=size)
            with np.errstate(invalid="ignore", divide="ignore"):
                rows.append(pd.DataFrame({"target": t, key: np.arange(size), "n_served": n,
                                          "boundary_effectiveness": np.where(n > 0, nb / np.maximum(n, 1), np.nan),
                                          "effectiveness": np.where(n > 0, nv / np.maximum(n, 1), np.nan),
                                          "n_this_rule": nv.astype(np.int64), "n_next_rule": nn.astype(np.int64),
                                          "n_minimal_change": nm.astype(np.int64),
                                          "n_not_verified": (n - nv - nn - nm).astype(np.int64)}))
        frame = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=columns)
        frames[key] = _frame(frame.to_dict("records"), columns, key)
    code = {k: i for i, k in enumerate(RECOURSE_OUTCOMES)}
    return Effectiveness(population, len(target), int(needing.sum()), int(has.sum()),
                         int(boundary_valid[has].sum()), int((recourse == code[VERIFIED]).sum()),
                         int((recourse == code[SIMILAR_CASE]).sum()),
                         int((recourse == code[NO_VERIFIED_RECOURSE]).sum()),
                         int(via_rule[needing].sum()), int(src[NEXT_RULE][needing].sum()),
                         int(src[MINIMAL_CHANGE][needing].sum()), frames["rule"], frames["metarule"])


def resolve(state: FittedState, effectiveness, X, model, y_pred):
    """The Effectiveness a frame should show, or None when nothing asks for it."""
    if isinstance(effectiveness, Effectiveness):
        return effectiveness
    if effectiveness is False or (effectiveness is None and X is None and model is None and y_pred is None):
        return None
    if effectiveness is True and X is None and model is None and state.effectiveness is not None:
        return state.effectiveness  # loaded with a JSON export that carries it
    return compute(state, X, model, y_pred)


def add_columns(frame: pd.DataFrame, eff: Effectiveness | None, key: str) -> pd.DataFrame:
    if eff is None:
        return frame
    table = eff.rules if key == "rule" else eff.metarules
    merged = frame.merge(table, on=["target", key], how="left")
    merged["n_served"] = merged["n_served"].fillna(0).astype(np.int64)
    return merged
