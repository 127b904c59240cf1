"""The one sentence a board reads first (:func:`summary_sentence`): from the per-person verified frame
(``TCREx.counterfactuals(X, model=...)``), what the model needs from people -- the most common verified change(s),
who it serves (the share of people needing recourse who get a change the model confirms) and how hard it is (the
median number of changes). The Overview's first line, the report's first paragraph (``id="summary"``) and
``tcrex report`` all print this function's text, so the three say the same.

Features are named through :func:`tcrex.text.feature_text` with the ``titles`` given (``{column: title}``, from a
data dictionary), values through :func:`tcrex.text.value_text` with ``labels`` (``{column: {value: label}}``).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..text import feature_text, pluralise, value_text
from ..vocabulary import is_verified, recourse_outcome

__all__ = ["summary_sentence", "verified_changes", "VerifiedChange", "TOP_CHANGES"]

#: Most changes the sentence names.
TOP_CHANGES = 2


@dataclass(frozen=True)
class VerifiedChange:
    """One kind of verified change: a feature moved one way (``direction`` "lower", "raise", or "change" with the
    new value ``to`` for a categorical feature), and how many people's verified point makes it."""

    feature: str
    direction: str
    to: object
    people: int

    def phrase(self, titles=None, labels=None) -> str:
        name = feature_text(self.feature, (titles or {}).get(self.feature))
        if self.direction == "change" and self.to is None:
            return f"changing {name}"
        if self.direction == "change":
            to = value_text(self.to, (labels or {}).get(self.feature))
            return f"changing {name} to {to}"
        return f"{'lowering' if self.direction == 'lower' else 'raising'} {name}"


def _numeric(a: pd.Series, b: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b) \
        and not isinstance(a.dtype, pd.CategoricalDtype)


def verified_changes(counterfactuals: pd.DataFrame, X: pd.DataFrame | None = None) -> list:
    """Every verified change, most common first (:class:`VerifiedChange`; ties by feature name). Without ``X``
    (the people's own values, indexed like ``counterfactuals``) a change has no direction ("change", ``to`` the
    most common new value)."""
    verified = counterfactuals.loc[is_verified(counterfactuals)]
    counts: Counter = Counter()
    for feature in sorted({f for changed in verified["changed"] for f in changed}):
        rows = verified[[feature in changed for changed in verified["changed"]]]
        new = rows[feature]
        if X is not None and feature in X.columns and _numeric(new, X[feature]):
            old = pd.to_numeric(X.loc[rows.index, feature], errors="coerce").to_numpy(dtype=float)
            up = pd.to_numeric(new, errors="coerce").to_numpy(dtype=float) > old
            counts[(feature, "raise", None)] += int(up.sum())
            counts[(feature, "lower", None)] += int((~up).sum())
        elif _numeric(new, new):  # a number without the person's own value: no direction, no value to name
            counts[(feature, "change", None)] += len(rows)
        else:
            for value, n in new.astype(object).value_counts().items():
                counts[(feature, "change", value)] += int(n)
    ordered = sorted(((k, n) for k, n in counts.items() if n), key=lambda kv: (-kv[1], kv[0][0], kv[0][1],
                                                                             str(kv[0][2])))
    return [VerifiedChange(f, d, to, n) for (f, d, to), n in ordered]


def summary_sentence(counterfactuals: pd.DataFrame, X: pd.DataFrame | None = None, *,
                     outcome: str = "the favourable outcome", titles: dict | None = None,
                     labels: dict | None = None, total_rows: int | None = None) -> str:
    """What the model needs from people, in one sentence, from ``counterfactuals`` (the verified frame of
    ``TCREx.counterfactuals(X, model=...)``; ``X`` the same people's values, for the direction of each change).

    ``outcome``: the favourable outcome in words ("approved"); ``titles`` ``{column: title}`` and ``labels``
    ``{column: {value: label}}`` name features and values (a data dictionary); ``total_rows``: the people the
    frame was sampled from, when it is a sample.

    >>> summary_sentence(cf, X, outcome="no default")  # doctest: +SKIP
    'Of 3,000 people, 689 (23%) need a change to reach no default; the model confirms a change for 534 of them (78%), most
    often lowering status_1 (412 people) or raising credit_limit (58 people); half of them need at most 1 change.'
    """
    outcomes = recourse_outcome(counterfactuals)
    n = len(counterfactuals)
    need = np.asarray(outcomes.notna(), dtype=bool)
    n_need = int(need.sum())
    sample = (f" (estimated on a uniform sample of {n:,} of {total_rows:,} people)"
              if total_rows is not None and total_rows > n else "")
    if not n_need:
        return f"All {n:,} people already get {outcome}: no one needs a change{sample}."
    verified = counterfactuals.loc[is_verified(counterfactuals)]
    n_ver = len(verified)
    head = f"Of {n:,} people{sample}, {n_need:,} ({n_need / n:.0%}) need a change to reach {outcome}"
    if not n_ver:
        return head + "; the model confirms no change for any of them."
    top = verified_changes(counterfactuals, X)[:TOP_CHANGES]
    said = " or ".join(f"{c.phrase(titles, labels)} ({pluralise(c.people, 'person', 'people')})" for c in top)
    # at least half need at most the median's ceiling (a median of 1.5: half change one feature)
    most = int(np.ceil(float(verified["n_changes"].astype(int).median())))
    how = f"half of them need at most {pluralise(most, 'change')}"
    return (head + f"; the model confirms a change for {n_ver:,} of them ({n_ver / n_need:.0%})"
            + (f", most often {said}" if said else "") + f"; {how}.")
