"""Actionability constraints: what a person can actually change, and at what cost.

Per feature:

* ``"free"`` (default) — any change, cost 1;
* ``"immutable"`` — a rule that needs this feature changed is not allowed for that input;
* ``"increase_only"`` / ``"decrease_only"`` (numeric) — only rules above / below the input's value are allowed;
* ``{"weight": w}`` — a change costs ``w`` instead of 1 (combinable with a direction: ``{"direction":
  "increase_only", "weight": 2}``);
* ``{"transitions": {from_category: [to_categories]}}`` (categorical) — the allowed category moves; a category
  not listed may move anywhere (combinable with a weight).
* ``{"transitions": {code: [code or "value", ...], "value": [codes]}}`` (a numeric feature with special codes,
  see ``TCREx(special_codes=...)``) — the moves into and out of its special codes that are allowed: by default a
  verified point never moves such a feature into or out of a code (-7/-8/-9 "no record" is not a number), so
  ``{-9: ["value"]}`` lets "no record" become an ordinary value and ``{"value": [-8]}`` an ordinary value become
  -8. ``"value"`` stands for every ordinary (non-code) value. A direction applies between ordinary values only.

Each constraint depends only on whether an input lies below, inside or above a rule on a feature (for
categoricals: on its category), which is constant on a grid cell, so the metarules stay exact. Weights are held
in integer units of 1/1000 so that the cost ``weighted changes - feasibility`` compares exactly as the integer key
``W * N - 1000 * n``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._engine.base._data import FeatureSchema, _native, sentinel_codes
from .errors import ParameterError

__all__ = ["Constraints", "FeatureConstraint", "KINDS", "CATEGORICAL_KINDS", "KIND_LABELS", "FREE", "IMMUTABLE",
           "INCREASE", "DECREASE", "VALUE", "kinds_for", "constraint_parts", "constraint_spec", "describe_constraint",
           "describe_constraints", "suggest_constraints", "constraints_from_suggestions", "pack_constraints",
           "unpack_constraints", "history_families"]

FREE, IMMUTABLE, INCREASE, DECREASE = "free", "immutable", "increase_only", "decrease_only"
KINDS = (FREE, IMMUTABLE, INCREASE, DECREASE)
#: The kinds a categorical feature may take (a direction has no meaning without an order; use transitions).
CATEGORICAL_KINDS = (FREE, IMMUTABLE)
#: Each kind in words ("increase only").
KIND_LABELS = {k: k.replace("_", " ") for k in KINDS}
UNIT = 1000  # weight resolution: 0.001
#: In the transitions of a numeric feature with special codes: every ordinary (non-code) value.
VALUE = "value"


def kinds_for(categorical: bool, ordered: bool = False) -> tuple:
    """The kinds a feature may take: all of :data:`KINDS` for a numeric one and for an ordered categorical (its
    categories in a declared order: ``Feature.ordered``), :data:`CATEGORICAL_KINDS` for another categorical."""
    return CATEGORICAL_KINDS if categorical and not ordered else KINDS


@dataclass
class FeatureConstraint:
    kind: str = FREE
    weight: float = 1.0
    transitions: dict = field(default_factory=dict)  # categorical: from category -> allowed target categories

    @property
    def weight_units(self) -> int:
        return int(round(self.weight * UNIT))

    def is_free(self) -> bool:
        return self.kind == FREE and self.weight_units == UNIT and not self.transitions

    def to_dict(self) -> dict:
        out = {}
        if self.kind != FREE:
            out["kind"] = self.kind
        if self.weight_units != UNIT:
            out["weight"] = self.weight
        if self.transitions:
            out["transitions"] = {str(k): [_native(c) for c in v] for k, v in self.transitions.items()}
        return out


class Constraints:
    """Parsed constraints for a schema; ``None`` or ``{}`` means every feature is free."""

    def __init__(self, schema: FeatureSchema, spec=None):
        self.schema = schema
        self.features = [FeatureConstraint() for _ in schema.features]
        for name, value in (spec or {}).items():
            i = schema.index(name) if name in schema.names else None
            if i is None:
                raise ParameterError(f"constraint names unknown feature {name!r}; features are {schema.names}")
            self.features[i] = _parse(schema.features[i], value)

    @property
    def trivial(self) -> bool:
        return all(c.is_free() for c in self.features)

    def to_dict(self) -> dict:
        return {self.schema.names[i]: c.to_dict() for i, c in enumerate(self.features) if not c.is_free()}

    def describe(self) -> str:
        return describe_constraints(self.to_dict())

    def transition_matrix(self, i: int) -> np.ndarray:
        """(k, k) bool: may a category move to another? (identity always allowed)."""
        f = self.schema.features[i]
        k = len(f.categories)
        c = self.features[i]
        if c.kind == IMMUTABLE:
            return np.eye(k, dtype=bool)
        m = np.ones((k, k), dtype=bool)
        for src, targets in c.transitions.items():
            s = f.categories.index(src)
            m[s] = False
            m[s, s] = True
            for t in targets:
                m[s, f.categories.index(t)] = True
        return m

    def code_moves(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Numeric feature ``i``'s special codes (ascending) and the ``(k + 1, k + 1)`` bool matrix of allowed
        moves between its value classes: index 0 is every ordinary value, ``1 + c`` the code ``codes[c]``. By
        default only staying in the class is allowed (an ordinary value may change to another one; a code stays);
        the feature's transitions add moves; an immutable feature allows none but staying."""
        f = self.schema.features[i]
        codes = np.asarray(f.special_codes, dtype=np.float64)
        m = np.eye(len(codes) + 1, dtype=bool)
        c = self.features[i]
        if c.kind == IMMUTABLE:
            return codes, m
        where = {VALUE: 0, **{code: 1 + k for k, code in enumerate(f.special_codes)}}
        for src, targets in c.transitions.items():
            for t in targets:
                m[where[src], where[t]] = True
        return codes, m


