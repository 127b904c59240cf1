"""What a table implies about itself: candidate special codes, categories and actionability, as suggestions a
person confirms (nothing here changes data or applies a constraint)."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .._engine.base._data import categorical_columns, sentinel_codes
from ..constraints import IMMUTABLE, suggest_constraints
from ..vocabulary import CATEGORICAL, NUMERIC
from ._record import ORDERED, DataDictionary, FeatureEntry, value_key

#: A small-integer status column: at most this many distinct values, of which at most ``STATUS_MAX_CODES`` are
#: at or below zero beside positive counts 1, 2, … (repayment status: -2/-1/0 beside months of delay 1…8).
STATUS_MAX_VALUES = 24
STATUS_MAX_CODES = 4
#: Rows a candidate code must hold (a value seen once is not a code anyone declared).
CODE_MIN_ROWS = 2


@dataclass(frozen=True)
class Suggestion:
    """One suggestion: ``feature``, ``field`` (``"codes"``, ``"kind"``, ``"actionability"``, ``"history"``),
    the suggested ``value`` and the ``reason`` in words."""

    feature: str
    field: str
    value: object
    reason: str


@dataclass(frozen=True)
class Suggestions:
    """:func:`suggest`'s answer: ``dictionary`` (the table's dictionary with every suggestion applied, what the
    given dictionary declares winning) and ``items`` (each :class:`Suggestion`, for a person to confirm)."""

    dictionary: DataDictionary
    items: tuple = ()

    def of(self, field: str) -> list:
        return [s for s in self.items if s.field == field]

    def messages(self) -> list:
        """``[(feature, field, sentence)]``: each suggestion as one sentence naming its column (what an intake
        finding or a CLI line says)."""
        return [(s.feature, s.field, f"{s.feature!r}: {s.reason}") for s in self.items]


def _whole(v: float) -> bool:
    return bool(np.isfinite(v) and float(v) == int(v))


def _shown(codes) -> str:
    return ", ".join(str(c).replace("-", "−") for c in codes)


def candidate_codes(s: pd.Series) -> tuple[list, str]:
    """Values of numeric column ``s`` that look like codes, and why: the engine's detection
    (:func:`tcrex.sentinel_codes`: -7/-8/-9 beside varied non-negative values; 99/999 far above the rest), and
    also **small-integer status columns** (few whole values; the values at or below zero beside the counts 1, 2, …:
    repayment status -2/-1/0 beside 1…8 months of delay) and **high codes** (97/98/99, 997/998/999: whole values
    of nines and their neighbours, far above every other value). ``([], "")`` when none."""
    codes, rows, kind = sentinel_codes(s)
    if codes:
        where = ("negative values in an otherwise non-negative column" if kind == "negative"
                 else "far above every other value")
        return sorted(codes), f"{rows:,} row(s) hold {_shown(sorted(codes))}: {where}"
    v = s.to_numpy(dtype=np.float64, na_value=np.nan)
    v = v[np.isfinite(v)]
    if len(v) < 20 or not np.all(v == np.round(v)):
        return [], ""
    values, counts = np.unique(v, return_counts=True)
    low = values <= 0
    if 1 <= low.sum() <= STATUS_MAX_CODES and (values < 0).any() and len(values) <= STATUS_MAX_VALUES \
            and (values > 0).sum() >= 2 and counts[low].min() >= CODE_MIN_ROWS and 1 in values:
        codes = [int(c) for c in values[low]]
        return codes, (f"a small-integer status column: {_shown(codes)} (in {int(counts[low].sum()):,} rows) sit at or "
                       f"below zero beside the counts 1…{int(values.max())}, typical of status codes (\"paid in "
                       "full\", \"no use\") rather than amounts")
    # nines and their neighbours (96-99, 996-999, ...) above every ordinary value, which stay below 95 % of them
    big = float(values.max())
    if big >= 96 and _whole(big):
        ceiling = 10 ** len(str(int(big))) - 1  # 99, 999, 9999
        top = values[(values >= ceiling - 3) & (values <= ceiling)]
        rest = values[values < ceiling - 3]
        if 1 <= len(top) <= STATUS_MAX_CODES and len(rest) >= 3 and float(rest.max()) < 0.95 * float(top.min()) \
                and counts[-len(top):].min() >= CODE_MIN_ROWS and big == ceiling:
            codes = [int(c) for c in top]
            return codes, (f"{_shown(codes)} (in {int(counts[-len(top):].sum()):,} rows) sit above every other value "
                           f"(at most {float(rest.max()):g}), typical codes for \"not applicable\", \"don't know\" "
                           "or \"refused\"")
    return [], ""


def labelled_values(entry: FeatureEntry | None, labels: dict | None = None) -> list:
    """The labelled values of a numeric feature that are not declared codes (a codebook labelling -2 "no
    consumption" says it is a code; kept as a number it would sit on the number line): sorted numbers."""
    out = set()
    pairs = list((labels or {}).items()) + (list(entry.labels) if entry is not None else [])
    codes = {value_key(c) for c in (entry.special_codes if entry is not None else [])}
    for value, _ in pairs:
        key = value_key(value)
        if key[0] == "number" and key not in codes:
            out.add(key[1])
    return sorted(int(v) if v == int(v) else v for v in out)


def code_question(feature: str, values, labels: dict | None = None) -> str:
    """The question a fit or intake asks about labelled numeric values: "treat -2, -1, 0 of status_1 as codes?"."""
    named = []
    for v in values:
        label = next((lab for k, lab in (labels or {}).items() if value_key(k) == value_key(v)), None)
        named.append(f"{_shown([v])} ({label})" if label else _shown([v]))
    return (f"treat {', '.join(named)} of {feature} as codes? They are labelled, so they may be codes rather than "
            "numbers; as numbers they sit on the number line and a rule may span them or move a value into one. "
            "Declare them as special codes in the dictionary (or mark them as ordinary values to keep them numbers)")


def suggest(frame: pd.DataFrame, dictionary: DataDictionary | None = None, *, label_column: str | None = None) \
        -> Suggestions:
    """The dictionary ``frame`` implies, with each suggestion and its reason: per column its kind (numeric or
    categorical, as the engine types it), candidate special codes (:func:`candidate_codes`), and the
    actionability :func:`tcrex.constraints.suggest_constraints` suggests (protected attributes immutable, age
    increase only, history columns immutable except the most recent; categorical features only free or
    immutable). ``dictionary``: what is declared already; it wins over every suggestion, and its labelled
    numeric values that are not codes are asked about. ``label_column`` (the target) is left out."""
    given = dictionary or DataDictionary()
    X = frame.drop(columns=[label_column]) if label_column is not None and label_column in frame.columns else frame
    cats = [e.name for e in given.entries if e.kind in (CATEGORICAL, ORDERED) and e.name in X.columns]
    nums = [e.name for e in given.entries if e.kind == NUMERIC and e.name in X.columns]
    typed = set(categorical_columns(X)) - set(nums) | set(cats)  # the engine's column typing, then the declared
    items, entries = [], {}
    for name in map(str, X.columns):
        categorical = name in typed
        declared = given.get(name)
        entry = declared or FeatureEntry(name)
        if declared is None or declared.kind is None:
            entry = replace(entry, kind=CATEGORICAL if categorical else NUMERIC)
        if not categorical and not (declared is not None and declared.codes):
            labels = dict(declared.labels) if declared is not None else {}
            asked = labelled_values(declared)
            codes, why = candidate_codes(X[name])
            if asked:
                items.append(Suggestion(name, "codes", asked, code_question(name, asked, labels)))
                codes = sorted(set(codes) | set(asked))
            elif codes:
                items.append(Suggestion(name, "codes", codes, f"{why}. Treat them as special codes (categories "
                                        "beside the number line)? Then advice never moves a value into or out of "
                                        "one"))
            if codes:
                meaning = {value_key(k): lab for k, lab in labels.items()}
                entry = replace(entry, labels=tuple((k, lab) for k, lab in entry.labels
                                                    if value_key(k) not in {value_key(c) for c in codes}),
                                codes=tuple((c, meaning.get(value_key(c))) for c in codes))
        entries[name] = entry
    merged = DataDictionary(tuple(entries.values()))
    actions = suggest_constraints(X, merged.value_labels, merged.titles)
    settled = given.declared
    for name, s in actions.items():
        if name in settled:
            continue
        entry = entries[name]
        if s.get("history"):
            items.append(Suggestion(name, "history", True, s["reason"]))
            entry = replace(entry, history=True)
        else:
            items.append(Suggestion(name, "actionability", s["constraint"], s["reason"]))
            entry = replace(entry, actionability=s["constraint"] if entry.kind != CATEGORICAL or s["constraint"] in (
                IMMUTABLE, "free") else IMMUTABLE)
        entries[name] = entry
    return Suggestions(DataDictionary(tuple(entries.values()), class_names=given.class_names), tuple(items))
