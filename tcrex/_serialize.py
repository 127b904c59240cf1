"""The versioned JSON form of a fitted explainer: ``{"format": "tcrex-rules", "version": 2, ...}``.

Version 2 adds actionability constraints (``params.constraints``) and metarules whose ``rule`` is ``null`` (no
actionable rule there); version 1 files (no constraints) still load. Version 3 is written only when the export
carries the optional ``effectiveness`` object (per rule / metarule shares of served inputs whose counterfactual
the model confirms, see ``TCREx.effectiveness``); it loads into ``explainer.effectiveness_``.

Rules and metarules only — never the model or the data. Numeric conditions are ``low < x <= high`` (``null`` =
unbounded), categorical ones ``x in [...]``; a feature absent from ``conditions`` is unconstrained. The order of
``rules`` is the tie-break order. Floats are written with Python's shortest round-trip repr, so bounds survive
exactly. On import the grid is rebuilt from the rules, and the metarules are checked to partition it and to name
each cell's optimal rule, so a damaged file is refused rather than silently mis-explaining.
"""
from __future__ import annotations

import json
import math

import numpy as np

from ._boxes import Boxes
from ._constraints import Constraints
from ._data import FeatureSchema, _native
from ._errors import DataError, SchemaError
from ._vocabulary import CLASSIFICATION, TASKS
from ._solution import Solution
from ._targets import Target
from .text import box_conditions

FORMAT = "tcrex-rules"
VERSION = 2
#: Written only when the export carries effectiveness (optional ``effectiveness`` fields); version 2 otherwise.
VERSION_EFFECTIVENESS = 3
READABLE = (1, 2, 3)


def _conditions(schema: FeatureSchema, boxes: Boxes, r: int) -> dict:
    """Box ``r``'s conditions by feature name (:func:`tcrex.text.box_conditions`, bounds only)."""
    return {schema.names[i]: c["bounds"] for i, c in box_conditions(schema, boxes, r, text=False).items()}


def to_json(ex, indent=None, effectiveness=None) -> str:
    schema = ex.schema_
    doc = {
        "format": FORMAT, "version": VERSION, "task": ex.task_,
        "params": {"rho": ex.rho, "tau": ex.tau, "n_trees": ex.n_trees, "max_cells": ex.max_cells,
                   "grower": ex.grower, "random_state": ex.random_state,
                   # optional (older exports lack it): the grower "auto" resolved to, "exact" or "hist"
                   **({"grower_used": ex.grower_} if getattr(ex, "grower_", None) else {}),
                   "constraints": ex.constraints_.to_dict(), "target": _target_param(ex.target)},
        "n_fit_rows": int(ex.n_fit_rows_),
        "features": schema.to_list(),
    }
    if ex.task_ == CLASSIFICATION:
        doc["classes"] = [_native(c) for c in ex.classes_]
    targets = []
    for t, sol in enumerate(ex.targets_):
        complexity = sol.rules.complexity()
        targets.append({
            "id": t, "outputs": sol.target.to_dict(), "description": sol.target.describe(),
            "n_cells": int(sol.n_cells),
            "rules": [{"id": r, "conditions": _conditions(schema, sol.rules, r), "n": int(sol.rule_n[r]),
                       "n_target": int(sol.rule_n_target[r]), "feasibility": float(sol.feasibility[r]),
                       "accuracy": float(sol.accuracy[r]), "complexity": int(complexity[r])}
                      for r in range(sol.n_rules)],
            "metarules": [{"id": m, "rule": int(sol.metarule_rule[m]) if sol.metarule_rule[m] >= 0 else None,
                           "conditions": _conditions(schema, sol.metarules, m),
                           "sparsity": int(sol.metarule_sparsity[m]), "n_cells": int(sol.metarule_cells[m])}
                          for m in range(len(sol.metarules))],
        })
    doc["targets"] = targets
    if effectiveness is not None:  # optional: version 3 adds it, older readers never see it
        from ._effectiveness import Effectiveness
        if not isinstance(effectiveness, Effectiveness):
            raise SchemaError("effectiveness= takes what explainer.effectiveness() returns")
        doc["version"] = VERSION_EFFECTIVENESS
        doc["effectiveness"] = effectiveness.to_dict()
    return json.dumps(doc, indent=indent, allow_nan=False, ensure_ascii=False)


