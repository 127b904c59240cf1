"""Stability of rules and advice across retrained models.

>>> from tcrex.compare import rule_stability
>>> st = rule_stability(ex, X, y, lambda X, y, seed: XGBClassifier(random_state=seed).fit(X, y), target=1)  # doctest: +SKIP
>>> st.rules                                                                                                  # doctest: +SKIP

The rules' boxes are fixed: each retrained model only has to be asked about the rows inside the boxes (the fit rows,
or X for an explainer restored from JSON) and about the verified points of the people in X, in one prediction pass.
A rule *holds* under a model when the share of its rows the model sends to the target is at least tau; a verified
point *works* under a model when the model's output there lies in the person's target (the engine's containment,
:meth:`tcrex.TCREx.in_target`). Verified points are ``tcrex.vocabulary.is_verified`` on
``counterfactuals(X, model=...)`` of the explainer's own model.
"""
from __future__ import annotations

import json
import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import as_frame, check_fitted, conform_dtypes
from ..errors import ModelError, ParameterError
from ..vocabulary import is_verified, needs_recourse
from ._comparison import rules_of_target
from ._models import resolve_target, target_id_of
from ._vocabulary import COMPARED_ROWS, FIT_ROWS_A

KINDS = ("bootstrap", "seed")


@dataclass
class RuleStability:
    """Per rule, metarule and person, how often the explainer's advice survives retraining (plain data)."""

    kind: str
    n_models: int
    tau: float
    target: str
    rules_measured_on: str
    rules: pd.DataFrame = field(repr=False)
    metarules: pd.DataFrame = field(repr=False)
    people: pd.DataFrame = field(repr=False)
    seconds: dict = field(default_factory=dict)

    def to_json(self, indent=None) -> str:
        def recs(frame):
            return [{str(k): (None if isinstance(v, float) and v != v else
                              v.item() if isinstance(v, np.generic) else v) for k, v in r.items()}
                    for r in frame.to_dict(orient="records")]
        return json.dumps({"format": "tcrex-rule-stability", "version": 1, "kind": self.kind,
                           "n_models": self.n_models, "tau": self.tau, "target": self.target,
                           "rules_measured_on": self.rules_measured_on, "rules": recs(self.rules),
                           "metarules": recs(self.metarules),
                           "people": {"index": [v.item() if isinstance(v, np.generic) else v
                                                for v in self.people.index],
                                      "advice_holds_share": [None if v != v else float(v)
                                                             for v in self.people["advice_holds_share"]]},
                           "seconds": self.seconds}, indent=indent, default=str)


