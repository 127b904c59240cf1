"""The versioned JSON form of a fitted explainer: ``{"format": "tcrex-rules", "version": 2, ...}``.

Version 2 adds actionability constraints (``params.constraints``) and metarules whose ``rule`` is ``null`` (no
actionable rule there); version 1 files (no constraints) still load. Version 3 is written only when the export
carries the optional ``effectiveness`` object (per rule / metarule shares of served inputs whose counterfactual
the model confirms, see ``TCREx.effectiveness``); it loads into ``explainer.effectiveness_``.

Rules and metarules only — never the model or the data. Numeric conditions are ``low < x <= high`` (``null`` =
unbounded), categorical ones ``x in [...]``; a feature absent from ``conditions`` is unconstrained. The order of
``rules`` is the tie-break order. Floats are written with Python's shortest round-trip repr, so bounds survive
exactly. Version 5 adds the codebook (per feature ``"labels": [[value, label], ...]``) and ``"class_names"``
(``[[class, name], ...]``); versions 1-4 load without them. Version 6 is written only when the export carries a data
dictionary (``"dictionary"``, its own versioned form), the constraints the fit applied from suggestions
(``"suggested_constraints"``, with their reasons) or the dictionary's notes; other exports stay version 5, which
older readers load. On import the grid is rebuilt from the rules, and the metarules are checked to partition it and to name
each cell's optimal rule, so a damaged file is refused rather than silently mis-explaining.
"""
from __future__ import annotations

import json
import math

import numpy as np

from ..base._boxes import Boxes
from ...codebook import as_pairs, check_class_names, from_pairs
from ...constraints import Constraints
from ...dictionary import MAX_FEATURES, DataDictionary
from ..base._data import FeatureSchema, _native
from ..recourse._effectiveness import Effectiveness
from ...errors import DataError, ParameterError, SchemaError, TCRExError
from ..base._outputs import MAX_TARGET_CLASSES
from ..base._params import check_parameter
from ..recourse._search import rule_values
from ..fitting._state import FittedState, preference_of
from ...vocabulary import CLASSIFICATION, TASKS
from ..fitting._solution import restore_solution
from ..fitting._targets import ORDERED_KEYS, Target
from ...text import box_conditions, shown

FORMAT = "tcrex-rules"
#: Version 4 adds what the search for verified recourse needs from the fit data, so an explainer
#: restored from JSON finds the same points: per rule, the observed values of each feature it constrains that
#: its points may take (``values``), and the fit rows' count of each category (``category_counts``); never rows.
VERSION = 5
#: Kept for readers of older files: version 3 was version 2 plus effectiveness (version 4 carries it optionally).
VERSION_EFFECTIVENESS = VERSION
#: Written when the export carries a data dictionary, the constraints a fit applied from suggestions or the
#: dictionary's notes: a reader of version 5 would load such rules without the words and the actionability they
#: were fitted with (a title-less, constraint-less explainer that says nothing of it), so it refuses them instead.
VERSION_DICTIONARY = 6
READABLE = (1, 2, 3, 4, 5, 6)
#: Most values a rule may list per feature in a file (the writer keeps at most 2 * NEAR_VALUES + quantiles).
MAX_RULE_VALUES = 64
#: Parameters an export restores (what ``to_json`` writes, plus ``task``); other keys are ignored.
RESTORED_PARAMS = ("rho", "tau", "n_trees", "max_cells", "grower", "random_state", "target", "task", "special_codes",
                   "max_changes")
#: Largest rules x (numeric features + categories) an export may ask the loader to allocate boxes for.
MAX_BOX_ENTRIES = 10_000_000
#: Memory the grid rebuilt from an export may need (cells x rules tables, :meth:`Grid.solve_bytes`), checked before
#: anything per cell is built. A file is untrusted: 2.6 MB of nested rules on one feature asked for 2.5 GB. Fits the
#: dashboard makes need far less (100,000 cells x 100 rules: about 25 MB); ``from_json(text, max_grid_bytes=)``
#: raises it for a trusted large explainer.
MAX_GRID_BYTES = 256 * 2**20