def _parse(feature, value) -> FeatureConstraint:
    if isinstance(value, FeatureConstraint):
        value = value.to_dict()
    if isinstance(value, str):
        value = {"kind": value}
    if not isinstance(value, dict):
        raise ParameterError(f"constraint on {feature.name!r} must be a string ({', '.join(KINDS)}) or a dict, "
                             f"got {value!r}")
    unknown = set(value) - {"kind", "direction", "weight", "transitions"}
    if unknown:
        raise ParameterError(f"constraint on {feature.name!r} has unknown key(s) {sorted(unknown)}")
    kind = value.get("kind", value.get("direction", FREE))
    if kind in ("increase", "decrease"):
        kind += "_only"
    if kind not in KINDS:
        raise ParameterError(f"constraint on {feature.name!r}: kind must be one of {KINDS}, got {kind!r}")
    if kind not in kinds_for(feature.is_categorical, feature.ordered):
        raise ParameterError(f"{feature.name!r} is categorical without an order: use 'transitions' to restrict its "
                             "moves, not a direction (or declare its order: an ordered pandas Categorical)")
    weight = value.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not np.isfinite(weight) or weight <= 0:
        raise ParameterError(f"constraint on {feature.name!r}: weight must be a positive number, got {weight!r}")
    if weight > 1e4:
        raise ParameterError(f"constraint on {feature.name!r}: weight {weight} is above the maximum 10000; use "
                             "'immutable' to forbid changing it")
    if int(round(weight * UNIT)) < 1:
        raise ParameterError(f"constraint on {feature.name!r}: weight {weight} is below the resolution 1/{UNIT}")
    transitions = value.get("transitions") or {}
    if transitions and not feature.is_categorical:
        transitions = _code_transitions(feature, transitions)
    elif transitions:
        cats = {str(c): c for c in feature.categories}
        parsed = {}
        for src, targets in transitions.items():
            if str(src) not in cats:
                raise ParameterError(f"transitions of {feature.name!r} name unknown category {src!r}")
            bad = [t for t in targets if str(t) not in cats]
            if bad:
                raise ParameterError(f"transitions of {feature.name!r} name unknown categor(ies) {bad}")
            parsed[cats[str(src)]] = [cats[str(t)] for t in targets]
        transitions = parsed
    if feature.is_categorical and kind in (INCREASE, DECREASE):  # an ordered categorical: moves along its order
        cats = list(feature.categories)
        order = {k: (cats[i:] if kind == INCREASE else cats[:i + 1]) for i, k in enumerate(cats)}
        transitions = {k: [t for t in v if t in set(transitions.get(k, v))] for k, v in order.items()}
    return FeatureConstraint(kind=kind, weight=float(weight), transitions=transitions)


