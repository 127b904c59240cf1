"""Targets Y*: the set of model outputs a counterfactual should reach, and which inputs each one serves.

An input is served by the first target whose output set does not contain the input's own output. With the
default targets this gives: binary -> the other class; multi-class (untargeted) -> any other class; regression ->
above the split for outputs at or below it, at or below the split for outputs above it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..base._data import _native
from ...errors import ModelError, ParameterError, SchemaError
from ..base._outputs import check_n_classes
from ._surrogate import readable_cut
from ...vocabulary import CLASSIFICATION
from ...text import ordered_text, target_text


@dataclass(frozen=True)
class Target:
    """An outcome Y* recourse leads to (``Solution.target``): a set of classes, or a regression interval.

    Names: a *target spec* is the ``target=`` parameter as a person gives it (``1``, ``{"at_least": 7}``,
    ``(150, None)``); :func:`targets_from_spec` turns it into ``Target`` records; a *target id* is a position in
    ``TCREx.targets_`` (``explain()["target"]``); a :class:`tcrex.Solution` is the rules and metarules of one target.
    In words: :meth:`describe` (:func:`tcrex.text.target_text`)."""

    classes: tuple | None = None  #: classification: the labels in Y* (None for regression)
    interval: tuple | None = None  #: regression: ``(low, high]``, None for an open end (None for classification)

    def contains(self, y: np.ndarray) -> np.ndarray:
        if self.classes is not None:
            y = np.asarray(y)
            if y.dtype.kind in "iuf" and all(type(c) in (int, float) for c in self.classes):
                if len(self.classes) <= 4:  # a few comparisons cost less than np.isin's set-up (same result)
                    inside = y == self.classes[0]
                    for c in self.classes[1:]:
                        inside |= y == c
                    return inside
                return np.isin(y, self.classes)  # plain numbers compare alike in numpy and pandas
            return pd.Series(y, copy=False).isin(list(self.classes)).to_numpy()  # hash-based, any labels
        low, high = self.interval
        y = np.asarray(y, dtype=np.float64)
        inside = np.ones(len(y), dtype=bool)
        if low is not None:
            inside &= y > low
        if high is not None:
            inside &= y <= high
        return inside

    def describe(self, names=None) -> str:
        """The outcome in words; ``names`` (``{label: name}`` or a callable) gives classes their readable names
        ("approved" instead of "output = 1", see :func:`tcrex.text.outcome_text`)."""
        return target_text(self.classes, self.interval, names)

    def to_dict(self) -> dict:
        if self.classes is not None:
            return {"classes": [_native(c) for c in self.classes]}
        return {"interval": {"low": self.interval[0], "high": self.interval[1]}}

    @classmethod
    def from_dict(cls, d: dict) -> "Target":
        if not isinstance(d, dict):
            raise SchemaError("target 'outputs' must be an object")
        if "classes" in d:
            classes = d["classes"]
            if not isinstance(classes, list) or not classes or \
                    not all(isinstance(c, (str, int, float, bool)) for c in classes):
                raise SchemaError("target classes must be a non-empty list of labels (text, numbers or booleans)")
            return cls(classes=tuple(classes))
        if "interval" in d:
            iv = d["interval"]
            if not isinstance(iv, dict):
                raise SchemaError("target interval must be an object with 'low' and 'high'")
            low, high = _opt_float(iv.get("low")), _opt_float(iv.get("high"))
            if (low is None and high is None) or any(v is not None and not np.isfinite(v) for v in (low, high)) \
                    or (low is not None and high is not None and not low < high):
                raise SchemaError(f"target interval ({low}, {high}] is not a valid finite interval")
            return cls(interval=(low, high))
        raise SchemaError(f"target outputs need 'classes' or 'interval', got keys {sorted(d)}")


def _opt_float(v):
    return None if v is None else float(v)


def serving_target(targets: list[Target], y: np.ndarray) -> np.ndarray:
    """Index of the target serving each output (the first that does not contain it), -1 when none does."""
    result = np.full(len(y), -1, dtype=np.int64)
    for t, target in enumerate(targets):
        free = (result < 0) & ~target.contains(y)
        result[free] = t
    return result


def default_targets(task: str, y: np.ndarray, classes: list) -> list[Target]:
    if task == CLASSIFICATION:
        if len(classes) < 2:
            raise ModelError(f"the model outputs a single class ({classes[0]!r}) on all rows; there is no other "
                             "output to reach — use data on which the model predicts at least two classes")
        check_n_classes(classes)
        if len(classes) == 2:
            return [Target(classes=(classes[1],)), Target(classes=(classes[0],))]
        return [Target(classes=tuple(c for c in classes if c != k)) for k in classes]
    mean = float(np.mean(y))
    if not np.isfinite(mean):  # outputs near the float maximum: the sum overflowed, so average in extended precision
        mean = float(np.mean(np.asarray(y, dtype=np.longdouble)))
    return split_targets(_short_split(mean, np.asarray(y, dtype=np.float64)))


def _short_split(mean: float, y: np.ndarray) -> float:
    """The default regression threshold: the shortest number between the fit outputs on either side of the mean
    (5.818 rather than 5.817982904952789), so every fit output falls on the same side as at the mean, and a printed
    "output > 5.818" is exactly the target."""
    u = np.sort(y[np.isfinite(y)])
    i = int(np.searchsorted(u, mean, side="right"))
    if 0 < i < len(u) and u[i - 1] < u[i]:
        return readable_cut(float(u[i - 1]), float(u[i]), mean)
    return mean


def split_targets(threshold: float) -> list[Target]:
    return [Target(interval=(threshold, None)), Target(interval=(None, threshold))]


def targets_from_spec(spec, task: str, y: np.ndarray, classes: list) -> list[Target]:
    """Targets for the ``target`` parameter: None (defaults), a class or list of classes, an ordered class target
    ``{"at_least": c}`` / ``{"at_most": c}`` (numeric labels, see :func:`ordered_classes`), a regression threshold
    (split in both directions) or a ``(low, high)`` interval."""
    if spec is None:
        return default_targets(task, y, classes)
    if isinstance(spec, dict):
        return [Target(classes=ordered_classes(spec, task, classes))]
    if task == CLASSIFICATION:
        wanted = list(spec) if isinstance(spec, (list, tuple, set, frozenset)) else [spec]
        wanted = [_match_class(w, classes) for w in wanted]
        if not wanted:
            raise ParameterError("target names no class")
        ordered = tuple(c for c in classes if c in wanted)
        if len(ordered) == len(classes):
            raise ParameterError("target contains every class, so no input has anything to reach")
        return [Target(classes=ordered)]
    if isinstance(spec, (tuple, list)) and len(spec) == 2:
        low, high = (_opt_float(v) for v in spec)
        if low is not None and high is not None and not low < high:
            raise ParameterError(f"target interval (low, high] needs low < high, got ({low}, {high}]")
        if low is None and high is None:
            raise ParameterError("target interval must bound at least one side")
        return [Target(interval=(low, high))]
    try:
        return split_targets(float(spec))
    except (TypeError, ValueError):
        raise ParameterError(f"for regression, target must be None, a threshold or a (low, high) interval; "
                             f"got {spec!r}") from None


#: Keys of an ordered classification target: ``{"at_least": 7}`` is "7 or better" when higher labels are better,
#: ``{"at_most": 1}`` "1 or lower" when lower labels are better (e.g. a risk grade); worded by
#: :func:`tcrex.text.ordered_text`.
ORDERED_KEYS = ("at_least", "at_most")


def ordered_classes(spec: dict, task: str, classes: list) -> tuple:
    """The classes an ordered target ``{"at_least": c}`` / ``{"at_most": c}`` names: every class of the model whose
    label is at least (at most) ``c``, in the model's order. Labels must be numbers (ordinal scores such as a wine
    quality 3-9); ``c`` need not be a class itself."""
    if task != CLASSIFICATION:
        raise ParameterError(f"an ordered target {spec!r} is for classification with ordered labels; for regression "
                             "pass an interval, e.g. target=(threshold, None)")
    if len(spec) != 1 or next(iter(spec)) not in ORDERED_KEYS:
        raise ParameterError(f"an ordered target is {{'at_least': label}} or {{'at_most': label}}, got {spec!r}")
    (key, bound), = spec.items()
    numbers = [_as_number(c) for c in classes]
    if any(v is None for v in numbers):
        raise ParameterError(f"'{key}' needs numeric class labels to order; the model's classes are {classes}. "
                             "Pass the favourable classes as a list instead")
    b = _as_number(bound)
    if b is None:
        raise ParameterError(f"'{key}' needs a number, got {bound!r}")
    chosen = tuple(c for c, v in zip(classes, numbers) if (v >= b if key == "at_least" else v <= b))
    if not chosen:
        raise ParameterError(f"no class is {'at least' if key == 'at_least' else 'at most'} {bound!r} "
                             f"(classes: {classes})")
    if len(chosen) == len(classes):
        raise ParameterError(f"every class is {'at least' if key == 'at_least' else 'at most'} {bound!r}, so no "
                             "input has anything to reach")
    return chosen


def _as_number(v):
    if isinstance(v, bool) or isinstance(v, np.bool_):
        return None
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v) if np.isfinite(float(v)) else None
    try:
        out = float(str(v).strip())
    except ValueError:
        return None
    return out if np.isfinite(out) else None


def ordered_labels(classes) -> bool:
    """Whether the class labels are all numbers, so "this class or better" is meaningful (an ordinal score)."""
    classes = list(classes)
    return len(classes) > 2 and all(_as_number(c) is not None for c in classes)


def _match_class(value, classes: list):
    for c in classes:
        if c == value or str(c) == str(value):
            return c
    raise ParameterError(f"target class {value!r} is not among the model's classes {classes}")


#: Labels that name the favourable class of a binary outcome when nothing else says which one it is.
FAVOURABLE_WORDS = frozenset({"1", "true", "yes", "y", "approved", "approve", "accept", "accepted", "good", "positive",
                              "granted", "pass", "passed", "hired", "success", ">50k", "> 50k"})


def favourable_class(classes, named=None):
    """The favourable class of a classifier's outputs, or None when nothing says which it is (then ask the user).

    ``named`` is what the data's metadata names as favourable (e.g. the bundled loans sample: 1 = approved); it
    wins when it is one of ``classes``. Otherwise, for two classes, the one whose label reads as favourable
    (1, True, "yes", "approved", ...) when exactly one does. Multi-class outputs have no default. The dashboard
    starts from :func:`suggest_favourable` instead, which also reads adverse labels and the label column's name and
    gives the reason it asks a person to confirm."""
    classes = list(classes)
    if named is not None:
        for c in classes:
            if c == named or str(c) == str(named):
                return c
    if len(classes) != 2:
        return None
    hits = [c for c in classes if str(c).strip().lower() in FAVOURABLE_WORDS]
    return hits[0] if len(hits) == 1 else None


#: Class labels that name an adverse outcome (the favourable class of a binary label is then the other one).
ADVERSE_WORDS = frozenset({"bad", "default", "defaulted", "reject", "rejected", "deny", "denied", "declined", "no",
                           "false", "fail", "failed", "fraud", "churn", "churned", "negative", "<=50k", "<= 50k",
                           "high risk", "delinquent", "died", "dead"})
#: Parts of a label column's name that read as an adverse event or a quantity where less is better: a 0/1 label
#: named so marks the event with 1, and a regression output named so is favourable when lower.
ADVERSE_NAME_PARTS = ("bad", "default", "risk", "fraud", "churn", "delinq", "fail", "death", "died", "mortal",
                      "readmit", "disease", "reject", "denied", "loss", "arrest", "recid", "progress", "cost",
                      "debt", "error", "defect", "complaint", "claim")
#: Parts of a label column's name that read as a favourable event (a 0/1 label named so marks it with 1).
FAVOURABLE_NAME_PARTS = ("approv", "good", "success", "surviv", "hired", "accept", "grant", "pass", "repaid",
                         "income", "score", "quality", "profit", "revenue", "sales", "yield")


@dataclass(frozen=True)
class FavourableSuggestion:
    """A suggested favourable outcome and the one-line reason for it (what a person is asked to confirm).

    ``target`` is an engine ``target`` spec: a class, ``{"at_least": c}`` for ordinal labels, a regression interval
    ``(threshold, None)`` / ``(None, threshold)``, or None (the paper's default: any other class) when nothing
    suggests one. ``confident``: the data's metadata or the class labels themselves say it (else a guess from
    the column's name or a convention, to be confirmed)."""

    target: object
    reason: str
    confident: bool = False


def _name_reads(label, parts) -> bool:
    text = "".join(ch for ch in str(label or "").lower() if ch.isalnum())
    return any(p in text for p in parts)


def _from_text_labels(classes, labels, y, label) -> FavourableSuggestion:
    """Two numeric output classes of a model whose label column holds text: see :func:`suggest_favourable`."""
    coded = None if y is None else _coded_as(classes, labels, y)
    if coded is not None:
        good = [c for c in classes if str(coded[c]).strip().lower() in FAVOURABLE_WORDS]
        bad = [c for c in classes if str(coded[c]).strip().lower() in ADVERSE_WORDS]
        if len(good) == 1 or len(bad) == 1:
            c = good[0] if len(good) == 1 else classes[1 - classes.index(bad[0])]
            return FavourableSuggestion(c, f"the model outputs {c} mostly where {label!r} is {str(coded[c])!r}, "
                                           f"which reads as a favourable outcome; confirm it")
    shown = ", ".join(repr(str(v)) for v in sorted(pd.unique(pd.Series(np.asarray(labels, dtype=object)).dropna()
                                                             .astype(str)))[:4])
    return FavourableSuggestion(None, f"the label column {label!r} holds {shown} while the model outputs "
                                      f"{classes[0]} and {classes[1]}: nothing says which output is favourable, so "
                                      "both directions are explained until you choose")


def _coded_as(classes, labels, y) -> dict | None:
    """Which label value each of two numeric output classes stands for, read off the rows (``labels``: the label
    column's text values, ``y``: the model's outputs on the same rows): ``{class: label value}`` when each class
    coincides mostly with a different label value, else None (nothing says which output is which)."""
    labels, y = pd.Series(np.asarray(labels, dtype=object)), pd.Series(np.asarray(y, dtype=object))
    if len(labels) != len(y) or not len(y):
        return None
    out = {}
    for c in classes:
        hit = labels[(y == c).to_numpy() | (y.astype(str) == str(c)).to_numpy()].dropna()
        if not len(hit):
            return None
        top = hit.astype(str).value_counts()
        if len(top) > 1 and top.iloc[0] == top.iloc[1]:
            return None
        out[c] = top.index[0]
    return out if len(set(out.values())) == len(classes) else None


def suggest_favourable(task: str, classes=(), *, label=None, named=None, y=None,
                       labels=None) -> FavourableSuggestion:
    """The favourable outcome to start from, with its reason (the dashboard asks the user to confirm it).

    ``classes``: the classifier's output classes; ``label``: the label column's name (its words hint at what a 1
    means: ``"bad"``, ``"default"``, ``"risk"`` mark an adverse event); ``named``: what the data's metadata names
    as favourable (wins); ``y``: the model's outputs (regression threshold, and where "this class or better"
    starts for ordinal labels). Heuristics, in order: metadata; a class label that reads favourable ("approved",
    "yes", ">50K") or adverse ("bad", "rejected", "<=50K"); a 0/1 label whose column name reads adverse (0 is
    favourable) or favourable (1); ordinal labels (4+ numeric classes): "this class or better" from the class
    at which at most half the rows remain; regression: lower when the name reads as a risk or a cost, else
    higher, with the threshold at the mean output.

    ``labels``: the label column's values on the rows of ``y``. When they are text ("Good"/"Bad") and the model
    outputs 0/1, the column's name and its words describe the text, not the numbers: the class that coincides
    mostly with a favourable (adverse) word is suggested from the rows; when the rows do not tell, nothing is
    suggested (None: the user is asked), never the name's guess."""
    if task != CLASSIFICATION:
        values = np.asarray(y if y is not None else [], dtype=np.float64)
        mean = float(np.mean(values)) if len(values) else 0.0
        thr = float(f"{mean:.4g}")  # a round threshold a person can read back
        if _name_reads(label, ADVERSE_NAME_PARTS):
            return FavourableSuggestion((None, thr), f"lower is suggested because {label!r} reads as something to "
                                                     "reduce (a risk, a cost, a disease's progression); the "
                                                     "threshold is the mean output")
        return FavourableSuggestion((thr, None), "higher is suggested (nothing in the data says which direction is "
                                                 "favourable; choose lower if smaller outputs are better); the "
                                                 "threshold is the mean output")
    classes = list(classes)
    if named is not None:
        for c in classes:
            if c == named or str(c) == str(named):
                return FavourableSuggestion(c, "the data's description names it as the favourable outcome", True)
    if len(classes) == 2:
        words = [str(c).strip().lower() for c in classes]
        good = [c for c, w in zip(classes, words) if w in FAVOURABLE_WORDS and w not in ("1", "true")]
        bad = [c for c, w in zip(classes, words) if w in ADVERSE_WORDS and w not in ("0", "false")]
        if len(good) == 1:
            return FavourableSuggestion(good[0], f"the class label {str(good[0])!r} reads as a favourable outcome",
                                        True)
        if len(bad) == 1:
            other = classes[1 - classes.index(bad[0])]
            return FavourableSuggestion(other, f"the other class, {str(bad[0])!r}, reads as an adverse outcome",
                                        True)
        flags = set(words) <= {"0", "1", "0.0", "1.0", "true", "false"}
        text = None if labels is None else pd.Series(np.asarray(labels, dtype=object)).dropna()
        if flags and text is not None and len(text) and pd.to_numeric(text, errors="coerce").isna().any():
            return _from_text_labels(classes, labels, y, label)
        if flags:
            zero = next(c for c, w in zip(classes, words) if w in ("0", "0.0", "false"))
            one = next(c for c, w in zip(classes, words) if w in ("1", "1.0", "true"))
            if _name_reads(label, ADVERSE_NAME_PARTS):
                return FavourableSuggestion(zero, f"the label column {label!r} reads as an adverse event, so {zero} "
                                                  "(it did not happen) is suggested")
            if _name_reads(label, FAVOURABLE_NAME_PARTS):
                return FavourableSuggestion(one, f"the label column {label!r} reads as a favourable event, so "
                                                 f"{one} (it happened) is suggested")
            return FavourableSuggestion(one, f"nothing in the data says which class is favourable; {one} is only a "
                                             f"convention — if {one} marks a bad outcome (e.g. 1 = Bad in credit "
                                             f"data), choose {zero}")
        return FavourableSuggestion(None, f"nothing says which of {str(classes[0])!r} and {str(classes[1])!r} is "
                                          "favourable, so both directions are explained until you choose")
    if len(classes) >= 4 and ordered_labels(classes):
        numbers = np.array([_as_number(c) for c in classes])
        order = np.argsort(numbers, kind="stable")
        start = classes[order[-1]]
        if y is not None and len(y):
            try:  # numbers (the usual case) without a Python loop over the rows
                yy = np.asarray(y, dtype=np.float64)
            except (TypeError, ValueError):
                yy = np.array([_as_number(v) for v in np.asarray(y).tolist()], dtype=np.float64)
            for i in order[1:]:
                if np.mean(yy >= numbers[i]) <= 0.5:
                    start = classes[i]
                    break
        if _name_reads(label, ADVERSE_NAME_PARTS):
            low = classes[order[0]]
            if y is not None and len(y):
                for i in order[::-1][1:]:
                    if np.mean(yy <= numbers[i]) <= 0.5:
                        low = classes[i]
                        break
            return FavourableSuggestion({"at_most": _native(low)},
                                        f"the labels are ordered numbers and {label!r} reads as something to reduce, "
                                        f"so '{ordered_text('at_most', low)}' is suggested (at most half the rows)")
        return FavourableSuggestion({"at_least": _native(start)},
                                    f"the labels are ordered numbers (a score), so '{ordered_text('at_least', start)}' is "
                                    "suggested (at most half the rows are there already); check that higher is "
                                    "better")
    return FavourableSuggestion(None, f"the {len(classes)} classes have no order and nothing says which is "
                                      "favourable: every individual is shown how to reach any other class until "
                                      "you choose one or a set")