def _conditions(schema: FeatureSchema, boxes: Boxes, r: int) -> dict:
    """Box ``r``'s conditions by feature name (:func:`tcrex.text.box_conditions`, bounds only)."""
    return {schema.names[i]: c["bounds"] for i, c in box_conditions(schema, boxes, r, text=False).items()}


def to_json(params: dict, state: FittedState, indent=None, effectiveness=None, findings=None) -> str:
    """The export of ``state``; ``params``: the estimator's parameters (``TCREx.get_params()``)."""
    schema = state.schema
    doc = {
        "format": FORMAT, "version": VERSION, "task": state.task,
        "params": {"rho": params["rho"], "tau": params["tau"], "n_trees": params["n_trees"],
                   "max_cells": params["max_cells"], "grower": params["grower"],
                   "random_state": params["random_state"],
                   # optional (older exports lack it): the grower "auto" resolved to, "exact" or "hist"
                   **({"grower_used": state.grower} if state.grower else {}),
                   "constraints": state.constraints.to_dict(), "target": _target_param(params["target"]),
                   # optional (older exports lack them); the codes themselves are in each feature's "special_codes"
                   "special_codes": _special_codes_param(params.get("special_codes", "auto")),
                   "max_changes": state.max_changes},
        "n_fit_rows": int(state.n_fit_rows),
        "features": schema.to_list(),
    }
    if state.task == CLASSIFICATION:
        doc["classes"] = [_native(c) for c in state.classes]
        if state.class_names:  # version 5: [[class, name], ...] (JSON keys are text; a class 1 stays a number)
            doc["class_names"] = as_pairs(state.class_names)
    if state.dictionary is not None:  # optional (older exports lack it): the data dictionary, its own versioned form
        doc["dictionary"] = state.dictionary.to_dict()
    if state.suggested_constraints:  # the suggested constraints the fit applied by default, with their reasons
        doc["suggested_constraints"] = dict(state.suggested_constraints)
    if state.dictionary_notes:
        doc["dictionary_notes"] = list(state.dictionary_notes)
    if any(key in doc for key in ("dictionary", "suggested_constraints", "dictionary_notes")):
        doc["version"] = VERSION_DICTIONARY
    counts = state.category_counts
    if counts is not None:
        doc["category_counts"] = {schema.names[i]: [int(c) for c in counts[j]]
                                  for j, i in enumerate(schema.categorical)}
    targets = []
    for t, sol in enumerate(state.solutions):
        complexity = sol.rules.complexity()
        values = rule_values(state, t)
        targets.append({
            "id": t, "outputs": sol.target.to_dict(), "description": sol.target.describe(),
            "n_cells": int(sol.n_cells),
            "rules": [{"id": r, "conditions": _conditions(schema, sol.rules, r), "n": int(sol.rule_n[r]),
                       "n_target": int(sol.rule_n_target[r]), "feasibility": float(sol.feasibility[r]),
                       "accuracy": float(sol.accuracy[r]), "complexity": int(complexity[r]),
                       **({"values": {schema.names[schema.numeric[j]]: [float(v) for v in vals]
                                      for j, vals in sorted(values[r].items())}} if values is not None else {})}
                      for r in range(sol.n_rules)],
            "metarules": [{"id": m, "rule": int(sol.metarule_rule[m]) if sol.metarule_rule[m] >= 0 else None,
                           "conditions": _conditions(schema, sol.metarules, m),
                           "sparsity": int(sol.metarule_sparsity[m]), "n_cells": int(sol.metarule_cells[m])}
                          for m in range(len(sol.metarules))],
        })
    doc["targets"] = targets
    if effectiveness is not None:  # optional: version 3 adds it, older readers never see it
        if not isinstance(effectiveness, Effectiveness):
            raise SchemaError("effectiveness= takes what explainer.effectiveness() returns")
        doc["version"] = max(doc["version"], VERSION_EFFECTIVENESS)
        doc["effectiveness"] = effectiveness.to_dict()
    if findings:  # optional: what the fit says too little about (TCREx.fit_findings), for people; never read back
        doc["findings"] = [f.to_dict() for f in findings]
    return json.dumps(doc, indent=indent, allow_nan=False, ensure_ascii=False)


