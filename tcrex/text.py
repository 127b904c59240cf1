"""Plain-language rendering of conditions, in the user's column names and category values.

The one renderer of numbers, conditions and recourse sentences: the explainer, its views (rules and metarules
frames), target descriptions and, through them, the figures, reports and the dashboard use these functions, so a
printed bound is always true of the value it prints (``format_number`` never rounds a bound across a value).
"""
from __future__ import annotations

import math

import numpy as np


def format_number(v) -> str:
    if v is None:
        return "?"
    v = float(v)
    if not math.isfinite(v):
        return str(v)
    if abs(v) < 1e15 and v == int(v):
        return str(int(v))
    text = f"{v:.6g}"
    # a printed bound must be true of the values it prints: when 6 digits would move the number (a float32
    # threshold 0.58499998 is not 0.585), print the shortest text that reads back as exactly this float
    return text if float(text) == v else repr(v)


def integer_range(low: float, high: float) -> tuple[float, float]:
    """For an integer feature, the whole numbers in ``(low, high]``: ``(first, last)`` (inf when open)."""
    first = math.floor(low) + 1 if np.isfinite(low) else -np.inf
    last = math.floor(high) if np.isfinite(high) else np.inf
    return first, last


def numeric_condition(low: float, high: float, integer: bool) -> str:
    """``(low, high]`` as text without the feature name: "≤ 40", "> 25.5", "in (40, 51]", "≥ 5"."""
    if integer:
        first, last = integer_range(low, high)
        if np.isfinite(first) and np.isfinite(last):
            if first == last:
                return f"= {format_number(first)}"
            if first < last:
                return f"in [{format_number(first)}, {format_number(last)}]"
        elif np.isfinite(first):
            return f"≥ {format_number(first)}"
        elif np.isfinite(last):
            return f"≤ {format_number(last)}"
    if not np.isfinite(low) and not np.isfinite(high):
        return "any value"
    if not np.isfinite(low):
        return f"≤ {format_number(high)}"
    if not np.isfinite(high):
        return f"> {format_number(low)}"
    return f"in ({format_number(low)}, {format_number(high)}]"


def categorical_condition(allowed: np.ndarray, categories: list) -> str:
    """An allowed-category mask as text: "= Married", "in {A, B}", "≠ Private", "not in {A, B}"."""
    yes = [str(c) for c, a in zip(categories, allowed) if a]
    no = [str(c) for c, a in zip(categories, allowed) if not a]
    if not no:
        return "any value"
    if len(yes) == 1:
        return f"= {yes[0]}"
    if len(no) < len(yes):
        return f"≠ {no[0]}" if len(no) == 1 else "not in {" + ", ".join(no) + "}"
    return "in {" + ", ".join(yes) + "}"


def change_phrase(name: str, condition: str) -> str:
    """"age to ≥ 5", "MaritalStatus to Married" (an equality reads better without its sign)."""
    if condition.startswith("= "):
        condition = condition[2:]
    elif condition.startswith("≠ "):
        condition = "anything but " + condition[2:]
    return f"{name} to {condition}"


def join_and(parts: list[str]) -> str:
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def rule_label(number: int) -> str:
    """The public id of the ``number``-th rule of an explainer (1-based, counted over every target in order):
    "R1", "R2", … — the one format of rule ids; :meth:`tcrex.TCREx.rule_id` numbers the rules."""
    return f"R{int(number)}"


def class_label(value, names=None) -> str | None:
    """The readable name of a class label from ``names`` (a mapping such as ``{1: "approved"}`` or a callable),
    or None when it has none. numpy scalars and their text form are looked up too (``np.int64(1)``, ``"1"``)."""
    if names is None:
        return None
    if callable(names):
        out = names(value)
        return None if out is None else str(out)
    plain = value.item() if isinstance(value, np.generic) else value
    for key in (plain, str(plain)):
        try:
            if key in names:
                return str(names[key])
        except TypeError:  # an unhashable label: no name
            return None
    by_text = {str(k): v for k, v in names.items()}
    return str(by_text[str(plain)]) if str(plain) in by_text else None


def outcome_text(classes, names=None) -> str:
    """A set of class labels in words: their names when ``names`` knows every one ("approved", "A or B"), else
    the engine's form ("output = 1", "output in {1, 2}")."""
    named = [class_label(c, names) for c in classes]
    if names is not None and named and all(n is not None for n in named):
        return " or ".join(named)
    if len(classes) == 1:
        return f"output = {classes[0]}"
    return "output in {" + ", ".join(map(str, classes)) + "}"


def recourse_sentence(changes: list[str], keeps: list[str]) -> str:
    """"Change A to … and B to …, while keeping C in … and D ≤ …"."""
    if not changes:
        return "No change needed" + ("; keep " + join_and(keeps) if keeps else "")
    text = "Change " + join_and(changes)
    if keeps:
        text += ", while keeping " + join_and(keeps)
    return text