def _boxes(schema: FeatureSchema, items: list, what: str) -> Boxes:
    n_cats = [len(schema.features[i].categories) for i in schema.categorical]
    boxes = Boxes.unbounded(len(items), len(schema.numeric), n_cats)
    for r, item in enumerate(items):
        conds = item.get("conditions", {})
        if not isinstance(conds, dict):
            raise SchemaError(f"{what} {r}: 'conditions' must be an object")
        for name, cond in conds.items():
            try:
                i = schema.index(name)
            except DataError:
                raise SchemaError(f"{what} {r} names unknown feature {name!r}") from None
            f, slot = schema.features[i], schema.slot[i]
            if not isinstance(cond, dict):
                raise SchemaError(f"{what} {r}: condition on {name!r} must be an object")
            if f.is_categorical:
                values = cond.get("in")
                if not isinstance(values, list) or not values:
                    raise SchemaError(f"{what} {r}: categorical condition on {name!r} needs a non-empty 'in' list")
                unknown = [v for v in values if v not in f.categories]
                if unknown:
                    raise SchemaError(f"{what} {r}: {name!r} in {unknown}, which are not categories of {name!r}")
                boxes.allowed[slot][r] = np.isin(np.arange(len(f.categories)),
                                                 [f.categories.index(v) for v in values])
            else:
                low, high = cond.get("low"), cond.get("high")
                for v in (low, high):
                    if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                          or not math.isfinite(v)):
                        raise SchemaError(f"{what} {r}: bound {v!r} on {name!r} is not a finite number or null")
                boxes.low[r, slot] = -np.inf if low is None else float(low)
                boxes.high[r, slot] = np.inf if high is None else float(high)
                if boxes.low[r, slot] >= boxes.high[r, slot]:
                    raise SchemaError(f"{what} {r}: empty interval ({low}, {high}] on {name!r}")
    return boxes


def from_json(cls, text):
    try:
        doc = json.loads(text) if isinstance(text, (str, bytes, bytearray)) else text
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SchemaError(f"not valid JSON: {exc}") from None
    except RecursionError:
        raise SchemaError("not a rules export: the JSON is nested far too deeply") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SchemaError(f"not a T-CREx rules export (expected \"format\": \"{FORMAT}\")")
    version = doc.get("version")
    if version not in READABLE:
        raise SchemaError(f"rules export version {version!r} is not supported (this tcrex reads versions "
                          f"{', '.join(map(str, READABLE))})")
    try:
        task = doc["task"]
        if task not in TASKS:
            raise SchemaError(f"unknown task {task!r}")
        schema = FeatureSchema.from_list(doc["features"])
        n_fit = doc["n_fit_rows"]
        if isinstance(n_fit, bool) or not isinstance(n_fit, int) or not 1 <= n_fit < 2 ** 53:
            raise SchemaError(f"n_fit_rows must be a positive whole number, got {n_fit!r}")
        params = dict(doc.get("params", {}))
        ex = cls(**{k: v for k, v in params.items() if k in cls._PARAMS})
        ex.constraints = params.get("constraints") or None
        ex.constraints_ = Constraints(schema, ex.constraints)
        ex.schema_, ex.task_, ex.n_fit_rows_ = schema, task, n_fit
        ex.classes_ = list(doc.get("classes", []))
        ex.surrogate_ = None
        ex.model_ = None
        used = params.get("grower_used", params.get("grower"))
        ex.grower_ = used if used in ("exact", "hist") else None  # None: the export does not say
        solutions = []
        for t, item in enumerate(doc["targets"]):
            target = Target.from_dict(item["outputs"])
            rules = item["rules"]
            rule_boxes = _boxes(schema, rules, "rule")
            n = [int(r["n"]) for r in rules]
            n_target = [int(r["n_target"]) if "n_target" in r else int(round(float(r["accuracy"]) * int(r["n"])))
                        for r in rules]
            if any(not 1 <= a <= n_fit or not 0 <= b <= a for a, b in zip(n, n_target)):
                raise SchemaError(f"target {t}: rule counts must satisfy 1 <= n <= n_fit_rows and "
                                  "0 <= n_target <= n")
            metas = item["metarules"]
            meta_boxes = _boxes(schema, metas, "metarule")
            meta_rule = [-1 if m["rule"] is None else int(m["rule"]) for m in metas]
            if any(not -1 <= r < len(rules) for r in meta_rule) or (-1 in meta_rule and ex.constraints_.trivial):
                raise SchemaError(f"target {t}: a metarule names a rule id that does not exist")
            solutions.append(Solution.restore(schema, target, rule_boxes, n, n_target, n_fit, meta_boxes, meta_rule,
                                              ex.constraints_))
        ex.targets_ = solutions
        if doc.get("effectiveness") is not None:
            from ._effectiveness import Effectiveness
            ex.effectiveness_ = Effectiveness.from_dict(doc["effectiveness"])
    except SchemaError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        raise SchemaError(f"malformed rules export: {type(exc).__name__}: {exc}") from None
    return ex


def _target_param(target):
    """The ``target`` parameter as JSON (a class, classes, a threshold or a (low, high) pair; tuples become
    lists, which ``targets_from_spec`` reads the same way), so a restored explainer knows what it targets."""
    if target is None:
        return None
    if isinstance(target, (list, tuple, set, frozenset)):
        return [_native(v) for v in target]
    return _native(target)