def _code_transitions(feature, transitions) -> dict:
    """The transitions of a numeric feature: moves into and out of its special codes (``"value"``: every ordinary
    value), each code as the feature holds it."""
    if not feature.special_codes:
        raise ParameterError(f"{feature.name!r} is numeric without special codes: use a direction, not "
                             "'transitions' (declare its codes with special_codes= to allow moves out of them)")
    if not isinstance(transitions, dict):
        raise ParameterError(f"transitions of {feature.name!r} must be a dict {{from: [to, ...]}}")
    known = {VALUE: VALUE}
    for c in feature.special_codes:
        known[str(c)] = c
        known[repr(float(c))] = c

    def read(v):
        key = v if isinstance(v, str) else repr(float(v)) if isinstance(v, (int, float)) and not isinstance(
            v, bool) else None
        if key not in known:
            try:
                key = repr(float(v)) if isinstance(v, str) and v != VALUE else key
            except ValueError:
                pass
        if key not in known:
            shown_codes = ", ".join(str(c) for c in feature.special_codes)
            raise ParameterError(f"transitions of {feature.name!r} name {v!r}, which is neither one of its special "
                                 f"codes ({shown_codes}) nor {VALUE!r} (every ordinary value)"[:300])
        return known[key]

    out = {}
    for src, targets in transitions.items():
        if isinstance(targets, (str, bytes)) or not hasattr(targets, "__iter__"):
            raise ParameterError(f"transitions of {feature.name!r}: {src!r} must map to a list")
        out.setdefault(read(src), [])
        for t in targets:
            t = read(t)
            if t not in out[read(src)]:
                out[read(src)].append(t)
    return out


def constraint_parts(spec) -> tuple[str, float, dict]:
    """``(kind, weight, transitions)`` of one feature's constraint spec (``None`` and ``"free"`` are free)."""
    if spec is None:
        return FREE, 1.0, {}
    if isinstance(spec, str):
        return spec, 1.0, {}
    if isinstance(spec, FeatureConstraint):
        spec = spec.to_dict()
    kind = spec.get("kind", spec.get("direction", FREE))
    return kind, float(spec.get("weight", 1.0)), dict(spec.get("transitions") or {})


def constraint_spec(kind: str = FREE, weight: float = 1.0, transitions: dict | None = None):
    """The simplest spec of one feature's constraint (the inverse of :func:`constraint_parts`): ``None`` when
    free, the kind alone (``"immutable"``) when there is no weight or transition, else a dict. The weight is
    kept at the engine's resolution (1/1000)."""
    units = int(round(float(weight) * UNIT))
    out = {}
    if kind != FREE:
        out["kind"] = kind
    if units != UNIT:
        out["weight"] = units / UNIT
    if transitions:
        out["transitions"] = dict(transitions)
    if not out:
        return None
    return kind if list(out) == ["kind"] else out


def describe_constraint(spec) -> str:
    """One feature's constraint spec in words: "increase only, weight 2", "immutable", "free"."""
    if isinstance(spec, str):
        return spec.replace("_", " ")
    if isinstance(spec, FeatureConstraint):
        spec = spec.to_dict()
    bits = []
    kind = spec.get("kind", spec.get("direction", FREE))
    if kind != FREE:
        bits.append(str(kind).replace("_", " "))
    if spec.get("weight", 1) != 1:
        bits.append(f"weight {spec['weight']:g}")
    if spec.get("transitions"):
        bits.append("limited category moves")
    return ", ".join(bits) or "free"


def describe_constraints(spec: dict | None) -> str:
    """A constraints dict in words, one ``feature: constraint`` per constrained feature; "none" when empty."""
    parts = [f"{name}: {describe_constraint(value)}" for name, value in (spec or {}).items()
             if describe_constraint(value) != "free"]
    return "; ".join(parts) if parts else "none"