def _special_codes_param(spec):
    """The ``special_codes`` parameter as JSON: "auto", null, or ``{feature: [codes]}`` with plain numbers."""
    if isinstance(spec, dict):
        return {str(k): [_native(c) for c in v] for k, v in spec.items()}
    return spec


def _count(value, field: str, low: int = 0, high: int = 2 ** 53) -> int:
    """A whole number read from the file (an int in the JSON: not "12", not 12.7, not true), in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaError(f"{field} must be a whole number, got {shown(value)}"[:200])
    if not low <= value <= high:
        raise SchemaError(f"{field} = {shown(value)} is out of range [{low}, {high}]")
    return value


def _list(value, field: str) -> list:
    if not isinstance(value, list):
        raise SchemaError(f"{field} must be a list, got {type(value).__name__}")
    return value


def _params(doc: dict) -> dict:
    """The export's parameters, each checked by the rule the estimator itself uses (``check_parameter``)."""
    params = doc.get("params", {})
    if not isinstance(params, dict):
        raise SchemaError("params must be an object")
    out = {k: params[k] for k in RESTORED_PARAMS if k in params}
    for name in ("rho", "tau", "n_trees", "max_cells", "grower", "task", "special_codes", "max_changes"):
        if name in out:
            try:
                check_parameter(name, out[name])
            except TCRExError as exc:
                raise SchemaError(f"params.{name}: {exc}") from None
    seed = out.get("random_state")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 32):
        raise SchemaError(f"params.random_state must be null or a whole number in [0, 2**32), got {shown(seed)}")
    target = out.get("target")
    scalar = (str, int, float, bool)
    if isinstance(target, dict):
        if len(target) != 1 or next(iter(target)) not in ORDERED_KEYS or not isinstance(next(iter(target.values())),
                                                                                          scalar):
            raise SchemaError(f"params.target as an object must be {{'at_least': label}} or {{'at_most': label}}, "
                              f"got {target!r}"[:200])
    elif target is not None and not isinstance(target, scalar) and not (
            isinstance(target, list) and 0 < len(target) <= MAX_TARGET_CLASSES
            and all(v is None or isinstance(v, scalar) for v in target)):
        raise SchemaError(f"params.target must be null, a label, a number or a list of them, got {target!r}"[:200])
    if isinstance(target, float) and not math.isfinite(target):
        raise SchemaError(f"params.target must be a finite number, got {target!r}")
    return out


def _boxes(schema: FeatureSchema, items: list, what: str) -> Boxes:
    n_cats = [len(schema.features[i].categories) for i in schema.categorical]
    entries = len(items) * (len(schema.numeric) + sum(n_cats))
    if entries > MAX_BOX_ENTRIES:
        raise SchemaError(f"{len(items):,} {what}s over {len(schema)} features and {sum(n_cats):,} categories are more "
                          f"than this loader accepts ({MAX_BOX_ENTRIES:,} bounds in all)")
    boxes = Boxes.unbounded(len(items), len(schema.numeric), n_cats)
    for r, item in enumerate(items):
        if not isinstance(item, dict):
            raise SchemaError(f"{what} {r} must be an object")
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


def _dictionary_part(doc: dict) -> tuple:
    """The dictionary, the applied suggestions ``{feature: reason}`` and the dictionary notes of an export (each
    optional: older exports have none)."""
    dictionary = None
    if doc.get("dictionary") is not None:
        dictionary = DataDictionary.from_dict(doc["dictionary"], SchemaError)
    suggested = doc.get("suggested_constraints") or {}
    if not isinstance(suggested, dict) or len(suggested) > MAX_FEATURES or not all(
            isinstance(k, str) and isinstance(v, str) and len(v) <= 2000 for k, v in suggested.items()):
        raise SchemaError("suggested_constraints must be an object {feature: reason}")
    notes = doc.get("dictionary_notes") or []
    if not isinstance(notes, list) or len(notes) > MAX_FEATURES or not all(
            isinstance(n, str) and len(n) <= 4000 for n in notes):
        raise SchemaError("dictionary_notes must be a list of sentences")
    return dictionary, dict(suggested), list(notes)