def rule_stability(explainer, X, y, fit_model, n_models=10, kind="bootstrap", random_state=0, *, model=None,
                   target=None) -> RuleStability:
    """How stable the explainer's rules and advice are across ``n_models`` models retrained by ``fit_model``.

    ``fit_model(X_train, y_train, seed)`` returns a fitted model; it is called with a bootstrap resample of
    ``(X, y)`` (``kind="bootstrap"``) or with ``(X, y)`` and another seed (``kind="seed"``). Per rule of the
    target: the share of models under which it still holds tau on its rows and the mean share of its verified points
    that still work; per metarule the same for its rule and its people; per person of X, the share of models under
    which their verified advice still gets the favourable outcome.
    """
    check_fitted(explainer)
    if kind not in KINDS:
        raise ParameterError(f"kind must be 'bootstrap' or 'seed', got {kind!r}")
    if not isinstance(n_models, numbers.Integral) or isinstance(n_models, bool) or n_models < 1:
        raise ParameterError(f"n_models must be a whole number >= 1, got {n_models!r}")
    if not callable(fit_model):
        raise ParameterError("fit_model must be a function (X_train, y_train, seed) -> fitted model")
    X = as_frame(X)
    y = np.asarray(y.to_numpy() if isinstance(y, (pd.Series, pd.Index)) else y)
    if len(y) != len(X):
        raise ParameterError(f"y has {len(y)} values but X has {len(X)} rows; give one label per row")
    names = list(explainer.schema_.names)
    Xf = X[names]
    model = model if model is not None else getattr(explainer, "model_", None)
    if model is None:
        raise ModelError("the explainer holds no model; pass model= (the model it explains) to verify its points")
    spec, wanted = resolve_target(explainer, target)
    seconds = {}
    t0 = time.perf_counter()
    y_model = explainer.outputs(Xf, model=model)
    exp = explainer.explain(Xf, y_pred=y_model, target=spec)
    cf = explainer.counterfactuals(Xf, model=model, y_pred=y_model, target=spec)
    seconds["verify"] = time.perf_counter() - t0
    t_id = target_id_of(explainer, wanted)  # after explain(): a target derived on demand has an id now
    if t_id is None:
        raise ParameterError(f"the explainer has no target {wanted.describe()}; fit it with target={spec!r}")
    ver = is_verified(cf)
    sol = explainer.solution(t_id)
    if explainer.has_fit_data:
        rows, on = explainer.fit_rows(), FIT_ROWS_A
    else:
        rows, on = Xf, COMPARED_ROWS
    inside = sol.rules.contains(explainer.schema_.encode(rows[names])) if sol.n_rules else \
        np.zeros((len(rows), 0), dtype=bool)
    boxed = inside.any(axis=1)  # only rows inside some rule box are asked
    rows_boxed, inside = conform_dtypes(rows[names].iloc[np.flatnonzero(boxed)], Xf), inside[boxed]
    points = conform_dtypes(cf.loc[ver, names], Xf)
    targets = exp["target"][ver]
    rec = cf["recommended_rule"].to_numpy(dtype=np.float64, na_value=np.nan)[ver]
    own = (exp["target"].to_numpy(dtype=np.float64, na_value=np.nan)[ver] == t_id) & ~np.isnan(rec)
    rule_of_point = np.where(own, np.nan_to_num(rec, nan=-1), -1).astype(np.int64)
    batch = pd.concat([rows_boxed, points], ignore_index=True)
    n_box = len(rows_boxed)
    rng = np.random.default_rng(random_state)
    holds_tau = np.zeros((n_models, sol.n_rules), dtype=bool)
    point_ok = np.zeros((n_models, len(points)), dtype=bool)
    seconds["retrain"] = seconds["predict"] = 0.0
    for k in range(n_models):
        seed = int(rng.integers(0, 2**31 - 1))
        t1 = time.perf_counter()
        if kind == "bootstrap":
            pick = rng.integers(0, len(X), size=len(X))
            m = fit_model(Xf.iloc[pick].reset_index(drop=True), y[pick], seed)
        else:
            m = fit_model(Xf, y, seed)
        t2 = time.perf_counter()
        out = explainer.outputs(batch, model=m) if len(batch) else np.zeros(0)
        seconds["retrain"] += t2 - t1
        seconds["predict"] += time.perf_counter() - t2
        ok_rows = explainer.in_target(out[:n_box], np.full(n_box, t_id))
        n_in = inside.sum(axis=0)
        acc = np.where(n_in > 0, (inside & ok_rows[:, None]).sum(axis=0) / np.maximum(n_in, 1), np.nan)
        holds_tau[k] = acc >= explainer.tau - 1e-12
        point_ok[k] = explainer.in_target(out[n_box:], targets)
    seconds["total"] = time.perf_counter() - t0
    # per rule: share of models where it holds tau; mean share of its points that work
    pts_share = np.full((n_models, sol.n_rules), np.nan)
    n_points = np.bincount(rule_of_point[rule_of_point >= 0], minlength=sol.n_rules)[:sol.n_rules]
    for k in range(n_models):
        good = np.bincount(rule_of_point[rule_of_point >= 0], weights=point_ok[k][rule_of_point >= 0],
                           minlength=sol.n_rules)[:sol.n_rules]
        pts_share[k] = np.where(n_points > 0, good / np.maximum(n_points, 1), np.nan)
    rf = rules_of_target(explainer, t_id)
    with np.errstate(invalid="ignore"):
        mean_pts = np.where(n_points > 0, np.nanmean(np.where(n_points > 0, pts_share, 0.0), axis=0), np.nan)
    rules = pd.DataFrame({"target": t_id, "rule": np.arange(sol.n_rules), "rule_id": rf["rule_id"].to_numpy(),
                          "conditions": rf["conditions"].to_numpy(), "accuracy": rf["accuracy"].to_numpy(),
                          "holds_tau_share": holds_tau.mean(axis=0), "n_points": n_points.astype(np.int64),
                          "points_work_share": mean_pts})
    # metarules: their rule's stability, and the points of the people they serve
    meta_of_person = exp["metarule"].to_numpy(dtype=np.float64, na_value=np.nan)[ver]
    meta_rows = []
    for m in range(len(sol.metarules)):
        r = int(sol.metarule_rule[m])
        r = None if r < 0 else r  # a metarule without an actionable rule
        sel = (meta_of_person == m) & own
        share = float(point_ok[:, sel].mean()) if sel.any() else np.nan
        meta_rows.append({"target": t_id, "metarule": m, "metarule_id": explainer.metarule_id(t_id, m),
                          "rule_id": explainer.rule_id(t_id, r),
                          "rule_holds_tau_share": float(holds_tau[:, r].mean()) if r is not None else np.nan,
                          "n_points": int(sel.sum()), "points_work_share": share})
    metarules = pd.DataFrame(meta_rows, columns=["target", "metarule", "metarule_id", "rule_id",
                                                 "rule_holds_tau_share", "n_points", "points_work_share"])
    share = np.full(len(X), np.nan)
    share[ver] = point_ok.mean(axis=0) if n_models else np.nan
    people = pd.DataFrame({"needs_recourse": needs_recourse(exp["status"]), "verified": ver,
                           "advice_holds_share": share}, index=X.index)
    return RuleStability(kind=kind, n_models=int(n_models), tau=float(explainer.tau), target=wanted.describe(),
                         rules_measured_on=on, rules=rules, metarules=metarules, people=people, seconds=seconds)
