"""Desiderata of a set of counterfactual explanations on test data (T-CREx paper, Section 5).

:func:`evaluate` explains every row of a test set with a fitted :class:`~tcrex.TCREx` and scores what it returns:

* **feasibility** of the returned rule: the share of *test* rows inside it (paper Eq. 3 on the test data);
* **accuracy** of the returned rule: among the test rows inside it, the share whose output is in the row's
  target Y*; when no test row is inside (feasibility 0) it falls back to the share of all test rows whose output
  is in Y* (the marginal probability of Y*), as in the paper;
* **sparsity**: the number of features the row must change to satisfy its rule (paper Eq. 8);
* **complexity**: the finite terms of the rule, one per finite numeric bound and one per constrained
  categorical (the expressions needed to state it);
* **consistency**: unique rules returned / rows given a rule (lower is better; the paper divides by the number
  of test inputs, and every one of its test inputs gets a rule);
* **runtime**: fit time plus the time of :meth:`~tcrex.TCREx.explain` on the test set (and per input);
* **distance**: total percentile shift from the row to its counterfactual point, the nearest point of its rule
  (:meth:`~tcrex.TCREx.counterfactuals`): per numeric feature ``|F(x') - F(x)|`` with ``F`` the empirical CDF of
  the fit data (share of fit rows ``<= v``), plus 1 per changed categorical (Pawelczyk et al. 2020);
* **point validity**: the share of counterfactual points at which the model's output really is in Y*, and the
  same for real examples (:meth:`~tcrex.TCREx.real_examples`, the nearest fit row inside the rule whose fit
  output is in Y*) — needs the model.

Means are taken over the rows that were given a rule (status ``ok`` or ``already_in_rule``); rows already in
their target, or with no (actionable) rule, are counted but not scored.

>>> from tcrex.metrics import evaluate                               # doctest: +SKIP
>>> summary = evaluate(explainer, X_test, model.predict(X_test), model=model)        # doctest: +SKIP
>>> summary, rows = evaluate(explainer, X_test, y_test, model=model, return_rows=True)  # doctest: +SKIP
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ._engine.base._data import as_frame, conform_frame
from .errors import ModelError, not_fitted
from ._engine.base._outputs import predict
from .vocabulary import HAS_RECOURSE, STATUSES, has_recourse

__all__ = ["evaluate", "DESIDERATA", "SCORED_STATUSES"]

#: Summary keys of the paper's six desiderata, plus the point-level extras.
DESIDERATA = ("feasibility", "accuracy", "sparsity", "complexity", "consistency", "runtime", "distance",
              "point_validity", "example_validity")
#: Statuses whose rows carry a rule and are scored: those with recourse (the vocabulary's ``HAS_RECOURSE``).
SCORED_STATUSES = HAS_RECOURSE


def evaluate(explainer, X_test, y_test_pred=None, model=None, *, X_fit=None, target=None, fit_time=None,
             examples=True, return_rows=False):
    """Score the explanations of every row of ``X_test``.

    Parameters
    ----------
    explainer : fitted TCREx
    X_test : DataFrame (or 2-D array) of test inputs, with the fit columns.
    y_test_pred : the model's outputs on ``X_test``. When None they come from ``model`` (or the explainer's).
    model : anything with ``predict`` or a callable, used for the outputs at counterfactual points and real
        examples (point validity). Categorical columns of those points are given ``X_test``'s dtypes first (e.g.
        pandas categories), so a model that takes ``X_test`` takes them. None: the model the explainer was fitted
        with, if any; without one, the validity figures are NaN.
    X_fit : the fit inputs, for the percentiles of the distance. None: the explainer's own fit data (absent
        after a JSON restore: then the distance is NaN).
    target : as in :meth:`TCREx.explain` (None: the fitted targets).
    fit_time : seconds spent fitting, added to the runtime. None: the explainer's ``timings_["total"]``.
    examples : also find real examples and their validity (a nearest-neighbour search in the fit data).
    return_rows : also return the per-row DataFrame.

    Returns
    -------
    dict of means (see :data:`DESIDERATA`) and counts; with ``return_rows``, ``(dict, DataFrame)`` where the
    DataFrame, aligned with ``X_test``, has ``target``, ``rule``, ``status``, ``feasibility``, ``accuracy``,
    ``sparsity``, ``complexity``, ``distance``, ``point_valid``, ``example_distance`` and ``example_valid``.
    """
    if not hasattr(explainer, "targets_"):
        raise not_fitted("evaluate needs a fitted explainer; call fit(X, model) first")
    X_test = as_frame(X_test)
    n = len(X_test)
    model = model if model is not None else getattr(explainer, "model_", None)
    if y_test_pred is None:
        if model is None:
            raise ModelError("evaluate needs the model's outputs on X_test: pass y_test_pred= or model=")
        y_test_pred = predict(model, X_test)
    y = np.asarray(y_test_pred.to_numpy() if isinstance(y_test_pred, (pd.Series, pd.DataFrame)) else y_test_pred)
    y = y.reshape(-1) if y.ndim == 2 and y.shape[1] == 1 else y

    t0 = time.perf_counter()
    exp = explainer.explain(X_test, y_pred=y, target=target)
    explain_time = time.perf_counter() - t0
    if fit_time is None:
        fit_time = float(getattr(explainer, "timings_", {}).get("total", np.nan))

    tgt = exp["target"].to_numpy(dtype=float, na_value=np.nan)
    rule = exp["rule"].to_numpy(dtype=float, na_value=np.nan)
    status = exp["status"].astype(str).to_numpy()
    scored = has_recourse(status) & ~np.isnan(rule)
    tgt_i = np.where(np.isnan(tgt), -1, tgt).astype(np.int64)
    rule_i = np.where(np.isnan(rule), -1, rule).astype(np.int64)

    rows = pd.DataFrame({"target": exp["target"], "rule": exp["rule"], "status": exp["status"]}, index=X_test.index)
    feas = np.full(n, np.nan)
    acc = np.full(n, np.nan)
    comp = np.full(n, np.nan)
    sparsity = np.where(scored, exp["changes"].to_numpy(dtype=float, na_value=np.nan), np.nan)
    enc = explainer.schema_.encode(X_test)
    for t in np.unique(tgt_i[scored]):
        sol = _solution(explainer, t)
        complexity = sol.rules.complexity()  # as in rules_frame(): finite bounds + constrained categoricals
        in_target = sol.target.contains(y)
        marginal = float(in_target.mean()) if n else np.nan
        used = np.unique(rule_i[scored & (tgt_i == t)])
        inside = sol.rules.take(used).contains(enc)  # (n, len(used)) test rows inside each used rule
        n_in = inside.sum(axis=0)
        n_hit = (inside & in_target[:, None]).sum(axis=0)
        rule_feas = n_in / n
        with np.errstate(divide="ignore", invalid="ignore"):
            rule_acc = np.where(n_in > 0, n_hit / np.maximum(n_in, 1), marginal)
        for k, r in enumerate(used):
            sel = scored & (tgt_i == t) & (rule_i == r)
            feas[sel], acc[sel] = rule_feas[k], rule_acc[k]
            comp[sel] = complexity[r]
    rows["feasibility"], rows["accuracy"] = feas, acc
    rows["sparsity"], rows["complexity"] = sparsity, comp

    # counterfactual points: distance and validity
    dist = np.full(n, np.nan)
    point_valid = np.full(n, np.nan)
    idx = np.flatnonzero(scored)
    if len(idx):
        cf = explainer.counterfactuals(X_test, y_pred=y, target=target, verify=False).iloc[idx]
        if X_fit is not None or explainer.has_fit_data:
            dist[idx] = explainer.percentile_distance(X_test.iloc[idx], cf, reference=X_fit)
        if model is not None:
            point_valid[idx] = _valid(explainer, model, conform_frame(cf, X_test), tgt_i[idx])
    rows["distance"], rows["point_valid"] = dist, point_valid

    ex_dist = np.full(n, np.nan)
    ex_valid = np.full(n, np.nan)
    if examples and len(idx) and explainer.has_fit_data:
        ex = explainer.real_examples(X_test, y_pred=y, target=target).iloc[idx]
        found = ex["example_index"].notna().to_numpy()
        ex_dist[idx[found]] = ex["distance"].to_numpy(dtype=float)[found]
        if model is not None and found.any():
            feats = ex.iloc[np.flatnonzero(found), 2:]
            ex_valid[idx[found]] = _valid(explainer, model, conform_frame(feats, X_test), tgt_i[idx[found]])
    rows["example_distance"], rows["example_valid"] = ex_dist, ex_valid

    n_scored = int(scored.sum())
    unique_rules = len(set(zip(tgt_i[scored].tolist(), rule_i[scored].tolist())))
    runtime = fit_time + explain_time
    summary = {
        "n_rows": n,
        "n_explained": n_scored,
        **{f"n_{s}": int((status == s).sum()) for s in STATUSES},
        "n_rules_used": unique_rules,
        "feasibility": _mean(feas, scored),
        "accuracy": _mean(acc, scored),
        "sparsity": _mean(sparsity, scored),
        "complexity": _mean(comp, scored),
        "consistency": unique_rules / n_scored if n_scored else np.nan,
        "runtime": runtime,
        "runtime_per_input": runtime / n if n else np.nan,
        "fit_time": fit_time,
        "explain_time": explain_time,
        "distance": _mean(dist, scored),
        "point_validity": _mean(point_valid, scored),
        "example_distance": _mean(ex_dist, scored),
        "example_validity": _mean(ex_valid, scored),
    }
    return (summary, rows) if return_rows else summary


def _solution(explainer, t: int):
    """Target id -> its Solution (fitted targets, or ones derived by ``explain(target=...)``)."""
    get = getattr(explainer, "solution", None)
    return get(int(t)) if get is not None else explainer.targets_[int(t)]


def _mean(values: np.ndarray, mask: np.ndarray) -> float:
    v = values[mask]
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else float("nan")


def _valid(explainer, model, points: pd.DataFrame, target_ids: np.ndarray) -> np.ndarray:
    """1.0 where the model's output at each point is in the point's target, else 0.0."""
    out = predict(model, points)
    valid = np.zeros(len(points))
    for t in np.unique(target_ids):
        sel = target_ids == t
        valid[sel] = _solution(explainer, t).target.contains(out[sel])
    return valid