def from_json(cls, text, max_grid_bytes: int | None = None):
    """An estimator of class ``cls`` (made with the export's parameters) holding the :class:`FittedState` the export
    describes, checked as untrusted input."""
    max_grid_bytes = MAX_GRID_BYTES if max_grid_bytes is None else int(max_grid_bytes)
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
        schema = FeatureSchema.from_list(_list(doc["features"], "features"))
        n_fit = doc["n_fit_rows"]
        if isinstance(n_fit, bool) or not isinstance(n_fit, int) or not 1 <= n_fit < 2 ** 53:
            raise SchemaError(f"n_fit_rows must be a positive whole number, got {shown(n_fit)}")
        params = doc.get("params", {})
        ex = cls(**_params(doc))
        ex.constraints = params.get("constraints") or None
        constraints = Constraints(schema, ex.constraints)
        classes = list(_list(doc.get("classes", []), "classes"))
        if len(classes) > MAX_TARGET_CLASSES:
            raise SchemaError(f"classes lists {len(classes):,} classes; at most {MAX_TARGET_CLASSES:,} are "
                              "supported")
        items = _list(doc["targets"], "targets")
        if not items:  # every fit solves at least one target; with none, nothing could be explained
            raise SchemaError("targets is empty: a rules export lists at least one target")
        if len(items) > max(2, MAX_TARGET_CLASSES):
            raise SchemaError(f"targets lists {len(items):,} targets; at most {max(2, MAX_TARGET_CLASSES):,} are "
                              "supported")
        used = params.get("grower_used", params.get("grower"))
        grower = used if used in ("exact", "hist") else None  # None: the export does not say
        solutions, values = [], []
        for t, item in enumerate(items):
            if not isinstance(item, dict):
                raise SchemaError(f"targets[{t}] must be an object")
            target = Target.from_dict(item["outputs"])
            if "n_cells" in item:  # recomputed on load; a present value must still be a count
                _count(item["n_cells"], f"targets[{t}].n_cells")
            rules = _list(item["rules"], f"targets[{t}].rules")
            rule_boxes = _boxes(schema, rules, "rule")
            n = [_count(r["n"], f"targets[{t}].rules[{i}].n", 1, n_fit) for i, r in enumerate(rules)]
            n_target = [_count(r["n_target"], f"targets[{t}].rules[{i}].n_target", 0, a) if "n_target" in r
                        else _from_accuracy(r.get("accuracy"), a, f"targets[{t}].rules[{i}].accuracy")
                        for i, (r, a) in enumerate(zip(rules, n))]
            metas = _list(item["metarules"], f"targets[{t}].metarules")
            meta_boxes = _boxes(schema, metas, "metarule")
            meta_rule = [-1 if m.get("rule") is None else
                         _count(m["rule"], f"targets[{t}].metarules[{i}].rule", 0, len(rules) - 1)
                         for i, m in enumerate(metas)]
            for i, m in enumerate(metas):  # recomputed on load; present values must still be counts
                for key in ("n_cells", "sparsity"):
                    if key in m:
                        _count(m[key], f"targets[{t}].metarules[{i}].{key}")
            for i, r in enumerate(rules):
                if "complexity" in r:
                    _count(r["complexity"], f"targets[{t}].rules[{i}].complexity")
            if -1 in meta_rule and constraints.trivial:
                raise SchemaError(f"target {t}: a metarule names a rule id that does not exist")
            sol = restore_solution(schema, target, rule_boxes, n, n_target, n_fit, meta_boxes, meta_rule,
                                   constraints, max_cells=ex.max_cells, max_bytes=max_grid_bytes)
            values.append(_rule_values(schema, rules, rule_boxes, t))
            solutions.append(sol)
        counts = _category_counts(schema, doc.get("category_counts"))
        effectiveness = Effectiveness.from_dict(doc["effectiveness"]) if doc.get("effectiveness") is not None \
            else None
        class_names = {}
        if doc.get("class_names") is not None:
            try:
                class_names = check_class_names(from_pairs(doc["class_names"], "class_names"), classes)
            except ParameterError as exc:
                raise SchemaError(str(exc)) from None
        ex.value_labels = schema.value_labels or None
        ex.class_names = dict(class_names) or None
        dictionary, suggested, notes = _dictionary_part(doc)
        ex.dictionary = dictionary
        ex.state_ = FittedState(schema=schema, task=task, classes=classes, constraints=constraints, n_fit_rows=n_fit,
                                solutions=solutions, tau=ex.tau, rho=ex.rho, max_cells=ex.max_cells,
                                random_state=ex.random_state, max_changes=ex.max_changes, grower=grower, category_counts=counts,
                                category_preference=preference_of(counts, schema), rule_values=values,
                                effectiveness=effectiveness, class_names=class_names, dictionary=dictionary,
                                suggested_constraints=suggested, dictionary_notes=notes)
    except SchemaError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        raise SchemaError(f"malformed rules export: {type(exc).__name__}: {exc}") from None
    return ex


