"""Targets Y*: the set of model outputs a counterfactual should reach, and which inputs each one serves.

An input is served by the first target whose output set does not contain the input's own output. With the
default targets this gives: binary -> the other class; multi-class (untargeted) -> any other class; regression ->
above the split for outputs at or below it, at or below the split for outputs above it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._data import _native
from ._errors import ModelError, ParameterError, SchemaError
from ._outputs import check_n_classes
from ._surrogate import readable_cut
from ._vocabulary import CLASSIFICATION
from .text import format_number, outcome_text


@dataclass(frozen=True)
class Target:
    classes: tuple | None = None  # classification: the labels in Y*
    interval: tuple | None = None  # regression: (low, high] with None for an open end

    def contains(self, y: np.ndarray) -> np.ndarray:
        if self.classes is not None:
            y = np.asarray(y)
            if y.dtype.kind in "iuf" and all(type(c) in (int, float) for c in self.classes):
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
        if self.classes is not None:
            return outcome_text(self.classes, names)
        low, high = self.interval
        if low is None:
            return f"output ≤ {format_number(high)}"
        if high is None:
            return f"output > {format_number(low)}"
        return f"output in ({format_number(low)}, {format_number(high)}]"

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
    """Targets for the ``target`` parameter: None (defaults), a class or list of classes, a regression threshold
    (split in both directions) or a ``(low, high)`` interval."""
    if spec is None:
        return default_targets(task, y, classes)
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
    (1, True, "yes", "approved", ...) when exactly one does. Multi-class outputs have no default. The one owner of
    this rule: the dashboard, the report, the CLI and the audit all ask it."""
    classes = list(classes)
    if named is not None:
        for c in classes:
            if c == named or str(c) == str(named):
                return c
    if len(classes) != 2:
        return None
    hits = [c for c in classes if str(c).strip().lower() in FAVOURABLE_WORDS]
    return hits[0] if len(hits) == 1 else None