#: Name words of protected attributes: a person cannot (or must not be asked to) change them.
PROTECTED_WORDS = frozenset({"sex", "gender", "race", "racial", "ethnicity", "ethnic", "nationality", "citizenship",
                             "citizen", "country", "birth", "born", "male", "female", "religion", "religious", "marital", "married",
                             "disability", "disabled", "pregnant", "pregnancy", "native", "orientation", "caste",
                             # foreign worker, immigration or residence status
                             "foreign", "foreigner", "immigration", "immigrant", "migrant", "migration", "visa",
                             "residency", "asylum", "refugee",
                             # marital or family status
                             "family", "spouse", "widowed", "divorced", "dependents", "dependants", "children"})
#: With "age" in the name, a word that makes the column an age band (a protected attribute, not a quantity that
#: grows by waiting: moving to the next band is not advice).
AGE_BAND_WORDS = frozenset({"group", "band", "bracket", "range", "class", "category", "bucket", "cohort", "bin"})
#: Category values that mark a protected attribute whatever the column is called.
PROTECTED_VALUES = frozenset({"male", "female", "man", "woman", "men", "women", "non-binary", "nonbinary", "white",
                              "black", "asian", "hispanic", "latino", "latina", "caucasian", "african-american",
                              "amer-indian-eskimo", "asian-pac-islander", "married", "divorced", "widowed",
                              "never-married", "single", "christian", "muslim", "jewish", "hindu", "buddhist",
                              "separated", "widow", "widower", "foreign", "foreigner", "citizen", "non-citizen",
                              "immigrant", "migrant", "husband", "wife", "unmarried", "own-child",
                              "not-in-family"})
#: Name words of quantities that only grow with time (waiting is the only way to change them).
GROWING_WORDS = frozenset({"age", "seniority", "tenure", "history", "infile", "oldest", "since", "elapsed",
                           "vintage", "membership"})
#: Name words of past adverse events: counts and worst values of the past cannot be undone.
PAST_EVENT_WORDS = frozenset({"late", "delinquent", "delinquency", "delq", "delinq", "derog", "derogatory",
                              "bankruptcy", "bankrupt", "default", "defaults", "overdue", "arrears", "chargeoff",
                              "collection", "collections", "missed", "foreclosure", "convictions", "priors",
                              "recid", "arrests"})