def _from_accuracy(accuracy, n: int, field: str) -> int:
    """n_target of a version-1 rule, which stored only its accuracy."""
    if isinstance(accuracy, bool) or not isinstance(accuracy, (int, float)) or not 0 <= accuracy <= 1:
        raise SchemaError(f"{field} must be a number in [0, 1], got {accuracy!r}"[:200])
    return int(round(float(accuracy) * n))


def _target_param(target):
    """The ``target`` parameter as JSON (a class, classes, a threshold or a (low, high) pair; tuples become
    lists, which ``targets_from_spec`` reads the same way), so a restored explainer knows what it targets."""
    if target is None:
        return None
    if isinstance(target, dict):  # an ordered class target {"at_least": 7}
        return {str(k): _native(v) for k, v in target.items()}
    if isinstance(target, (list, tuple, set, frozenset)):
        return [_native(v) for v in target]
    return _native(target)



def _rule_values(schema: FeatureSchema, rules: list, boxes: Boxes, t: int):
    """Per rule, numeric slot -> its values (version 4); None when the file has none (older versions: the search
    inside the rules then uses the rules' nearest points, and says so)."""
    if not rules or not any("values" in r for r in rules):
        return None
    out = []
    for i, r in enumerate(rules):
        values = r.get("values", {})
        if not isinstance(values, dict):
            raise SchemaError(f"targets[{t}].rules[{i}].values must be an object")
        per = {}
        for name, vals in values.items():
            try:
                f = schema.index(name)
            except DataError:
                raise SchemaError(f"targets[{t}].rules[{i}].values names unknown feature {name!r}") from None
            if schema.features[f].is_categorical:
                raise SchemaError(f"targets[{t}].rules[{i}].values lists values of categorical {name!r}")
            vals = _list(vals, f"targets[{t}].rules[{i}].values[{name!r}]")
            if len(vals) > MAX_RULE_VALUES:
                raise SchemaError(f"targets[{t}].rules[{i}].values[{name!r}] lists {len(vals):,} values; at most "
                                  f"{MAX_RULE_VALUES} are read")
            if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) for v in vals):
                raise SchemaError(f"targets[{t}].rules[{i}].values[{name!r}] must be finite numbers")
            arr = np.unique(np.asarray(vals, dtype=np.float64))
            j = schema.slot[f]
            if ((arr <= boxes.low[i, j]) | (arr > boxes.high[i, j])).any():
                raise SchemaError(f"targets[{t}].rules[{i}].values[{name!r}] lie outside the rule's condition")
            if len(arr):
                per[j] = arr
        out.append(per)
    return out


def _category_counts(schema: FeatureSchema, counts):
    """Per categorical slot, the fit rows' count of each category (version 4), or None."""
    if counts is None:
        return None
    if not isinstance(counts, dict):
        raise SchemaError("category_counts must be an object")
    out = []
    for i in schema.categorical:
        f = schema.features[i]
        c = _list(counts.get(f.name), f"category_counts[{f.name!r}]") if f.name in counts else None
        if c is None or len(c) != len(f.categories):
            raise SchemaError(f"category_counts[{f.name!r}] must list one count per category of {f.name!r}")
        out.append(np.array([_count(v, f"category_counts[{f.name!r}]") for v in c], dtype=np.int64))
    return out