def _name_words(name: str) -> set:
    """The words of a column name, split on case changes, digits and separators ("MSinceMostRecentDelq" ->
    {"m", "since", "most", "recent", "delq"}; "n_late_payments" -> {"n", "late", "payments"})."""
    return {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", str(name))}


def _label_words(labels) -> set:
    """The words of a feature's value labels ("male: divorced / separated" -> {"male", "divorced", "separated"})."""
    words = set()
    for label in (labels or {}).values():
        words |= {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]*", str(label))}
    return words


def _special_codes_of(X) -> dict:
    """Feature name -> special codes: from a fitted schema, or detected in a DataFrame's numeric columns."""
    if isinstance(X, FeatureSchema):
        return {f.name: list(f.special_codes) for f in X.features if f.special_codes}
    out = {}
    for col in X.columns:
        s = X[col]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            codes = sorted(sentinel_codes(s)[0])
            if codes:
                out[str(col)] = codes
    return out


#: A column name ending in a time index: a stem, an optional time tag (lag, m, t, month, …) and the index
#: ("status_1", "bill_amt3", "income_lag1", "spend_m3").
_INDEXED = (re.compile(r"^(?P<stem>.*?[A-Za-z])[_\-. ](?P<tag>lag|month|mon|m|t|week|w|q)[_\-. ]?(?P<idx>\d{1,3})$",
                       re.IGNORECASE),
            re.compile(r"^(?P<stem>.*?[A-Za-z])[_\-. ]?(?P<tag>)(?P<idx>\d{1,3})$"))
#: Time tags that make a single indexed column a history column on their own ("income_lag1").
_TIME_TAGS = frozenset({"lag", "month", "mon", "m", "t", "week", "w", "q"})
#: Stems of generic column names (x1, x2, …; feature_1, …; V1, …): an index there is a position, not a time.
_GENERIC_STEMS = frozenset({"x", "f", "v", "c", "a", "b", "col", "column", "feature", "feat", "var", "variable",
                            "attr", "attribute", "pc", "component", "dim", "field", "input", "predictor", "z"})


def history_families(names) -> dict:
    """Families of history columns among ``names``: one stem and a time index (``status_1`` … ``status_6``,
    ``bill_1`` … ``bill_6``, ``income_lag1``/``income_lag2``, ``spend_m3``). Returns ``{stem: [names, most recent
    first]}``; the most recent is the smallest index (``_1`` = last month, ``lag1``). A family has at least two
    members, or one member with a time tag (``lag``, ``m``, ``t``, ``month``, ``w``, ``q``); generic names
    (``x1``, ``feature_3``, ``V12``) are positions, not times, and never a family."""
    groups: dict = {}
    for name in names:
        m = _INDEXED[0].match(str(name)) or _INDEXED[1].match(str(name))
        if not m:
            continue
        stem, tag = m["stem"], m["tag"].lower()
        if stem.lower() in _GENERIC_STEMS and not tag:
            continue
        groups.setdefault((stem.lower(), tag), []).append((int(m["idx"]), str(name)))
    out = {}
    for (stem, tag), members in groups.items():
        if len({i for i, _ in members}) < 2 and tag not in _TIME_TAGS:
            continue
        if len(members) < 2 and tag in ("t", "w", "q"):  # "item_t1" alone: too weak a hint
            continue
        out[stem + (f"_{tag}" if tag else "")] = [n for _, n in sorted(members)]
    return out


def suggest_constraints(X, value_labels: dict | None = None, titles: dict | None = None) -> dict:
    """Actionability constraints to suggest for the features of ``X``, each with the reason, for a person to
    confirm (nothing is applied by this function).

    ``X`` is a DataFrame of the features (columns typed as the engine types them) or a fitted explainer's
    ``schema_``. Returns plain data, ``{feature: {"constraint": spec, "reason": text}}`` for the features a rule
    suggests something for (:func:`constraints_from_suggestions` turns it into a ``constraints=`` dict). The
    heuristics, on whole words of the column name (so "wage" is not "age") and on category values:

    * **protected attributes** -- names such as sex, gender, race, ethnicity, nationality, country of birth,
      religion, marital status, disability; or categories such as "male"/"female", "white"/"black",
      "married"/"divorced" -> ``"immutable"``;
    * **the worst or count "ever"** -- MaxDelqEver, NumTrades60Ever2DerogPubRec -> ``"immutable"`` (the past
      cannot be rewritten);
    * **quantities that only grow with time** -- age, tenure, seniority, credit history length ("history",
      "InFile", "oldest"), "months since" / "years since" (even since a delinquency) -> ``"increase_only"``
      (numeric features; a categorical one is ``"immutable"``);
    * **other past events** -- names of late payments, delinquencies, derogatory records, defaults,
      bankruptcies (counts of them: n_late_payments, PercentTradesNeverDelq) -> ``"immutable"``.

    * **history columns** -- a family with one stem and a time index (:func:`history_families`: ``status_1`` …
      ``status_6``) describes the past -> ``"immutable"``, except its most recent member (the one a person can
      still act on, ``status_1``), which keeps what the rules above suggest for it.

    ``titles`` (``{feature: title}``, from a data dictionary) speak as the name does: a column ``c7`` titled
    "marital status" is protected.
    Protected attributes include foreign worker, citizenship, immigration or residence status, marital or family
    status and **age bands** (``AgeGroup``, ``Age_band``: the band is a protected attribute, not a quantity to
    wait for). ``value_labels`` (a codebook ``{feature: {value: label}}``) lets the labels of coded values speak
    too: ``A91`` labelled "male: divorced" marks ``Personal_status_and_sex`` as protected. A direction suggested
    for a numeric feature with **special codes** (-7/-8/-9, :func:`tcrex.sentinel_codes`) applies to its ordinary
    values only: the reason says so, and a verified point never moves it into or out of a code unless a
    transition allows it.
    """
    codes_of = _special_codes_of(X)
    if not isinstance(X, FeatureSchema):
        X = FeatureSchema.detect(X)
    out = {}
    history = {}
    for stem, members in history_families(X.names).items():
        for name in members[1:]:
            history[name] = (stem, members[0])
    for f in X.features:
        words = _name_words(f.name) | _label_words({0: (titles or {}).get(f.name) or ""})
        joined = "".join(ch for ch in str(f.name).lower() if ch.isalnum())
        words |= {w for w in ("infile", "history") if w in joined}  # "AverageMInFile", "CreditHistoryYears"
        values = {str(c).strip().lower() for c in (f.categories or [])} if f.is_categorical else set()
        values |= _label_words((value_labels or {}).get(f.name))
        protected = words & PROTECTED_WORDS
        protected_values = values & PROTECTED_VALUES
        if "age" in words and words & AGE_BAND_WORDS:
            out[f.name] = {"constraint": IMMUTABLE, "reason": "the name (age " + ", ".join(sorted(
                words & AGE_BAND_WORDS)) + ") looks like an age band, a protected attribute: a person cannot, and "
                "must not be asked to, change it"}
        elif protected:
            out[f.name] = {"constraint": IMMUTABLE, "reason": f"the name ({', '.join(sorted(protected))}) looks like "
                           "a protected attribute: a person cannot, and must not be asked to, change it"}
        elif len(protected_values) >= 2:
            shown = ", ".join(sorted(protected_values)[:3])
            out[f.name] = {"constraint": IMMUTABLE, "reason": f"its values ({shown}) look like a protected "
                           "attribute: a person cannot, and must not be asked to, change it"}
        elif "ever" in words:
            out[f.name] = {"constraint": IMMUTABLE, "reason": "the name (ever) describes past events: a count or "
                           "worst value of the past cannot be undone"}
        elif words & GROWING_WORDS and not f.is_categorical:
            what = ", ".join(sorted({"in file" if w == "infile" else w for w in words & GROWING_WORDS}))
            reason = f"the name ({what}) describes time that has passed: it only grows, by waiting"
            if codes_of.get(f.name):
                shown_codes = ", ".join(str(c).replace("-", "−") for c in codes_of[f.name])
                reason += (f" (its special codes {shown_codes} are not amounts of time: they stay as they are, "
                           "unless a transition allows a move)")
            out[f.name] = {"constraint": INCREASE, "reason": reason}
        elif words & PAST_EVENT_WORDS:
            what = ", ".join(sorted(words & PAST_EVENT_WORDS))
            out[f.name] = {"constraint": IMMUTABLE, "reason": f"the name ({what}) describes past events: a count or "
                           "worst value of the past cannot be undone"}
        elif words & GROWING_WORDS:  # categorical: no direction to move in
            what = ", ".join(sorted({"in file" if w == "infile" else w for w in words & GROWING_WORDS}))
            out[f.name] = {"constraint": IMMUTABLE, "reason": f"the name ({what}) describes time that has passed, "
                           "which no action changes"}
        if f.name in history and out.get(f.name, {}).get("constraint") != IMMUTABLE:
            stem, recent = history[f.name]
            out[f.name] = {"constraint": IMMUTABLE, "history": True,
                           "reason": f"one of the history columns {stem}… (a stem and a time index): it describes the "
                                     f"past, which no action changes; only the most recent ({recent}) may change"}
    return out


def constraints_from_suggestions(suggestions: dict) -> dict:
    """The ``constraints=`` dict of :func:`suggest_constraints`'s suggestions (their reasons left out)."""
    return {f: s["constraint"] for f, s in suggestions.items()}


def pack_constraints(spec: dict | None) -> tuple:
    """A constraints dict as a hashable, order-independent tuple of ``(feature, JSON of its spec)`` pairs (for
    cache keys and frozen settings); :func:`unpack_constraints` is its inverse. Free features are dropped."""

    return tuple(sorted((str(k), json.dumps(v, sort_keys=True, default=str)) for k, v in (spec or {}).items()
                        if describe_constraint(v) != "free"))


def unpack_constraints(packed: tuple) -> dict:
    """The constraints dict of a :func:`pack_constraints` tuple (``{}`` when every feature is free)."""

    return {name: json.loads(spec) for name, spec in packed}
